"""E-mail attachments as documents of their own, split off by the worker that ingests the e-mail.

Why in the worker rather than in the upload request: finding the attachments means parsing the
whole message, which for a hostile e-mail (thousands of parts, deep nesting) is seconds of CPU or a
RecursionError; the upload request only runs a cheap bounded scan (`extract.email_scan`) and reads
the top-level headers. The worker splits the attachments when it first indexes the e-mail, in the
same transaction that makes the e-mail ready, so an e-mail that fails leaves no attachment
documents; each attachment is a queued document of the e-mail's tenant and case (`parent` = the
e-mail) and is ingested in its own turn. Which attachments become documents is decided by
`extract.email.email_attachments`, the same rule the e-mail's text lists them by.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import date
from email.message import EmailMessage

from django.conf import settings

from ragsite.exceptions import ApplicationError

from .. import selectors
from ..models import Document, DocumentStatus
from . import limits
from .extract.document import EML_MIME
from .extract.email import EmailAttachment, email_attachments, email_title, parse_headers, sent_on

logger = logging.getLogger(__name__)


# Where an e-mail's attachments are (`split_state`): the worker has yet to split them off, it has
# (the e-mail's attachment documents are all there is), or the e-mail failed before it could.
PENDING, EXTRACTED, FAILED = "pending", "extracted", "failed"
SPLIT_STATES = [
    (PENDING, "Extracted in the background when the e-mail is indexed"),
    (EXTRACTED, "Extracted: its attachment documents are listed"),
    (FAILED, "Not extracted: the e-mail's ingestion failed first"),
]


def split_state(document: Document) -> str | None:
    """Whether the worker has split off the attachments of `document`, an uploaded e-mail (None
    for any other document). An upload answers before the worker parses the e-mail, so its
    attachments are PENDING until the e-mail is first indexed (EXTRACTED from then on, a reindex
    included), or FAILED if its ingestion failed first (nothing stored; retried as it is)."""
    if document.mime_type != EML_MIME:
        return None
    if document.indexed_at is not None:
        return EXTRACTED
    return FAILED if document.status == DocumentStatus.FAILED else PENDING


def email_depth(document: Document) -> int:
    """How many e-mails `document` is nested in (0: uploaded itself), counted up to one past
    RAG_EMAIL_MAX_DEPTH (deeper makes no difference)."""
    depth, parent_id = 0, document.parent_id
    while parent_id is not None and depth <= settings.RAG_EMAIL_MAX_DEPTH:
        depth += 1
        parent_id = selectors.document_parent_id(tenant=document.tenant, document_id=parent_id)
    return depth


def to_split(email: Document, message: EmailMessage) -> list[EmailAttachment]:
    """The attachments of the e-mail document `email` (parsed: `message`) that become documents.
    None when it was indexed before (a reindex): they were split then, and one its users deleted
    stays deleted."""
    if email.indexed_at is not None:
        return []
    indexable = [a for a in email_attachments(message, depth=email_depth(email)) if a.kind is not None]
    # All or none, like an upload: checked before the e-mail is embedded (QuotaExceeded, 413).
    if indexable:
        limits.storage_check(
            tenant=email.tenant,
            new_documents=len(indexable),
            new_bytes=sum(len(a.content) for a in indexable),
        )
    return indexable


def attachments_upload(*, email: Document, found: list[EmailAttachment], upload: Callable, fields) -> list:
    """Upload each attachment in `found` (from `to_split`) with `upload` (`service.document_upload`)
    as a document of the e-mail's case with `parent` = the e-mail; returns their UploadResults.

    An attachment takes `fields` (the e-mail's, but its own title and date, and the type chosen
    for the upload: a contract sent by e-mail is not correspondence) and the e-mail's
    confidential readers. One whose bytes are already in the case is that document, left where it
    is (`duplicate=True`).
    """
    readers = list(email.confidential_readers.all())
    results = []
    for attachment in found:
        try:
            result = upload(
                tenant=email.tenant,
                case=email.case,
                filename=attachment.filename,
                content=attachment.content,
                uploaded_by=email.uploaded_by,
                fields=fields,
                parent=email,
            )
        except ApplicationError as exc:  # e.g. a scan over the OCR bounds: the e-mail is indexed anyway
            extra = {"document_id": email.pk, "error_type": exc.error_type}
            logger.warning("attachment not stored", extra=extra)
            continue
        results.append(result)
        if result.created and readers:
            result.document.confidential_readers.add(*readers)
    return results


def email_described(content: bytes) -> tuple[str, date | None]:
    """(title, date) an uploaded e-mail states: its subject, sender and day sent, and that day.
    Reads the top-level headers only (cheap at any size; the body is parsed by the worker)."""
    message = parse_headers(content)
    return email_title(message), sent_on(message)


def stored_files(results) -> list[str]:
    """Names of the files stored by these UploadResults (to delete on a rollback)."""
    return [result.document.file.name for result in results if result.created]
