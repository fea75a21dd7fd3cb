"""Hostile files of issue #33, built byte by byte: a PDF whose pages all draw one compressed
stream of text (11 KB that extract to 80 MB) and e-mails of thousands of nested or empty parts."""

from __future__ import annotations

import io
import zlib

_LINE = b"(Lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod) Tj T*\n"


def pdf_bomb(*, pages: int = 40, stream_bytes: int = 2_000_000) -> bytes:
    """A valid PDF of `pages` pages, every one drawing the same FlateDecode content stream of about
    `stream_bytes` bytes of text operators (each page extracts to ~0.9 x stream_bytes characters)."""
    content = b"BT /F1 1 Tf 1 TL 0 0 Td\n" + _LINE * (stream_bytes // len(_LINE)) + b"ET\n"
    stream = zlib.compress(content, 9)
    kids = " ".join(f"{5 + page} 0 R" for page in range(pages))
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Kids [{kids}] /Count {pages} >>".encode(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        f"<< /Length {len(stream)} /Filter /FlateDecode >>\nstream\n".encode() + stream + b"\nendstream",
    ]
    page = (
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
        b"/Resources << /Font << /F1 3 0 R >> >> /Contents 4 0 R >>"
    )
    objects += [page] * pages
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(f"{number} 0 obj\n".encode() + body + b"\nendobj\n")
    xref = out.tell()
    out.write(f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode())
    out.writelines(f"{offset:010d} 00000 n \n".encode() for offset in offsets)
    out.write(f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode())
    return out.getvalue()


_HEADERS = b"From: Mallory <m@evil.example>\r\nTo: Bob <bob@acme.example>\r\nMIME-Version: 1.0\r\n"


def nested_email(levels: int = 3_000) -> bytes:
    """An e-mail of `levels` multiparts each inside the last (~216 KB for 3,000): RecursionError in
    the standard library's parser."""
    opening = b"".join(
        f'Content-Type: multipart/mixed; boundary="b{n}"\r\n\r\n--b{n}\r\n'.encode() for n in range(levels)
    )
    closing = b"".join(f"--b{n}--\r\n".encode() for n in reversed(range(levels)))
    return _HEADERS + b"Subject: deep\r\n" + opening + b"Content-Type: text/plain\r\n\r\nhi\r\n" + closing


def empty_parts_email(size: int = 7_200_000) -> bytes:
    """An e-mail of about `size` bytes made of empty MIME parts (~1 million for 7.2 MB)."""
    head = _HEADERS + b'Subject: empty\r\nContent-Type: multipart/mixed; boundary="z"\r\n\r\n'
    part = b"--z\r\n\r\n"
    return head + part * ((size - len(head)) // len(part)) + b"--z--\r\n"
