"""Matter review through the whole pipeline: a list question checks every document in scope and
names each that holds the clause, with its quote; none holding it is said so; documents not
indexed yet are named as not checked, a confidential one the reader may not read only counted;
a chosen document without the clause is a No."""

from __future__ import annotations

import re

import pytest

from rag import services as rag_services
from rag.ingest import service
from rag.models import Chunk, Document, DocumentStatus
from rag.pipeline.run import run_query, stream_query
from rag.retrieval.service import Reader
from ragsite.exceptions import NotFound
from tenants.models import Role
from tests.factories import MembershipFactory
from tests.rag.review.contracts import ingest, make_confidential

NON_COMPETE_ALPHA = (
    "9. Non-Competition. During the Term and for two (2) years thereafter, Distributor shall not, "
    "directly or indirectly, manufacture, sell, distribute or promote any products that compete with "
    "the Products anywhere in the Territory."
)
NON_COMPETE_GAMMA = (
    "9. Non-Competition. During the Term, Reseller shall not, directly or indirectly, market, resell or "
    "promote any software products that compete with the Licensed Software in the Territory."
)
INSURANCE = (
    "9. Insurance. Supplier shall maintain, at its own expense, commercial general liability insurance "
    "with limits of not less than $2,000,000 per occurrence and shall name Buyer as an additional insured."
)
BOILERPLATE = (
    "1. Appointment. The Company appoints the Counterparty on the terms of this Agreement, and the "
    "Counterparty accepts the appointment and shall perform its obligations diligently and in good faith.\n\n"
    "2. Payment. Invoices are payable within thirty (30) days of receipt. Late payments bear interest at "
    "one percent (1%) per month until paid in full.\n\n"
    "3. Records. Each party shall keep complete and accurate records of its activities under this "
    "Agreement for three (3) years.\n\n"
    "4. Term. This Agreement commences on the Effective Date and continues for three (3) years unless "
    "terminated earlier for material breach that is not cured within thirty (30) days of notice.\n\n"
    "5. Notices. All notices shall be in writing and delivered by hand or by courier to the addresses "
    "set out above, and are effective on receipt.\n\n"
    "6. Entire Agreement. This Agreement is the entire agreement of the parties on its subject and "
    "supersedes all prior agreements and understandings.\n\n"
    "7. Governing Law. This Agreement shall be governed by the laws of the State of Delaware.\n\n"
    "8. Confidentiality. Each party shall hold the other party's confidential information in strict "
    "confidence, use it only to perform this Agreement and disclose it only to its employees and advisers "
    "who need to know it and are bound by duties of confidentiality at least as protective as these."
)
CONTRACTS = {
    title: f"{heading}\n\n{BOILERPLATE}\n\n{clause}".strip()
    for title, heading, clause in (
        (
            "Alpha Distribution Agreement",
            "DISTRIBUTION AGREEMENT between Alpha Foods Inc and Northwind LLC.",
            NON_COMPETE_ALPHA,
        ),
        ("Beta Supply Agreement", "SUPPLY AGREEMENT between Beta Metals Corp and Contoso Ltd.", INSURANCE),
        (
            "Gamma License Agreement",
            "LICENSE AGREEMENT between Gamma Software Inc and Fabrikam Corp.",
            NON_COMPETE_GAMMA,
        ),
        ("Delta Services Agreement", "SERVICES AGREEMENT between Delta Consulting LLC and Initech Inc.", ""),
    )
}
LIST_QUESTION = "Which of these agreements contain a non-compete?"


@pytest.fixture
def matter(tenant):
    case = rag_services.case_create(tenant=tenant, name="Northwind diligence")
    documents = {}
    for title, text in CONTRACTS.items():
        documents[title] = ingest(tenant, case, title, text)
    return case, documents


def cited_titles(result) -> set[str]:
    return {citation["title"] for citation in result["citations"]}


@pytest.mark.django_db
def test_a_list_question_names_every_document_holding_the_clause_with_its_quote(tenant, matter):
    case, _ = matter
    result = run_query(tenant=tenant, question=LIST_QUESTION, filters={"case_ids": [case.pk]}).result
    assert cited_titles(result) == {"Alpha Distribution Agreement", "Gamma License Agreement"}
    assert result["answer"].startswith("2 of the 4 documents checked hold a non-compete clause")
    assert "shall not, directly or indirectly, manufacture" in result["answer"]
    assert "market, resell or promote any software products that compete" in result["answer"]
    stages = result["provenance"]["stages"]
    assert stages["matter_review"]["checked"] == 4 and stages["matter_review"]["present"] == 2
    assert "retrieve" not in stages  # every document was read; no top-k search


