"""Compare through the whole pipeline: documents named in the question (or chosen as the scope) are
answered side by side, one table row per document, each row quoting only its own document; a side
without the clause says so; a document the reader may not see is a name not found, exactly like a
name no document has; streamed and agentic give the same table; ordinary questions are unchanged."""

from __future__ import annotations

import json
import re

import pytest

from rag import services as rag_services
from rag.ingest import service as ingest_service
from rag.models import Chunk, Document
from rag.pipeline.run import run_query, stream_query
from rag.pipeline.streaming import AnswerDelta
from rag.retrieval.service import Reader
from tenants.models import Role
from tests.factories import MembershipFactory
from tests.rag import licences
from tests.rag.llm.conftest import Received, Reply, start_server  # noqa: F401  (fixture)
from tests.rag.pipeline.test_remote_replies import anthropic_reply, remote_model  # noqa: F401  (fixture)
from tests.rag.review.contracts import ingest, make_confidential

COMMON = (
    "2. Payment. Invoices are payable within thirty (30) days of receipt. Late payments bear interest at "
    "one percent (1%) per month until paid in full.\n\n"
    "3. Records. Each party shall keep complete and accurate records of its activities under this "
    "Agreement for three (3) years.\n\n"
    "4. Notices. All notices shall be in writing and delivered by hand or by courier to the addresses "
    "set out above, and are effective on receipt.\n\n"
    "5. Entire Agreement. This Agreement is the entire agreement of the parties on its subject and "
    "supersedes all prior agreements and understandings."
)
ALFA_TERMINATION = (
    "Either party may terminate this Agreement for convenience on ninety (90) days' prior written notice "
    "to the other party."
)
HYDRASPIN_TERMINATION = (
    "Hydraspin may terminate this Agreement immediately upon written notice if the Distributor fails to "
    "meet the minimum purchase requirements for two consecutive quarters."
)
ALFA_NON_COMPETE = (
    "During the Term and for two (2) years thereafter, Supplier shall not, directly or indirectly, "
    "manufacture or sell any products that compete with the Products in the Territory."
)
CONTRACTS = {
    "Alfa Aesar Supply Agreement": (
        "SUPPLY AGREEMENT between Alfa Aesar Inc and Northwind LLC.\n\n"
        "1. Supply. Supplier shall supply the Products ordered by Northwind under this Agreement.\n\n"
        f"{COMMON}\n\n"
        "6. Governing Law. This Agreement shall be governed by the laws of the State of New York.\n\n"
        f"7. Termination. {ALFA_TERMINATION}\n\n"
        f"8. Non-Competition. {ALFA_NON_COMPETE}"
    ),
    "Hydraspin Distribution Agreement": (
        "DISTRIBUTION AGREEMENT between Hydraspin USA Inc and Contoso Ltd.\n\n"
        "1. Appointment. Hydraspin appoints the Distributor to resell the Products in the Territory.\n\n"
        f"{COMMON}\n\n"
        "6. Governing Law. This Agreement shall be governed by the laws of England and Wales.\n\n"
        f"7. Termination. {HYDRASPIN_TERMINATION}"
    ),
    "Beta Services Agreement": (
        "SERVICES AGREEMENT between Beta Consulting LLC and Initech Inc.\n\n"
        "1. Services. Beta shall provide the consulting services described in each statement of work.\n\n"
        f"{COMMON}\n\n"
        "6. Governing Law. This Agreement shall be governed by the laws of the State of Texas."
    ),
}
BOTH = {"Alfa Aesar Supply Agreement", "Hydraspin Distribution Agreement"}
TERMINATION_QUESTION = "Compare the termination rights in the Alfa Aesar and Hydraspin agreements"
NON_COMPETE_QUESTION = "Compare the non-compete clauses of the Alfa Aesar and Hydraspin agreements"


@pytest.fixture
def contracts(tenant):
    case = rag_services.case_create(tenant=tenant, name="Northwind supply chain")
    return case, {title: ingest(tenant, case, title, text) for title, text in CONTRACTS.items()}


def table_rows(answer: str) -> dict[str, str]:
    """{title: cell} for each row of the answer's table (header and rule left out)."""
    rows = {}
    for line in answer.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")] if line.startswith("|") else []
        if len(cells) == 2 and cells[0] not in ("Document", "---"):
            rows[cells[0]] = cells[1]
    return rows


