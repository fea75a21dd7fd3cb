"""E-mail attachments as documents of their own, split off when the e-mail is uploaded.

Why at upload rather than in the ingestion job: the request returns the e-mail and every
attachment document at once, each with its own status, progress and error to follow; the tenant's
quotas are checked for all of them before anything is stored (all or none, like any upload); and
the attachments are created in the caller's tenant and case by the caller's request, never by a
background job working out whose they are. Which attachments become documents is decided by
`extract.email.email_attachments`, the same rule the e-mail's text lists them by.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import date

from django.conf import settings

from .. import selectors
from ..models import DocType, Document
from .extract.email import email_attachments, email_title, parse, sent_on


def email_depth(document: Document) -> int:
    """How many e-mails `document` is nested in (0: uploaded itself), counted up to one past
    RAG_EMAIL_MAX_DEPTH (deeper makes no difference)."""
    depth, parent_id = 0, document.parent_id
    while parent_id is not None and depth <= settings.RAG_EMAIL_MAX_DEPTH:
        depth += 1
        parent_id = selectors.document_parent_id(tenant=document.tenant, document_id=parent_id)
    return depth


def planned(content: bytes, *, depth: int = 0) -> tuple[int, int]:
    """(documents, bytes) the attachments of the e-mail `content` would add, nested ones included:
    what the tenant's quotas are checked against before the e-mail is stored (an upper bound, as
    duplicates count too)."""
    documents = size = 0
    for attachment in email_attachments(parse(content), depth=depth):
        if attachment.kind is None:
            continue
        documents, size = documents + 1, size + len(attachment.content)
        if attachment.kind == "eml":
            nested = planned(attachment.content, depth=depth + 1)
            documents, size = documents + nested[0], size + nested[1]
    return documents, size


def attachments_upload(*, email: Document, content: bytes, fields, upload: Callable) -> list:
    """Upload each indexable attachment of the stored e-mail `email` (its bytes: `content`) with
    `upload` (`service.document_upload`, which recurses into attached e-mails) as a document of
    the same case with `parent` = the e-mail; returns their UploadResults.

    An attachment inherits the e-mail's fields except its title, type and date, which are the
    attachment's own (a contract sent by e-mail is not correspondence). One whose bytes are already
    in the case is that document, left where it is (`duplicate=True`).
    """
    own = replace(fields, title="", doc_type=DocType.OTHER, document_date=None)
    return [
        upload(
            tenant=email.tenant,
            case=email.case,
            filename=attachment.filename,
            content=attachment.content,
            uploaded_by=email.uploaded_by,
            fields=own,
            parent=email,
        )
        for attachment in email_attachments(parse(content), depth=email_depth(email))
        if attachment.kind is not None
    ]


def email_described(content: bytes) -> tuple[str, date | None]:
    """(title, date) an uploaded e-mail states: its subject, sender and day sent, and that day."""
    message = parse(content)
    return email_title(message), sent_on(message)


def stored_files(results) -> list[str]:
    """Names of the files stored by these UploadResults and their attachments' (to delete on a
    rollback)."""
    everything = (each for result in results for each in result.with_attachments())
    return [each.document.file.name for each in everything if each.created]
