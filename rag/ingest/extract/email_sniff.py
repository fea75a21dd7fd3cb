"""Tell an e-mail (RFC 822 / MIME, .eml) from other text by its opening header block, and an
Outlook .msg from other old-style Office files."""

from __future__ import annotations

import re

# "Name: value" where the name is printable ASCII without spaces or colons (RFC 5322 field-name).
_FIELD = re.compile(rb"^([!-9;-~]+):")
# Headers every mail program writes when it saves a message; a typed memo ("To: / From: / Re:")
# has none of them, so a text file without the .eml extension stays a text file.
_TRANSPORT = frozenset(
    {b"message-id", b"mime-version", b"received", b"return-path", b"content-type", b"x-mailer"}
)
_ADDRESS = frozenset({b"from", b"to", b"cc", b"subject", b"date", b"sender", b"reply-to"})
_SNIFF_BYTES = 64 * 1024


def _header_names(data: bytes) -> list[bytes] | None:
    """Lower-cased names of the opening header block, or None when the file does not open with one
    (a non-header line before the blank line that ends it, or no header at all)."""
    names: list[bytes] = []
    lines = data[:_SNIFF_BYTES].splitlines()
    if lines and lines[0].startswith(b"From "):
        lines = lines[1:]  # the envelope line of a message saved from an mbox
    for line in lines:
        if not line.strip():
            return names or None  # the blank line between headers and body
        if line[:1] in (b" ", b"\t"):
            if not names:
                return None
            continue  # a folded continuation of the header above
        match = _FIELD.match(line)
        if match is None:
            return None
        names.append(match.group(1).lower())
    return names or None  # headers only, no body


def looks_like_email(data: bytes, *, named_eml: bool = False) -> bool:
    """True when `data` opens with an e-mail's header block.

    A file named .eml needs one address header (From, To, Subject, ...); any other needs a From or
    Subject and a header only a mail program writes (Message-ID, MIME-Version, Received, ...).
    """
    names = _header_names(data.lstrip(b"\r\n"))
    if not names:
        return False
    present = set(names)
    if named_eml:
        return bool(present & (_ADDRESS | _TRANSPORT))
    return bool(present & {b"from", b"subject"}) and bool(present & _TRANSPORT)


# Outlook stores a message's properties in OLE streams named "__substg1.0_<tag>" (UTF-16 names in
# the compound file's directory).
_MSG_STREAM = "__substg1.0_".encode("utf-16-le")


def is_outlook_message(data: bytes) -> bool:
    """True when `data`, an OLE compound file, holds Outlook message properties (a .msg)."""
    return _MSG_STREAM in data[: 4 * 1024 * 1024]