def cited_by_row(result) -> dict[str, set[str]]:
    """{row title: the titles of the documents its citation markers point at}."""
    by_id = {str(c["citation_id"]): c for c in result["citations"]}
    return {
        title: {by_id[token]["title"] for token in re.findall(r"\[([^\[\]]+)\]", cell) if token in by_id}
        for title, cell in table_rows(result["answer"]).items()
    }


@pytest.mark.django_db
def test_each_document_is_answered_from_its_own_text_in_a_table_row(tenant, contracts):
    result = run_query(tenant=tenant, question=TERMINATION_QUESTION).result
    answer = result["answer"]
    assert "| Document | Termination rights |" in answer
    rows = table_rows(answer)
    assert set(rows) == {"Alfa Aesar Supply Agreement", "Hydraspin Distribution Agreement"}
    assert ALFA_TERMINATION in rows["Alfa Aesar Supply Agreement"]
    assert HYDRASPIN_TERMINATION in rows["Hydraspin Distribution Agreement"]
    # Each row cites its own document only, and both are cited.
    assert cited_by_row(result) == {
        "Alfa Aesar Supply Agreement": {"Alfa Aesar Supply Agreement"},
        "Hydraspin Distribution Agreement": {"Hydraspin Distribution Agreement"},
    }
    stages = result["provenance"]["stages"]
    assert stages["compare"]["used"] is True and stages["compare"]["found"] == 2
    assert "retrieve" not in stages  # each side was searched in its own document, not the corpus
    assert result["flags"]["hallucination_detected"] is False
    assert result["flags"]["needs_verification"] is False


@pytest.mark.django_db
def test_a_side_without_the_clause_says_so_instead_of_quoting_the_other(tenant, contracts):
    result = run_query(tenant=tenant, question=NON_COMPETE_QUESTION).result
    rows = table_rows(result["answer"])
    assert ALFA_NON_COMPETE in rows["Alfa Aesar Supply Agreement"]
    assert rows["Hydraspin Distribution Agreement"] == (
        "No non-compete provision found in Hydraspin Distribution Agreement."
    )
    assert {c["title"] for c in result["citations"]} == {"Alfa Aesar Supply Agreement"}


@pytest.mark.django_db
def test_documents_chosen_as_the_scope_are_compared_when_the_question_says_compare(tenant, contracts):
    _, documents = contracts
    chosen = [documents["Hydraspin Distribution Agreement"].pk, documents["Beta Services Agreement"].pk]
    result = run_query(
        tenant=tenant, question="How do they differ on governing law?", filters={"document_ids": chosen}
    ).result
    rows = table_rows(result["answer"])
    assert list(rows) == ["Hydraspin Distribution Agreement", "Beta Services Agreement"]
    assert "governed by the laws of England and Wales" in rows["Hydraspin Distribution Agreement"]
    assert "governed by the laws of the State of Texas" in rows["Beta Services Agreement"]
    assert cited_by_row(result) == {title: {title} for title in rows}


@pytest.mark.django_db
def test_a_name_no_document_has_is_said_not_found_by_name(tenant, contracts):
    result = run_query(
        tenant=tenant, question="Compare the termination rights in the Alfa Aesar and Zyxwv agreements"
    ).result
    assert result["answer"] is None and result["citations"] == []
    assert result["message"] == (
        "No document in scope matches \u201cZyxwv agreement\u201d: check the name, or choose the "
        "documents to compare."
    )


def _outcome(result) -> tuple:
    return result["answer"], result["message"], result["citations"], result["provenance"]["not_found_reason"]


@pytest.mark.django_db
def test_a_confidential_document_the_reader_may_not_read_is_a_name_not_found(tenant, contracts):
    _, documents = contracts
    hydraspin = documents["Hydraspin Distribution Agreement"]
    make_confidential(hydraspin)
    ask = {"tenant": tenant, "question": TERMINATION_QUESTION, "use_cache": False}

    hidden = run_query(**ask, reader=Reader()).result
    assert "Hydraspin Distribution" not in str(hidden)
    assert HYDRASPIN_TERMINATION not in str(hidden)
    admin = run_query(**ask, reader=Reader(role=Role.ADMIN)).result  # control: they may read it
    assert set(table_rows(admin["answer"])) == BOTH

    ingest_service.document_delete(tenant=tenant, document_id=hydraspin.pk)
    missing = run_query(**ask, reader=Reader()).result
    assert _outcome(hidden) == _outcome(missing)
    assert hidden["message"].startswith("No document in scope matches \u201cHydraspin agreement\u201d")


