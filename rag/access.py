"""Who may see and change what, for one caller: walls hide cases, confidentiality hides text.

- A case behind an ethical wall the caller is not on, and every document in it, is "not found"
  (`Caller.hidden_cases`): the same 404 as a missing one, for reading and writing alike.
- A confidential document's text is read by admins, owners and the readers listed on it
  (`may_read`). Whoever may not read it may not rename, move, reindex or delete it either
  (`document_for_change`), nor delete the case holding it (`case_for_deletion`).
"""

from __future__ import annotations

from rag import selectors
from rag.models import Case, Document, Sensitivity
from rag.queries.caller import Caller
from rag.retrieval.service import Reader
from ragsite.exceptions import PermissionDenied


def may_read(document: Document, reader: Reader) -> bool:
    """Whether `reader` may read the text: confidential documents only by admins, owners and the
    readers listed on them (as search leaves them out for everyone else)."""
    if document.sensitivity != Sensitivity.CONFIDENTIAL or reader.reads_all_confidential:
        return True
    return reader.user_id is not None and document.confidential_readers.filter(pk=reader.user_id).exists()


def document_for_change(*, caller: Caller, document_id) -> Document:
    """The document `caller` is about to change or delete: `NotFound` when missing, another
    tenant's or walled off; `PermissionDenied` when it is confidential and they may not read it."""
    document = selectors.document_get(
        tenant=caller.tenant, document_id=document_id, hidden_cases=caller.hidden_cases
    )
    if not may_read(document, caller.reader):
        raise PermissionDenied(_UNREADABLE)
    return document


def case_for_change(*, caller: Caller, case_id) -> Case:
    """The case `caller` is about to change, or add to: `NotFound` when missing or walled off."""
    return selectors.case_get(tenant=caller.tenant, case_id=case_id, hidden_cases=caller.hidden_cases)


def case_for_deletion(*, caller: Caller, case_id) -> Case:
    """`case_for_change`, and `PermissionDenied` when the case holds a confidential document the
    caller may not read (deleting the case would delete it)."""
    case = case_for_change(caller=caller, case_id=case_id)
    reader = caller.reader
    if not reader.reads_all_confidential:
        confidential = selectors.document_list(tenant=caller.tenant, case_id=case.pk).filter(
            sensitivity=Sensitivity.CONFIDENTIAL
        )
        if reader.user_id is not None:
            confidential = confidential.exclude(confidential_readers__pk=reader.user_id)
        if confidential.exists():
            raise PermissionDenied(
                "This case holds confidential documents you may not read; an admin of the firm can delete it."
            )
    return case


_UNREADABLE = (
    "This document is confidential and you are not among its readers: only its readers and the firm's "
    "admins may rename, move, reindex or delete it."
)
