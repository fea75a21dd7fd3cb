"""Edit a document's descriptive fields after upload: the one write path of the REST API's
`PATCH documents/<id>` and the firm admin console (/manage/).

Search reads copies of some of these fields on every chunk (filters inside the SQL) and cached
answers cite the title and were filtered on the rest, so a change is copied to the chunks and bumps
the tenant's index version in the same transaction: no search or cached answer sees a half-edit.
"""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from ragsite.exceptions import Conflict, PermissionDenied
from tenants.models import Tenant

from .. import selectors
from ..models import Chunk, Document, Sensitivity, TitleSource
from .service import bump_index_version

DOCUMENT_UPDATABLE_FIELDS = (
    "title",
    "case_id",
    "source_type",
    "doc_type",
    "jurisdiction",
    "document_date",
    "sensitivity",
    "metadata",
)
# Copied onto every chunk at ingestion (rag.ingest.service) for filtering inside the search SQL.
CHUNK_COPIED_FIELDS = ("case_id", "source_type", "doc_type", "jurisdiction", "document_date", "sensitivity")


def document_update(*, tenant: Tenant, document_id, data: dict, reads_all_confidential: bool) -> Document:
    """Change the fields present in `data` (keys of DOCUMENT_UPDATABLE_FIELDS; `case_id` files the
    document under another of the tenant's cases) and return the document.

    A title given here is final (reingestion keeps it). Bad values raise Django's ValidationError
    and change nothing; a case of another tenant is NotFound; a case already holding the same file
    is a Conflict. Only a caller who reads every confidential document (`reads_all_confidential`:
    admins and owners) may change a confidential document's sensitivity, as lowering it would let
    the caller read it (PermissionDenied otherwise).
    """
    unknown = set(data) - set(DOCUMENT_UPDATABLE_FIELDS)
    if unknown:
        raise ValueError(f"not updatable: {sorted(unknown)}")
    with transaction.atomic():
        document = selectors.document_get(tenant=tenant, document_id=document_id)
        document = Document.objects.select_for_update().defer("text").get(pk=document.pk)
        _access_check(document, data, reads_all_confidential=reads_all_confidential)
        if "case_id" in data:
            data = {**data, "case_id": _target_case(tenant, document, data["case_id"]).pk}
        changed = [name for name, value in data.items() if getattr(document, name) != value]
        if not changed:
            return document
        for name in changed:
            setattr(document, name, data[name])
        document.full_clean(exclude=["text", "file"], validate_constraints=False)
        if "title" in changed:
            document.title_source = TitleSource.USER
            changed.append("title_source")
        document.updated_at = timezone.now()
        document.save(update_fields=[*changed, "updated_at"])
        copied = {name: getattr(document, name) for name in CHUNK_COPIED_FIELDS if name in changed}
        if copied:
            Chunk.objects.filter(tenant=tenant, document=document).update(**copied)
        bump_index_version(tenant=tenant)
    return document


def _access_check(document: Document, data: dict, *, reads_all_confidential: bool) -> None:
    lowering = (
        document.sensitivity == Sensitivity.CONFIDENTIAL
        and data.get("sensitivity", document.sensitivity) != Sensitivity.CONFIDENTIAL
    )
    if lowering and not reads_all_confidential:
        raise PermissionDenied(
            "Only an admin or owner of the firm may change the sensitivity of a confidential document."
        )


def _target_case(tenant: Tenant, document: Document, case_id):
    case = selectors.case_get(tenant=tenant, case_id=case_id)
    duplicate = selectors.document_find_duplicate(tenant=tenant, case=case, sha256=document.sha256)
    if duplicate is not None and duplicate.pk != document.pk:
        raise Conflict(
            f'The case "{case.name}" already holds this file (as "{duplicate.title}").',
            details={"case_id": ["That case already holds the same file."]},
        )
    return case