@pytest.mark.django_db
def test_the_list_is_the_same_streamed_and_in_agentic_mode(tenant, matter):
    case, _ = matter
    filters = {"case_ids": [case.pk]}
    sync = run_query(tenant=tenant, question=LIST_QUESTION, filters=filters, use_cache=False).result
    agentic = run_query(
        tenant=tenant, question=LIST_QUESTION, filters=filters, agentic=True, use_cache=False
    ).result
    ctx, events = stream_query(tenant=tenant, question=LIST_QUESTION, filters=filters, use_cache=False)
    for _ in events:
        pass
    for result in (agentic, ctx.result):
        assert result["answer"] == sync["answer"]
        assert cited_titles(result) == cited_titles(sync)


@pytest.mark.django_db
def test_no_document_holding_the_clause_is_said_so_with_the_count(tenant, matter):
    case, _ = matter
    result = run_query(
        tenant=tenant,
        question="Which of these agreements have a source code escrow?",
        filters={"case_ids": [case.pk]},
    ).result
    assert result["answer"] is None and result["citations"] == []
    assert result["message"] == "None of the 4 documents checked contains a source code escrow."


@pytest.mark.django_db
def test_a_confidential_document_the_reader_may_not_read_is_counted_never_named_or_read(tenant, matter):
    case, documents = matter
    gamma = documents["Gamma License Agreement"]
    make_confidential(gamma)
    viewer = run_query(
        tenant=tenant, question=LIST_QUESTION, filters={"case_ids": [case.pk]}, reader=Reader()
    ).result
    assert cited_titles(viewer) == {"Alpha Distribution Agreement"}
    assert viewer["answer"].startswith("1 of the 3 documents checked holds a non-compete clause")
    # A lawyer relying on the list must know the matter holds one more they were not shown.
    assert viewer["answer"].endswith("1 more is confidential and not open to you: it was not checked.")
    assert "Gamma" not in str(viewer["answer"]) and "Licensor" not in str(viewer["answer"])
    none = run_query(
        tenant=tenant,
        question="Which of these agreements have a source code escrow?",
        filters={"case_ids": [case.pk]},
        reader=Reader(),
    ).result
    assert none["message"] == (
        "None of the 3 documents checked contains a source code escrow. "
        "1 more is confidential and not open to you: it was not checked."
    )
    admin = run_query(
        tenant=tenant,
        question=LIST_QUESTION,
        filters={"case_ids": [case.pk]},
        reader=Reader(role=Role.ADMIN),
    ).result
    assert cited_titles(admin) == {"Alpha Distribution Agreement", "Gamma License Agreement"}
    assert "confidential" not in admin["answer"]


@pytest.mark.django_db
def test_a_case_walled_off_from_the_reader_is_not_even_counted(tenant, matter):
    case, documents = matter
    walled = rag_services.case_create(tenant=tenant, name="Gamma dispute")
    gamma = documents["Gamma License Agreement"]
    Document.objects.filter(pk=gamma.pk).update(case=walled)
    Chunk.objects.filter(document=gamma).update(case=walled)
    make_confidential(documents["Delta Services Agreement"])
    insider = MembershipFactory(tenant=tenant, role=Role.MEMBER).user
    outsider = MembershipFactory(tenant=tenant, role=Role.MEMBER).user
    rag_services.case_wall_set(tenant=tenant, case_id=walled.pk, walled=True, members=[insider])
    ask = {"tenant": tenant, "question": LIST_QUESTION}
    outside = run_query(
        **ask, filters={"case_ids": [case.pk]}, reader=Reader(user_id=outsider.pk, role=Role.MEMBER)
    ).result
    assert outside["answer"].startswith("1 of the 2 documents checked holds a non-compete clause")
    assert outside["answer"].endswith("1 more is confidential and not open to you: it was not checked.")
    assert "Gamma" not in str(outside)
    # Naming the walled case is refused as a case that does not exist: nothing of it is counted.
    both = {"case_ids": [case.pk, walled.pk]}
    with pytest.raises(NotFound):
        run_query(**ask, filters=both, reader=Reader(user_id=outsider.pk, role=Role.MEMBER))
    inside = run_query(**ask, filters=both, reader=Reader(user_id=insider.pk, role=Role.MEMBER)).result
    assert cited_titles(inside) == {"Alpha Distribution Agreement", "Gamma License Agreement"}