@pytest.mark.django_db
def test_a_document_behind_a_wall_is_a_name_not_found(tenant, contracts):
    _, documents = contracts
    walled = rag_services.case_create(tenant=tenant, name="Hydraspin dispute")
    moved = documents["Hydraspin Distribution Agreement"]
    Document.objects.filter(pk=moved.pk).update(case=walled)
    Chunk.objects.filter(document=moved).update(case=walled)
    insider = MembershipFactory(tenant=tenant, role=Role.MEMBER).user
    outsider = MembershipFactory(tenant=tenant, role=Role.MEMBER).user
    rag_services.case_wall_set(tenant=tenant, case_id=walled.pk, walled=True, members=[insider])
    ask = {"tenant": tenant, "question": TERMINATION_QUESTION, "use_cache": False}

    outside = run_query(**ask, reader=Reader(user_id=outsider.pk, role=Role.MEMBER)).result
    inside = run_query(**ask, reader=Reader(user_id=insider.pk, role=Role.MEMBER)).result
    assert set(table_rows(inside["answer"])) == BOTH
    hydraspin = documents["Hydraspin Distribution Agreement"]
    ingest_service.document_delete(tenant=tenant, document_id=hydraspin.pk)
    missing = run_query(**ask, reader=Reader(user_id=outsider.pk, role=Role.MEMBER)).result
    assert _outcome(outside) == _outcome(missing)
    assert "Hydraspin Distribution" not in str(outside) and HYDRASPIN_TERMINATION not in str(outside)


@pytest.mark.django_db
def test_the_table_is_the_same_streamed_in_agentic_mode_and_with_chain_of_thought(tenant, contracts):
    sync = run_query(tenant=tenant, question=TERMINATION_QUESTION, use_cache=False).result
    ask = {"tenant": tenant, "question": TERMINATION_QUESTION, "use_cache": False}
    agentic = run_query(**ask, agentic=True).result
    # Chain of thought would search each side by routing; the comparison has done it in each document.
    reasoned = run_query(**ask, cot_enabled=True).result
    ctx, events = stream_query(tenant=tenant, question=TERMINATION_QUESTION, use_cache=False)
    streamed = "".join(event.text for event in events if isinstance(event, AnswerDelta))
    assert streamed == sync["answer"]  # the table as it was written, row by row
    assert "| Document | Termination rights |" in sync["answer"]
    assert "reasoning" not in reasoned and "agent" not in agentic
    for result in (agentic, reasoned, ctx.result):
        assert result["answer"] == sync["answer"]
        assert cited_by_row(result) == cited_by_row(sync)


@pytest.mark.django_db
def test_a_question_about_one_document_that_says_differ_is_searched_as_usual(tenant, contracts):
    result = run_query(
        tenant=tenant,
        question="Does the notice period differ between the parties under the Alfa Aesar agreement?",
        use_cache=False,
    ).result
    stages = result["provenance"]["stages"]
    assert "retrieve" in stages and stages.get("compare", {}).get("used") is not True
    assert "| Document |" not in (result["answer"] or "")


def _remote_table(received: Received) -> Reply:
    """A fake Claude that answers as the prompt's comparison note asks: a row per document listed,
    quoting its own sources (by token) or saying what the note says was not found."""
    prompt = received.json()["messages"][0]["content"]
    rows, citations = [], []
    for title, tokens in re.findall(r'^- "(.+?)": its sources are ([^\n]+)\.$', prompt, re.M):
        token = tokens.split(", ")[0]
        rows.append(f'| {title} | "{ALFA_NON_COMPETE}" [{token}] |')
        citations.append({"id": token, "snippet": ALFA_NON_COMPETE})
    for title, missing in re.findall(r'^- "(.+?)": nothing was found; its row says "(.+)"$', prompt, re.M):
        rows.append(f"| {title} | {missing} |")
    table = "\n".join(
        ["Non-compete, side by side:", "", "| Document | Non-compete |", "| --- | --- |", *rows]
    )
    reply = {"answer": table, "citations": citations, "follow_ups": [], "confidence": 0.9}
    return Reply(200, anthropic_reply(json.dumps(reply), "end_turn"))


