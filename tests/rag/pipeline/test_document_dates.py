"""Dates a lawyer asks for, end to end (real database, search, cross-encoder and the extractive
provider): the agreement date comes from the preamble even when search found another clause, and a
term's end is computed from the Effective Date the preamble defines, citing both passages; a
document that never dates its start gets no computed date."""

import pytest

from rag.models import Document
from rag.pipeline.run import run_query
from rag.retrieval.service import Reader
from tenants.models import Role
from tests.rag.review.contracts import make_confidential

PREAMBLE = (
    'This Supply Agreement is made as of the 31st day of October, 2019 (the "Effective Date") by and '
    'between Alfa Aesar Corp., a Massachusetts corporation ("Alfa"), and Hydraspin LLC ("Hydraspin").'
)
TERM = (
    "This Agreement shall continue for a period of five (5) years from the Effective Date and shall "
    "renew automatically for successive two (2) year periods unless either party gives ninety (90) days "
    "written notice of non-renewal."
)
FILLER = "".join(
    f"{n}. Supply obligation {n}. Hydraspin shall deliver the Products in the quantities Alfa orders under "
    f"each purchase order {n}, packed and labelled as the specifications of Schedule {n} require.\n\n"
    for n in range(1, 9)
)
CONTRACT = f"SUPPLY AGREEMENT\n\n{PREAMBLE}\n\n{FILLER}9. Term. {TERM}\n\n10. Notices. Notices go by mail.\n"
UNDATED = CONTRACT.replace("made as of the 31st day of October, 2019", "made by and between the parties")


def ask(tenant, document: Document, question: str, **options):
    return run_query(
        tenant=tenant, question=question, filters={"document_ids": [document.pk]}, use_cache=False, **options
    )


def cited_text(document: Document, citation: dict) -> str:
    return document.text[citation["char_start"] : citation["char_end"]]


@pytest.mark.django_db
def test_the_end_of_the_term_is_computed_and_both_passages_are_cited(tenant, case, ingest_text):
    document = ingest_text(
        case, CONTRACT, filename="alfa-hydraspin-supply.txt", title="Alfa Hydraspin Supply"
    )
    # One passage retrieved (the term clause): the preamble is added by the document_dates stage.
    ctx = ask(tenant, document, "When does the initial term of the supply agreement end?", top_k=1)
    answer = ctx.result["answer"]
    assert answer.startswith("31 October 2024: 5 years from the Effective Date, 31 October 2019 [1][2].")
    cited = [cited_text(document, c) for c in ctx.result["citations"]]
    assert "five (5) years from the Effective Date" in cited[0]
    assert any("31st day of October, 2019" in text for text in cited[1:])
    assert ctx.stage_metadata["document_dates"]["added"] == 1
    assert not ctx.result["flags"]["hallucination_detected"]


@pytest.mark.django_db
def test_the_agreement_date_is_the_preambles_and_its_citation_leads(tenant, case, ingest_text):
    document = ingest_text(
        case, CONTRACT, filename="alfa-hydraspin-supply.txt", title="Alfa Hydraspin Supply"
    )
    ctx = ask(tenant, document, "When was the supply agreement signed?")
    assert ctx.result["answer"].startswith("31 October 2019 [")
    assert "31st day of October, 2019" in cited_text(document, ctx.result["citations"][0])


@pytest.mark.django_db
def test_no_date_is_computed_from_a_start_the_document_does_not_give(tenant, case, ingest_text):
    document = ingest_text(case, UNDATED, filename="undated-supply.txt", title="Undated Supply")
    # One passage retrieved (the term clause): the preamble is added by the document_dates stage.
    ctx = ask(tenant, document, "When does the initial term of the supply agreement end?", top_k=1)
    answer = ctx.result["answer"] or ""
    assert "2024" not in answer and "five (5) years" in answer  # the clause, quoted; no invented date


