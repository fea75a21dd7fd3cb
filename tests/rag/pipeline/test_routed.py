"""The question is routed once per request: the matter review, the each-candidate stage and search
read the same routing (rag.pipeline.routed)."""

from __future__ import annotations

import pytest

from rag.pipeline import routed
from rag.pipeline.run import run_query
from rag.retrieval import service
from tests.rag.sponsorships import CANO_TITLE, ingest_sponsorships


@pytest.mark.django_db
def test_a_named_question_is_routed_once_and_answered_from_its_document(
    tenant, case, ingest_text, monkeypatch
):
    documents = ingest_sponsorships(case, ingest_text)
    calls = []
    for module in (routed, service):
        original = module.route
        monkeypatch.setattr(
            module, "route", lambda *a, _f=original, **k: calls.append(k["query"]) or _f(*a, **k)
        )
    question = "Can Boyd assign the Cano sponsorship without consent?"
    result = run_query(
        tenant=tenant, question=question, filters={"case_ids": [case.pk]}, use_cache=False
    ).result
    assert calls == [question]
    assert result["answer"].startswith(
        f"No: the agreement has a restriction on assignment. {CANO_TITLE} states:"
    )
    assert {c["document_id"] for c in result["citations"]} == {documents["cano"].pk}