@pytest.mark.django_db
def test_a_remote_model_is_told_each_sides_sources(tenant, contracts, remote_model):  # noqa: F811
    server = remote_model("anthropic", _remote_table)
    result = run_query(tenant=tenant, question=NON_COMPETE_QUESTION).result
    prompt = server.received[0].json()["messages"][0]["content"]
    assert "Comparison: each document below was searched on its own" in prompt
    assert re.search(r'^- "Alfa Aesar Supply Agreement": its sources are \d', prompt, re.M)
    assert (
        '- "Hydraspin Distribution Agreement": nothing was found; its row says "No non-compete provision '
        'found in Hydraspin Distribution Agreement."'
    ) in prompt
    rows = table_rows(result["answer"])
    assert ALFA_NON_COMPETE in rows["Alfa Aesar Supply Agreement"]
    assert rows["Hydraspin Distribution Agreement"].startswith("No non-compete provision found")
    assert result["flags"]["hallucination_detected"] is False
    assert cited_by_row(result) == {
        "Alfa Aesar Supply Agreement": {"Alfa Aesar Supply Agreement"},
        "Hydraspin Distribution Agreement": set(),
    }


@pytest.mark.django_db
@pytest.mark.parametrize(
    "question",
    [
        # A bare name no document has may be a party: search answers, as before.
        "Compare the termination rights of Alfa Aesar and Zyxwv",
        # Both names are the same contract (its two parties).
        "Compare the obligations of Alfa Aesar and Northwind",
    ],
)
def test_names_that_are_not_two_documents_are_left_to_search(tenant, contracts, question):
    result = run_query(tenant=tenant, question=question, use_cache=False).result
    stages = result["provenance"]["stages"]
    assert stages["compare"] == {"used": False, "named": 2}
    assert "retrieve" in stages and "| Document |" not in (result["answer"] or "")


@pytest.mark.django_db
def test_asking_for_the_reasoning_steps_answers_the_comparison_part_by_part(tenant, contracts):
    result = run_query(
        tenant=tenant, question=TERMINATION_QUESTION, show_cot_steps=True, use_cache=False
    ).result
    assert result["provenance"]["stages"]["compare"] == {"used": False, "reason": "cot_steps_asked"}
    assert result["reasoning"]["strategy"] == "compare" and len(result["reasoning"]["steps"]) == 2
    assert "| Document |" not in (result["answer"] or "")


@pytest.mark.django_db
def test_another_firms_document_is_never_resolved_by_name(tenant, other_tenant):
    # The asking firm holds only Alfa Aesar; another firm holds the Hydraspin agreement. The name
    # is not found, exactly as when no firm has it, and nothing of the other firm is cited or counted.
    mine = rag_services.case_create(tenant=tenant, name="Northwind supply chain")
    ingest(tenant, mine, "Alfa Aesar Supply Agreement", CONTRACTS["Alfa Aesar Supply Agreement"])
    theirs = rag_services.case_create(tenant=other_tenant, name="Contoso distribution")
    ingest(
        other_tenant,
        theirs,
        "Hydraspin Distribution Agreement",
        CONTRACTS["Hydraspin Distribution Agreement"],
    )
    question = "Compare the termination rights in the Alfa Aesar and Hydraspin agreements"
    result = run_query(tenant=tenant, question=question).result
    assert "Hydraspin" not in json.dumps(result["citations"])
    assert HYDRASPIN_TERMINATION not in (result["answer"] or "")
    other_ids = set(Document.objects.filter(tenant=other_tenant).values_list("pk", flat=True))
    assert not other_ids & set(result["provenance"]["documents_retrieved"])
    Document.objects.filter(tenant=other_tenant).delete()
    missing = run_query(tenant=tenant, question=question).result
    assert _outcome(result) == _outcome(missing)


@pytest.mark.django_db
def test_a_row_states_the_value_its_topic_asks_for_then_its_quote_without_filler(tenant, case):
    # Two licences whose interpretation clause also speaks of "the laws of the State": each row
    # says which law governs, quotes its governing-law clause, and not the look-alike sentence.
    documents = {
        "orion": ingest(tenant, case, licences.ORION_TITLE, licences.ORION),
        "helix": ingest(tenant, case, licences.HELIX_TITLE, licences.HELIX),
    }
    result = run_query(
        tenant=tenant,
        question="Compare the governing law of the Orion and Helix license agreements",
        use_cache=False,
        filters={"case_ids": [case.pk]},
    ).result
    rows = table_rows(result["answer"])
    orion, helix = rows[documents["orion"].title], rows[documents["helix"].title]
    assert re.fullmatch(
        rf'The laws of New York govern \[(\d+)\]\. "{re.escape(licences.ORION_LAW)}" \[\1\]', orion
    )
    assert re.fullmatch(
        rf'The laws of California govern \[(\d+)\]\. "{re.escape(licences.HELIX_LAW)}" \[\1\]', helix
    )
    assert "headings" not in result["answer"]
