"""E-mail (.eml, RFC 822 / MIME): the headers that matter and the body as text, plus its attachments.

The text is "From / To / Cc / Date / Subject" lines, a blank line, the body (text/plain preferred,
else HTML made plain by `html_text`), and a list of the attachments saying which are not indexed
and why. Attachments of a supported type are stored as documents of their own by the worker that
ingests the e-mail (`rag.ingest.attachments`); `email_attachments` decides which, here, so the
documents and the text always agree. Nothing is parsed before `email_scan` has bounded the MIME
structure (RAG_EMAIL_MAX_PARTS, RAG_EMAIL_MAX_NESTING). Everything is a pure function of the bytes,
those settings and the e-mail's nesting depth.
"""

from __future__ import annotations

import mimetypes
import re
from dataclasses import dataclass
from datetime import date
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser

from django.conf import settings

from rag.ingest.extract import detect
from rag.ingest.extract.document import (
    EML_MIME,
    ExtractedDocument,
    SectionSpan,
    has_visible_text,
    single_page,
)
from rag.ingest.extract.email_scan import header_block, mime_check
from rag.ingest.extract.html_text import html_to_text
from rag.ingest.extract.txt import decode_text
from ragsite.exceptions import ApplicationError, EmailTooComplex, EmptyFile, NoExtractableText

_SHOWN_HEADERS = ("From", "To", "Cc", "Date", "Subject")
_UNSAFE_NAME = re.compile(r'[\x00-\x1f\x7f/\\:*?"<>|]+')


@dataclass(frozen=True)
class EmailAttachment:
    """One attachment: indexed as its own document when `kind` is set, else `skipped` says why."""

    filename: str
    content: bytes
    kind: str | None = None
    skipped: str = ""

    def listing(self) -> str:
        """Its line in the e-mail's text."""
        if self.kind:
            return f"- {self.filename}"
        return f"- {self.filename} (not indexed: {self.skipped})"


def mime_limits_check(data: bytes) -> None:
    """EmailTooComplex (422) when the e-mail has more MIME parts than RAG_EMAIL_MAX_PARTS or more
    nesting than RAG_EMAIL_MAX_NESTING (`email_scan.mime_check`: cheap, no parsing)."""
    mime_check(data, max_parts=settings.RAG_EMAIL_MAX_PARTS, max_nesting=settings.RAG_EMAIL_MAX_NESTING)


def parse(data: bytes) -> EmailMessage:
    """The message, once its shape is within the limits (`mime_limits_check`); the standard
    library's parser accepts anything, recording defects. A structure the scan misjudged that
    still recurses too deep is EmailTooComplex too."""
    mime_limits_check(data)
    try:
        return BytesParser(policy=policy.default).parsebytes(data)
    except RecursionError as exc:
        raise EmailTooComplex() from exc


def parse_headers(data: bytes) -> EmailMessage:
    """The message's top-level headers only, the body left unparsed: cheap whatever its size."""
    _, body_start = header_block(data, 0)
    return BytesParser(policy=policy.default).parsebytes(data[:body_start], headersonly=True)


def _header(message: EmailMessage, name: str) -> str:
    try:
        value = str(message.get(name) or "")
    except (ValueError, IndexError, TypeError):  # too malformed to parse: shown as written
        value = next((raw for key, raw in message.raw_items() if key.lower() == name.lower()), "")
    # One line of printable characters: a NUL or control character has no place in a title.
    return " ".join("".join(ch if ch.isprintable() else " " for ch in value).split())


def sent_on(message: EmailMessage) -> date | None:
    """The Date header's calendar day as the sender wrote it, or None when missing or unreadable."""
    try:
        header = message.get("Date")
        moment = getattr(header, "datetime", None)
    except (ValueError, IndexError, TypeError, OverflowError):
        return None
    return moment.date() if moment is not None else None


def _sender(message: EmailMessage) -> str:
    try:
        addresses = getattr(message.get("From"), "addresses", ())
    except (ValueError, IndexError, TypeError):
        addresses = ()
    if addresses:
        return addresses[0].display_name or addresses[0].addr_spec
    return _header(message, "From")


def email_title(message: EmailMessage) -> str:
    """ "Subject — sender, 2025-03-04" (the parts known), or "" when none is."""
    subject, sender, day = _header(message, "Subject"), _sender(message), sent_on(message)
    tail = ", ".join(part for part in (sender, day.isoformat() if day else "") if part)
    if subject:
        return f"{subject} — {tail}" if tail else subject
    return f"E-mail from {tail}" if tail else ""


def _part_text(part: EmailMessage) -> str:
    try:
        text = part.get_content()
    except (LookupError, ValueError, AssertionError):  # unknown charset or broken encoding
        text, _ = decode_text(part.get_payload(decode=True) or b"")
    if part.get_content_subtype() == "html":
        return html_to_text(text)
    return text.replace("\r\n", "\n").replace("\x00", "\ufffd").strip()


def _is_body_text(part: EmailMessage) -> bool:
    """Text beside the body that belongs to it (mail programs split a body around inline images)."""
    return (
        part.get_content_type() in ("text/plain", "text/html")
        and part.get_content_disposition() != "attachment"
        and not part.get_filename()
    )


