"""A summary names its parties first, and a summary question may name its document instead of
choosing it as the scope ("Summarize the Gamma license agreement"): only among the documents in
scope the reader may see."""

from __future__ import annotations

import pytest

from rag.pipeline.run import run_query
from rag.retrieval.service import Reader
from tests.rag.review.contracts import make_confidential
from tests.rag.review.test_matter_lists import matter  # noqa: F401 (the fixture)


@pytest.mark.django_db
def test_a_summary_names_the_parties_from_the_preamble_first(tenant, matter):  # noqa: F811
    _, documents = matter
    alpha = documents["Alpha Distribution Agreement"]
    answer = run_query(
        tenant=tenant, question="Summarize this agreement.", filters={"document_ids": [alpha.pk]}
    ).result["answer"]
    lines = answer.splitlines()
    assert lines[0] == "Key terms of Alpha Distribution Agreement:"
    assert lines[1] == (
        '- Parties: Alpha Foods and Northwind [1]. "DISTRIBUTION AGREEMENT between Alpha Foods Inc and '
        'Northwind LLC." [1]'
    )


@pytest.mark.django_db
def test_a_summary_of_a_document_named_in_the_question(tenant, matter):  # noqa: F811
    case, documents = matter
    result = run_query(
        tenant=tenant, question="Summarize the Gamma license agreement.", filters={"case_ids": [case.pk]}
    ).result
    assert result["answer"].startswith("Key terms of Gamma License Agreement:")
    assert {c["document_id"] for c in result["citations"]} == {documents["Gamma License Agreement"].pk}
    assert (
        '- Parties: Gamma Software and Fabrikam [1]. "LICENSE AGREEMENT between Gamma Software Inc and '
        'Fabrikam Corp." [1]'
    ) in result["answer"]


@pytest.mark.django_db
def test_a_named_document_the_reader_may_not_read_is_not_summarized(tenant, matter):  # noqa: F811
    case, documents = matter
    gamma = documents["Gamma License Agreement"]
    make_confidential(gamma)
    result = run_query(
        tenant=tenant,
        question="Summarize the Gamma license agreement.",
        filters={"case_ids": [case.pk]},
        reader=Reader(),
        use_cache=False,
    ).result
    assert gamma.pk not in {c["document_id"] for c in result["citations"]}
    assert "Gamma" not in str(result["answer"]) and "Fabrikam" not in str(result["answer"])


@pytest.mark.django_db
def test_another_firms_document_named_in_a_summary_question_is_never_summarized_nor_swapped(
    tenant,
    other_tenant,
    matter,  # noqa: F811
):
    from rag import services as rag_services
    from tests.rag.review.contracts import ingest
    from tests.rag.review.test_matter_lists import CONTRACTS

    outside = rag_services.case_create(tenant=other_tenant, name="Omega diligence")
    theirs = ingest(
        other_tenant, outside, "Omega Distribution Agreement", CONTRACTS["Alpha Distribution Agreement"]
    )
    result = run_query(
        tenant=tenant, question="Summarize the Omega distribution agreement.", use_cache=False
    ).result
    # Neither their Omega agreement nor this firm's only distribution agreement (Alpha) is summarized.
    assert theirs.pk not in {c["document_id"] for c in result["citations"]}
    assert "Omega" not in str(result["answer"]) and "Key terms of" not in str(result["answer"])
