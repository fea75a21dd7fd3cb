"""E-mails built for tests with the standard library, as a mail program would save them (.eml)."""

from __future__ import annotations

from datetime import UTC, datetime
from email.message import EmailMessage
from email.utils import format_datetime

SENT = datetime(2025, 3, 4, 9, 30, tzinfo=UTC)


def message(
    *,
    subject: str | None = "Draft share purchase agreement",
    sender: str = "Alice Smith <alice@acme.example>",
    to: str = "Bob Jones <bob@globex.example>",
    cc: str | None = None,
    sent: datetime | None = SENT,
    plain: str | None = "Bob,\n\nPlease find the draft attached.\n\nAlice",
    html: str | None = None,
) -> EmailMessage:
    """A message with a plain body, an HTML body, or both (multipart/alternative)."""
    msg = EmailMessage()
    msg["From"] = sender
    msg["To"] = to
    if cc:
        msg["Cc"] = cc
    if subject is not None:
        msg["Subject"] = subject
    if sent is not None:
        msg["Date"] = format_datetime(sent)
    msg["Message-ID"] = "<1@acme.example>"
    if plain is not None:
        msg.set_content(plain)
        if html is not None:
            msg.add_alternative(html, subtype="html")
    elif html is not None:
        msg.set_content(html, subtype="html")
    return msg


def attach(msg: EmailMessage, filename: str, content: bytes, mime: str = "application/octet-stream") -> None:
    maintype, subtype = mime.split("/")
    msg.add_attachment(content, maintype=maintype, subtype=subtype, filename=filename)


def attach_message(msg: EmailMessage, inner: EmailMessage) -> None:
    """Attach `inner` as message/rfc822 (a forwarded e-mail)."""
    msg.add_attachment(inner)


def eml(msg: EmailMessage) -> bytes:
    return msg.as_bytes()