@pytest.mark.django_db
def test_a_model_stating_a_date_its_sources_do_not_give_is_flagged_and_not_shown_as_sure(
    tenant, case, ingest_text, fake_provider
):
    document = ingest_text(
        case, CONTRACT, filename="alfa-hydraspin-supply.txt", title="Alfa Hydraspin Supply"
    )
    fake_provider(
        {
            "answer": "The initial term of this Agreement continues five (5) years, until 30 June 2026 [1].",
            "citations": [{"id": "1", "doc_id": str(document.pk), "snippet": ""}],
            "follow_ups": [],
            "confidence": 0.97,
        }
    )
    ctx = ask(tenant, document, "When does the initial term of the supply agreement end?")
    assert ctx.verification.unstated_values == ["30 June 2026"], ctx.first_verification
    assert ctx.result["flags"]["needs_verification"] is True
    assert ctx.result["confidence_score"] <= 0.5
    assert "not written in the passages it cites" in ctx.result["disclaimer"]


@pytest.mark.django_db
def test_the_dating_passages_of_a_document_the_reader_may_not_read_never_reach_the_answer(
    tenant, other_tenant, case, other_case, ingest_text
):
    # The dated contract is confidential in this firm, and another firm holds a copy of it; an
    # undated contract of this firm is the only one a viewer may read.
    secret = ingest_text(case, CONTRACT, filename="alfa-hydraspin-supply.txt", title="Alfa Hydraspin Supply")
    make_confidential(secret)
    ingest_text(other_case, CONTRACT, filename="theirs.txt", title="Their Supply")
    ingest_text(case, UNDATED, filename="undated-supply.txt", title="Undated Supply")
    question = "When was the supply agreement signed?"
    viewer = run_query(
        tenant=tenant, question=question, filters={"case_ids": [case.pk]}, use_cache=False, reader=Reader()
    )
    shown = str(viewer.result["answer"] or "") + str(viewer.result["message"] or "")
    assert "2019" not in shown and "31 October" not in shown
    assert {c["document_id"] for c in viewer.result["citations"]} <= {
        d.pk for d in Document.objects.filter(tenant=tenant, title="Undated Supply")
    }
    # The admin, who may read it, gets the date from the preamble.
    admin = run_query(
        tenant=tenant,
        question=question,
        filters={"document_ids": [secret.pk]},
        use_cache=False,
        reader=Reader(role=Role.ADMIN),
    )
    assert admin.result["answer"].startswith("31 October 2019 [")


@pytest.mark.django_db
def test_an_effective_date_question_about_a_document_that_only_dates_itself_gets_that_date(
    tenant, case, ingest_text
):
    entered = (
        "This Manufacturing Agreement is entered into on January 21st, 2002, by and between Alfa Aesar "
        'Corp. ("Alfa") and Hydraspin LLC ("Hydraspin").'
    )
    text = f"MANUFACTURING AGREEMENT\n\n{entered}\n\n{FILLER}9. Notices. Notices go by mail.\n"
    document = ingest_text(case, text, filename="alfa-manufacturing.txt", title="Alfa Manufacturing")
    ctx = ask(tenant, document, "What is the effective date?")
    # No passage says "effective": search's would fail the answerability gate; the preamble answers.
    assert ctx.result["answer"].startswith("21 January 2002 (the date the agreement is made) [1]")
    assert ctx.stage_metadata["document_dates"]["dated"] is True
    unrelated = ask(tenant, document, "When does the initial term end?")
    assert unrelated.stage_metadata["document_dates"]["dated"] is False  # an end date is not the preamble's


@pytest.mark.django_db
def test_who_the_parties_are_is_answered_from_the_preamble_in_every_mode(tenant, case, ingest_text):
    document = ingest_text(
        case, CONTRACT, filename="alfa-hydraspin-supply.txt", title="Alfa Hydraspin Supply"
    )
    for options in ({"top_k": 1}, {"agentic": True}):
        ctx = ask(tenant, document, "Who are the parties to this agreement?", **options)
        answer, citations = ctx.result["answer"], ctx.result["citations"]
        assert answer.startswith("Alfa and Hydraspin [1]."), options
        assert "by and between Alfa Aesar Corp." in cited_text(document, citations[0])