def _attachment_parts(message: EmailMessage) -> tuple[list[EmailMessage], list[EmailMessage]]:
    """(extra body parts, attachment parts) of the message, in order; nested multiparts are opened,
    attached e-mails are not (they are attachments)."""
    extra, attached = [], []
    pending = list(message.iter_attachments()) if message.is_multipart() else []
    while pending:
        part = pending.pop(0)
        if part.get_content_maintype() == "multipart":
            pending[:0] = list(part.iter_parts())
        elif _is_body_text(part):
            extra.append(part)
        else:
            attached.append(part)
    return extra, attached


def _body(message: EmailMessage, extra: list[EmailMessage]) -> str:
    body = message.get_body(preferencelist=("plain", "html"))
    if body is None and not message.is_multipart() and message.get_content_maintype() == "text":
        body = message
    parts = ([body] if body is not None else []) + extra
    return "\n\n".join(text for text in map(_part_text, parts) if text)


def _safe_name(name: str) -> str:
    return _UNSAFE_NAME.sub(" ", name).strip(" .")[:200]


def _attachment_name(part: EmailMessage, number: int) -> str:
    name = _safe_name(part.get_filename() or "")
    if name:
        return name
    if part.get_content_type() == "message/rfc822":
        inner = part.get_payload(0) if part.is_multipart() else None
        subject = _safe_name(_header(inner, "Subject")) if inner is not None else ""
        return f"{subject or f'attachment {number}'}.eml"
    extension = mimetypes.guess_extension(part.get_content_type()) or ".bin"
    return f"attachment {number}{extension}"


def _attachment_bytes(part: EmailMessage) -> bytes:
    if part.get_content_type() == "message/rfc822" and part.is_multipart():
        return part.get_payload(0).as_bytes(policy=policy.default)
    return part.get_payload(decode=True) or b""


def _judge(filename: str, content: bytes) -> tuple[str | None, str]:
    """(kind, why not) of one attachment, by the same rules as an upload of its own."""
    try:
        kind, _ = detect.detect_kind(content, filename)
    except EmptyFile:
        return None, "empty"
    except ApplicationError:
        return None, "unsupported type"
    if kind == "eml":
        try:
            mime_limits_check(content)
        except EmailTooComplex:
            return None, "too many or too deeply nested parts"
    return kind, ""


def email_attachments(message: EmailMessage, *, depth: int = 0) -> list[EmailAttachment]:
    """The attachments of `message`, an e-mail nested `depth` levels deep (0: uploaded itself).

    Of a supported type ones become documents (`kind` set), at most RAG_EMAIL_MAX_ATTACHMENTS per
    e-mail and none below RAG_EMAIL_MAX_DEPTH levels of nesting; the others say why not.
    """
    limit, max_depth = settings.RAG_EMAIL_MAX_ATTACHMENTS, settings.RAG_EMAIL_MAX_DEPTH
    attachments, indexed = [], 0
    for number, part in enumerate(_attachment_parts(message)[1], start=1):
        filename = _attachment_name(part, number)
        try:
            content = _attachment_bytes(part)
        except (ValueError, LookupError, TypeError, AttributeError, UnicodeError):
            attachments.append(EmailAttachment(filename, b"", None, "unreadable"))
            continue
        # Past a limit an attachment is not even judged: an e-mail of ten thousand tiny files
        # costs a list, not ten thousand type checks.
        if depth + 1 > max_depth:
            kind, skipped = None, f"nested too deep (limit {max_depth})"
        elif indexed >= limit:
            kind, skipped = None, f"more than {limit} attachments in one e-mail"
        else:
            kind, skipped = _judge(filename, content)
        indexed += kind is not None
        attachments.append(EmailAttachment(filename, content, kind, skipped))
    return attachments


def extract_email(data: bytes, *, depth: int = 0) -> ExtractedDocument:
    """The e-mail's text (shown headers, body, attachments list), titled `email_title`;
    EmailTooComplex before parsing one over the MIME limits (`parse`)."""
    return extract_email_message(parse(data), depth=depth)


def extract_email_message(message: EmailMessage, *, depth: int = 0) -> ExtractedDocument:
    """`extract_email` of a message already parsed."""
    headers = [f"{name}: {value}" for name in _SHOWN_HEADERS if (value := _header(message, name))]
    blocks = ["\n".join(headers), _body(message, _attachment_parts(message)[0])]
    attachments = email_attachments(message, depth=depth)
    if attachments:
        blocks.append("\n".join(["Attachments:", *(a.listing() for a in attachments)]))
    text = "\n\n".join(block for block in blocks if block)
    if not has_visible_text(text):
        raise NoExtractableText("No extractable text: the e-mail has no headers, body or attachments.")
    title = email_title(message)
    return ExtractedDocument(
        text=text,
        kind="eml",
        mime_type=EML_MIME,
        pages=single_page(text),
        sections=[SectionSpan(title=title, start=0)] if title else [],
        title=title,
    )
