"""RAG_CHUNKING in the ingest service: the mode decides the passages, and switching it re-chunks."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.core.management.base import SystemCheckError

from rag import selectors
from rag.evaluation.runner import corpus_settings
from rag.ingest import service
from rag.ingest.structure import structure_starts
from rag.models import Document

pytestmark = pytest.mark.django_db

SECTION = (
    "{n}. {title}\n\n{n}.1 The Supplier shall deliver the goods described in the purchase order on the "
    "agreed date and at the agreed place, packed so as to arrive undamaged. {n}.2 Any delay shall be "
    "notified in writing without undue delay, stating its cause and its expected length.\n\n"
)
CONTRACT = "SUPPLY AGREEMENT\n\n" + "".join(
    SECTION.format(n=n, title=title)
    for n, title in enumerate(["DELIVERY", "PRICE", "WARRANTY", "LIABILITY", "TERM", "NOTICES"], start=1)
)


def passages(case, document_id):
    return list(selectors.chunk_list(tenant=case.tenant, document_id=document_id))


def test_adaptive_passages_start_at_sections_and_switching_re_chunks(case, upload, committed, settings):
    settings.RAG_CHUNK_SIZE, settings.RAG_CHUNK_OVERLAP = 700, 70
    document = upload(case, "supply.txt", content=CONTRACT.encode()).document
    fixed = passages(case, document.pk)
    starts = set(structure_starts(CONTRACT))
    assert not all(p.char_start in starts for p in fixed[1:])
    fixed_id = service.index_id()

    settings.RAG_CHUNKING = "adaptive"
    assert service.index_id() != fixed_id
    stale = selectors.document_list_stale(tenant=case.tenant, embedding_model=service.index_id())
    assert list(stale) == [Document.objects.get(pk=document.pk)]
    with committed():
        assert service.tenant_reindex(tenant=case.tenant, stale_only=True) == 1

    adaptive = passages(case, document.pk)
    text = Document.objects.get(pk=document.pk).text
    assert all(text[p.char_start : p.char_end] == p.text for p in adaptive)
    assert all(p.char_start in starts for p in adaptive[1:])
    assert [p.text[:2] for p in adaptive] != [p.text[:2] for p in fixed]
    assert Document.objects.get(pk=document.pk).embedding_model == service.index_id()


def test_fixed_mode_keeps_the_index_id_documents_had_before_the_setting(settings):
    settings.RAG_CHUNKING = "fixed"
    assert service.index_id().endswith(f"passages {service.PASSAGE_RULE}")


def test_the_evaluation_index_is_not_shared_between_modes(settings):
    fixed = corpus_settings()
    settings.RAG_CHUNKING = "adaptive"
    assert corpus_settings() != fixed


def test_an_unknown_mode_fails_the_system_check(settings):
    settings.RAG_CHUNKING = "semantic"
    with pytest.raises(SystemCheckError, match="RAG_CHUNKING"):
        call_command("check")