@pytest.mark.django_db
def test_documents_not_indexed_yet_are_named_as_not_checked(tenant, matter):
    case, _ = matter
    not_ready = (("Epsilon Draft", DocumentStatus.FAILED), ("Zeta Lease", DocumentStatus.PROCESSING))
    for title, status in not_ready:
        outcome = service.ingest_now(
            tenant=tenant,
            case=case,
            filename=f"{title}.txt",
            content=f"{title.upper()} between Epsilon Inc and Northwind LLC.".encode(),
            fields=service.DocumentFields(title=title),
        )
        Document.objects.filter(pk=outcome.document.pk).update(status=status)
        outcome.document.chunks.all().delete()
    result = run_query(tenant=tenant, question=LIST_QUESTION, filters={"case_ids": [case.pk]}).result
    assert result["answer"].startswith("2 of the 4 documents checked hold a non-compete clause")
    assert result["answer"].endswith(
        "2 more in scope could not be checked: Epsilon Draft (could not be indexed) and "
        "Zeta Lease (still being indexed)."
    )
    assert {"Epsilon Draft", "Zeta Lease"}.isdisjoint(cited_titles(result))


@pytest.mark.django_db
def test_a_chosen_document_without_the_clause_is_answered_no(tenant, matter):
    _, documents = matter
    beta = documents["Beta Supply Agreement"]
    result = run_query(
        tenant=tenant,
        question="Does this agreement contain a non-compete?",
        filters={"document_ids": [beta.pk]},
    ).result
    assert result["answer"] is None
    assert result["message"].startswith("No: Beta Supply Agreement does not contain a non-compete clause.")
    alpha = documents["Alpha Distribution Agreement"]
    found = run_query(
        tenant=tenant,
        question="Does this agreement contain a non-compete?",
        filters={"document_ids": [alpha.pk]},
    ).result
    assert found["answer"].startswith("Yes. Alpha Distribution Agreement states:")
    assert "shall not, directly or indirectly, manufacture" in found["answer"]
    assert cited_titles(found) == {"Alpha Distribution Agreement"}


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("question", "opening"),
    [
        (
            "Can the distributor compete with Alpha in the Territory?",
            "Not freely: the agreement has a non-compete",
        ),
        (
            "Can the distributor compete without Alpha's consent?",
            "No: the agreement has a non-compete clause.",
        ),
    ],
)
def test_a_permission_question_about_a_restriction_the_document_has_is_never_yes(
    tenant, matter, question, opening
):
    # "Can it …?" where the clause forbids it: the clause found means "No", not "Yes" (issue #35).
    _, documents = matter
    alpha = documents["Alpha Distribution Agreement"]
    result = run_query(tenant=tenant, question=question, filters={"document_ids": [alpha.pk]}).result
    assert result["answer"].startswith(opening), result["answer"]
    assert "shall not, directly or indirectly, manufacture" in result["answer"]


@pytest.mark.django_db
def test_a_summary_gives_the_documents_key_terms_each_quoted(tenant, matter):
    _, documents = matter
    alpha = documents["Alpha Distribution Agreement"]
    result = run_query(
        tenant=tenant, question="Summarize this agreement.", filters={"document_ids": [alpha.pk]}
    ).result
    answer = result["answer"]
    assert answer.startswith("Key terms of Alpha Distribution Agreement:")
    # A value term states its value first, as an answer to its question would, then its quote.
    assert re.search(
        r"^- Governing Law: The laws of Delaware govern \[(\d+)\]\. "
        r'"This Agreement shall be governed by the laws of the State of Delaware\." \[\1\]$',
        answer,
        re.M,
    )
    assert answer.splitlines()[1].startswith("- Parties: Alpha Foods and Northwind [1]. ")
    assert "- Non-Compete:" in answer and "shall not, directly or indirectly, manufacture" in answer
    assert "Checked and not found:" in answer and "Source Code Escrow" in answer
    assert {citation["document_id"] for citation in result["citations"]} == {alpha.pk}
    text = Document.objects.get(pk=alpha.pk).text
    for citation in result["citations"]:
        assert text[citation["char_start"] : citation["char_end"]] == citation["snippet"]


@pytest.mark.django_db
def test_another_firms_documents_are_never_checked_counted_or_listed(tenant, other_tenant, matter):
    outside = rag_services.case_create(tenant=other_tenant, name="Northwind diligence")
    theirs = ingest(
        other_tenant, outside, "Omega Distribution Agreement", CONTRACTS["Alpha Distribution Agreement"]
    )
    result = run_query(tenant=tenant, question=LIST_QUESTION).result  # the whole firm, no filter
    assert result["answer"].startswith("2 of the 4 documents checked hold a non-compete clause")
    assert cited_titles(result) == {"Alpha Distribution Agreement", "Gamma License Agreement"}
    assert theirs.pk not in {citation["document_id"] for citation in result["citations"]}
    # Only this firm's four documents were read.
    assert result["provenance"]["stages"]["matter_review"]["checked"] == 4


@pytest.mark.django_db
def test_a_yes_no_question_naming_its_document_is_reviewed_in_that_document(tenant, matter):
    # Asked over the whole case, a question naming one document is answered as if it were chosen.
    case, _ = matter
    ask = {"tenant": tenant, "filters": {"case_ids": [case.pk]}}
    found = run_query(**ask, question="Does the Alpha distribution agreement contain a non-compete?").result
    assert found["answer"].startswith("Yes. Alpha Distribution Agreement states:"), found["answer"]
    assert cited_titles(found) == {"Alpha Distribution Agreement"}
    restricted = run_query(**ask, question="Can Northwind compete with Alpha Foods without consent?").result
    assert restricted["answer"].startswith("No: the agreement has a non-compete clause."), restricted[
        "answer"
    ]
    assert cited_titles(restricted) == {"Alpha Distribution Agreement"}
    # The reference read off first: "In …, can …?" is still a permission question.
    leading = "In the Alpha distribution agreement, can Northwind compete without consent?"
    referenced = run_query(**ask, question=leading).result
    assert referenced["answer"].startswith("No: the agreement has a non-compete clause."), referenced[
        "answer"
    ]
    absent = run_query(**ask, question="Does the Beta supply agreement contain a non-compete?").result
    assert absent["message"].startswith("No: Beta Supply Agreement does not contain a non-compete clause.")
    # What a clause says is search's to answer: no "Yes.", and no "does not contain" for a named
    # document without the clause (search answers from the case as asked).
    said = run_query(
        **ask, question="What does the non-compete of the Alpha distribution agreement forbid?"
    ).result
    assert said["answer"].startswith("Alpha Distribution Agreement states:"), said["answer"]
    missing = run_query(
        **ask, question="What insurance must be carried under the Delta services agreement?"
    ).result
    assert "does not contain" not in str(missing["answer"]) + str(missing.get("message"))
    # A question naming two documents is not reviewed as one.
    two = run_query(**ask, question="Do the Alpha and Gamma agreements contain a non-compete?").result
    assert not two["answer"].startswith(("Yes.", "No:")), two["answer"]


@pytest.mark.django_db
def test_a_named_document_the_reader_may_not_read_is_never_reviewed(tenant, other_tenant, matter):
    _, documents = matter
    make_confidential(documents["Alpha Distribution Agreement"])
    question = "Does the Alpha distribution agreement contain a non-compete?"
    viewer = run_query(tenant=tenant, question=question, reader=Reader()).result
    assert "Alpha" not in str(viewer["answer"]) + str(viewer.get("message"))
    assert "Alpha Distribution Agreement" not in cited_titles(viewer)
    # Another firm's document of that name is not this firm's to review.
    outside = rag_services.case_create(tenant=other_tenant, name="Omega")
    theirs = ingest(
        other_tenant, outside, "Omega Distribution Agreement", CONTRACTS["Alpha Distribution Agreement"]
    )
    omega = run_query(
        tenant=tenant, question="Does the Omega distribution agreement contain a non-compete?"
    ).result
    assert theirs.pk not in {citation["document_id"] for citation in omega["citations"]}
    assert not str(omega["answer"]).startswith("Yes."), omega["answer"]
    assert "Omega Distribution Agreement" not in str(omega["answer"]) + str(omega.get("message"))


@pytest.mark.django_db
def test_a_named_yes_no_answer_is_the_same_streamed_and_in_agentic_mode(tenant, matter):
    case, _ = matter
    ask = {"tenant": tenant, "question": "Does the Alpha distribution agreement contain a non-compete?"}
    ask |= {"filters": {"case_ids": [case.pk]}, "use_cache": False}
    sync = run_query(**ask).result
    assert sync["answer"].startswith("Yes. Alpha Distribution Agreement states:")
    agentic = run_query(**ask, agentic=True).result
    ctx, events = stream_query(**ask)
    for _ in events:
        pass
    for result in (agentic, ctx.result):
        assert result["answer"].startswith("Yes. "), result["answer"]
        assert cited_titles(result) == {"Alpha Distribution Agreement"}
