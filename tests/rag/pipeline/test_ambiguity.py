"""A question naming its document only by kind ("the sponsorship agreement") where the scope holds
several of that kind (in any of its forms: "the licence", "the two licensing agreements"; routed
to one of them by score or not): each is answered, grouped by document, and the clarification
names them by title, in sync and agentic mode. Each candidate is answered from its own text, with
the clause it gives when it is asked about alone (not whatever of it a search over all of them
ranks first), in sync, streamed and agentic mode. Names in the question make it unambiguous;
another tenant's, or another case's, documents of that kind, and a confidential one the reader
may not read, are never candidates."""

from __future__ import annotations

import json
import re

import pytest

from rag import selectors
from rag import services as rag_services
from rag.models import Document
from rag.pipeline.run import run_query, stream_query
from rag.pipeline.streaming import AnswerDelta
from rag.retrieval import ambiguity
from rag.retrieval.filters import SearchFilters
from rag.retrieval.routing import route
from rag.retrieval.service import Reader
from tenants.models import Role
from tests.factories import TenantFactory
from tests.rag import licences
from tests.rag.llm.conftest import Received, Reply, start_server  # noqa: F401  (fixture)
from tests.rag.pipeline.test_remote_replies import anthropic_reply, remote_model  # noqa: F401  (fixture)
from tests.rag.review.contracts import make_confidential
from tests.rag.sponsorships import APACHE, APACHE_TITLE, CANO, CANO_TITLE, ingest_sponsorships

QUESTION = "What law governs the sponsorship agreement?"


@pytest.fixture
def sponsorships(case, ingest_text):
    return ingest_sponsorships(case, ingest_text)


@pytest.mark.django_db
@pytest.mark.parametrize("agentic", [False, True])
def test_each_candidate_is_answered_and_named_by_title(tenant, case, sponsorships, agentic):
    result = run_query(
        tenant=tenant, question=QUESTION, agentic=agentic, use_cache=False, filters={"case_ids": [case.pk]}
    ).result
    clarification = result["clarification"]
    assert clarification["type"] == "ambiguous"
    assert {c["document_id"] for c in clarification["candidates"]} == {d.pk for d in sponsorships.values()}
    assert CANO_TITLE in clarification["message"] and APACHE_TITLE in clarification["message"]
    if not agentic:  # the plain pipeline quotes each contract's governing-law clause
        assert {c["document_id"] for c in result["citations"]} == {d.pk for d in sponsorships.values()}
        assert "Oklahoma" in result["answer"] and "Kansas" in result["answer"]


@pytest.mark.django_db
def test_a_question_naming_the_parties_is_not_ambiguous(tenant, sponsorships):
    result = run_query(
        tenant=tenant, question="What law governs the Cano sponsorship with Boyd?", use_cache=False
    )
    assert result.result.get("clarification") is None
    assert {c["document_id"] for c in result.result["citations"]} == {sponsorships["cano"].pk}


@pytest.mark.django_db
def test_another_tenants_or_cases_documents_of_that_kind_are_never_candidates(
    tenant, case, ingest_text, sponsorships
):
    other_tenant = TenantFactory(slug="other-firm")
    elsewhere = rag_services.case_create(tenant=other_tenant, name="Their matter")
    theirs = ingest_text(elsewhere, CANO, filename="their-sponsorship.txt", title="Their Sponsorship")
    other_case = rag_services.case_create(tenant=tenant, name="Another matter")
    ours = ingest_text(other_case, APACHE, filename="more-sponsorship.txt", title="More Sponsorship")

    in_case = ambiguity.candidates(
        tenant=tenant, question=QUESTION, filters=SearchFilters(case_ids=(case.pk,))
    )
    assert {c.document_id for c in in_case} == {d.pk for d in sponsorships.values()}
    tenant_wide = ambiguity.candidates(tenant=tenant, question=QUESTION, filters=None)
    assert {c.document_id for c in tenant_wide} == {d.pk for d in sponsorships.values()} | {ours.pk}
    assert theirs.pk not in {c.document_id for c in tenant_wide}
    # The selector behind the scope: only this tenant's documents, whatever the filters name.
    assert theirs.pk not in set(selectors.document_ids_within(tenant=tenant, filters=SearchFilters()))
    assert set(selectors.document_ids_within(tenant=other_tenant, filters=SearchFilters())) == {theirs.pk}


@pytest.mark.django_db
def test_more_candidates_than_can_be_answered_is_a_question_back(tenant, case, ingest_text, sponsorships):
    for n in range(ambiguity.MAX_CANDIDATES - 1):
        ingest_text(
            case, APACHE.replace("Apache", f"Rig{n}"), filename=f"s{n}.txt", title=f"Rig{n} Sponsorship"
        )
    result = run_query(
        tenant=tenant, question=QUESTION, use_cache=False, filters={"case_ids": [case.pk]}
    ).result
    assert result["answer"] is None and result["citations"] == []
    assert result["clarification"]["type"] == "ambiguous"
    assert len(result["clarification"]["candidates"]) == ambiguity.MAX_CANDIDATES + 1
    assert result["message"] == result["clarification"]["message"] and "Which one" in result["message"]


@pytest.mark.django_db
@pytest.mark.parametrize("agentic", [False, True])
def test_a_kind_that_fits_one_title_names_that_document(tenant, case, ingest_text, agentic):
    """ "What law governs the sponsorship agreement?" in a case with one sponsorship among other
    contracts that also choose a law: the sponsorship's clause, not whichever ranks first."""
    from .conftest import LEASE, LEASE_TITLE, MSA, MSA_TITLE

    cano = ingest_text(case, CANO, filename="cano-boyd-sponsorship.txt", title=CANO_TITLE)
    ingest_text(case, LEASE, filename="lease.txt", title=LEASE_TITLE)
    ingest_text(case, MSA, filename="msa.txt", title=MSA_TITLE)
    assert [c.document_id for c in ambiguity.fitting(tenant=tenant, question=QUESTION, filters=None)] == [
        cano.pk
    ]
    assert ambiguity.candidates(tenant=tenant, question=QUESTION, filters=None) == []
    result = run_query(tenant=tenant, question=QUESTION, agentic=agentic, use_cache=False).result
    assert result.get("clarification") is None
    assert result["citations"] and {c["document_id"] for c in result["citations"]} == {cano.pk}
    assert "Oklahoma" in result["answer"] and "New York" not in result["answer"]


def _ask(tenant, case, mode: str, **options) -> dict:
    """The licence question asked over `case` in `mode` ("sync", "stream", "agentic"): its result."""
    ask = {
        "tenant": tenant,
        "question": licences.QUESTION,
        "use_cache": False,
        "filters": {"case_ids": [case.pk]},
    }
    if mode == "stream":
        ctx, events = stream_query(**ask, **options)
        streamed = "".join(event.text for event in events if isinstance(event, AnswerDelta))
        assert streamed == ctx.result["answer"]
        return ctx.result
    return run_query(**ask, agentic=mode == "agentic", **options).result


def _cited(result: dict, document: Document) -> list[tuple[int, int]]:
    """The spans of `document` the result cites, each checked to be its exact text."""
    spans = []
    for citation in result["citations"]:
        if citation["document_id"] == document.pk:
            assert document.text[citation["char_start"] : citation["char_end"]] == citation["snippet"]
            spans.append((citation["char_start"], citation["char_end"]))
    return spans


@pytest.mark.django_db
@pytest.mark.parametrize("mode", ["sync", "stream", "agentic"])
def test_each_candidate_is_answered_with_the_clause_it_gives_when_asked_alone(
    tenant, case, ingest_text, mode
):
    """Two licence agreements whose recitals, grant and interpretation clauses share the question's
    words: asked together, each is still answered with its own governing-law clause, the passage
    the same question cites first when it is asked of that document alone."""
    documents = licences.ingest_licences(case, ingest_text)
    result = _ask(tenant, case, mode)
    assert result["clarification"]["type"] == "ambiguous"
    assert [c["document_id"] for c in result["clarification"]["candidates"]] == [
        documents["orion"].pk,
        documents["helix"].pk,
    ]
    assert licences.ORION_LAW in result["answer"] and licences.HELIX_LAW in result["answer"]
    assert "NOW, THEREFORE" not in result["answer"] and "headings" not in result["answer"]
    for document, law in ((documents["orion"], licences.ORION_LAW), (documents["helix"], licences.HELIX_LAW)):
        alone = run_query(
            tenant=tenant,
            question=licences.QUESTION,
            use_cache=False,
            filters={"document_ids": [document.pk]},
        ).result
        assert alone.get("clarification") is None
        first = alone["citations"][0]
        assert first["snippet"] == law
        assert _cited(result, document) == [(first["char_start"], first["char_end"])]


@pytest.mark.django_db
@pytest.mark.parametrize("mode", ["sync", "agentic"])
def test_a_confidential_candidate_the_reader_may_not_read_is_neither_named_nor_quoted(
    tenant, case, ingest_text, mode
):
    documents = licences.ingest_licences(case, ingest_text)
    texas = "This License Agreement shall be governed by the laws of the State of Texas."
    pavo_title = "Pavo Lyra Trademark License Agreement"
    pavo = ingest_text(
        case,
        licences.licence(
            licensor="Pavo Marks Ltd.",
            licensee="Lyra Foods Inc.",
            state="Ohio",
            product="Pavo marks",
            law=texas,
            year=2020,
        ),
        filename="pavo-lyra-license.txt",
        title=pavo_title,
    )
    make_confidential(pavo)

    hidden = _ask(tenant, case, mode, reader=Reader())
    assert {c["document_id"] for c in hidden["clarification"]["candidates"]} == {
        d.pk for d in documents.values()
    }
    assert pavo_title not in str(hidden) and "Texas" not in str(hidden)
    assert {c["document_id"] for c in hidden["citations"]} == {d.pk for d in documents.values()}

    admin = _ask(tenant, case, mode, reader=Reader(role=Role.ADMIN))  # control: they may read it
    assert len(admin["clarification"]["candidates"]) == 3 and pavo_title in admin["clarification"]["message"]
    assert _cited(admin, pavo) and texas in admin["answer"]
    assert licences.ORION_LAW in admin["answer"] and licences.HELIX_LAW in admin["answer"]


def _remote_answer_per_candidate(received: Received) -> Reply:
    """A Claude that follows the note: one line per candidate, quoting the law of its own sources."""
    prompt = received.json()["messages"][0]["content"]
    lines, citations = [], []
    for title, tokens in re.findall(r'^- "(.+?)": its sources are ([^\n]+)\.$', prompt, re.M):
        token = tokens.split(", ")[0]
        law = licences.ORION_LAW if "Orion" in title else licences.HELIX_LAW
        lines.append(f'{title}: "{law}" [{token}]')
        citations.append({"id": token, "snippet": law})
    reply = {"answer": "\n".join(lines), "citations": citations, "follow_ups": [], "confidence": 0.9}
    return Reply(200, anthropic_reply(json.dumps(reply), "end_turn"))


@pytest.mark.django_db
def test_a_remote_model_is_told_to_answer_each_candidate_from_its_own_sources(
    tenant,
    case,
    ingest_text,
    remote_model,  # noqa: F811
):
    documents = licences.ingest_licences(case, ingest_text)
    server = remote_model("anthropic", _remote_answer_per_candidate)
    result = _ask(tenant, case, "sync")
    prompt = server.received[0].json()["messages"][0]["content"]
    assert "Which document? The question may mean any of the documents below" in prompt
    titles = re.findall(r'^- "(.+?)": its sources are \d', prompt, re.M)
    assert titles == [documents["orion"].title, documents["helix"].title]
    assert licences.ORION_LAW in result["answer"] and licences.HELIX_LAW in result["answer"]
    assert _cited(result, documents["orion"]) and _cited(result, documents["helix"])


@pytest.mark.django_db
@pytest.mark.parametrize("agentic", [False, True])
def test_a_reference_routed_to_several_documents_alike_is_ambiguous(tenant, case, ingest_text, agentic):
    # "of the license agreement" routes to both licences (their titles share the words); neither is
    # named by anything else in the question, so each is answered and both are named.
    documents = licences.ingest_licences(case, ingest_text)
    ask = {"tenant": tenant, "use_cache": False, "filters": {"case_ids": [case.pk]}, "agentic": agentic}
    result = run_query(question="What is the governing law of the license agreement?", **ask).result
    assert result["clarification"]["type"] == "ambiguous"
    candidates = {c["document_id"] for c in result["clarification"]["candidates"]}
    assert candidates == {documents["orion"].pk, documents["helix"].pk}
    assert licences.ORION_LAW in result["answer"] and licences.HELIX_LAW in result["answer"]
    named = run_query(question="What is the governing law of the Orion license agreement?", **ask).result
    assert named.get("clarification") is None
    assert {c["document_id"] for c in named["citations"]} == {documents["orion"].pk}


@pytest.mark.parametrize(
    ("forms", "stem"),
    [
        (("distributor", "distribution", "distributorship", "distributors"), "distribut"),
        (("license", "licence", "licensing", "licensor", "licensee", "licences"), "licens"),
        (("sponsor", "sponsorship", "sponsorships"), "spons"),
        (("service", "services"), "servic"),
        (("supply", "supplier", "supplies"), "suppl"),
        (("promotion", "promotional"), "promot"),
    ],
)
def test_the_forms_of_one_kind_of_document_share_a_stem(forms, stem):
    assert {ambiguity.kind_stem(form) for form in forms} == {stem}


@pytest.mark.django_db
def test_a_kind_in_another_form_or_counted_fits_every_title_of_that_kind(tenant, case, ingest_text):
    # "the licence", "the two licensing agreements": the titles say "License Agreement".
    documents = licences.ingest_licences(case, ingest_text)
    both = {documents["orion"].pk, documents["helix"].pk}
    for question in (
        "What law governs the licence agreement?",
        "Which courts have jurisdiction under the licensing deal?",
        "Can either party assign the two license agreements?",
    ):
        found = ambiguity.candidates(tenant=tenant, question=question, filters=None)
        assert {c.document_id for c in found} == both, question
    # A word that names one of them still picks it; an unrelated kind fits neither.
    named = ambiguity.fitting(tenant=tenant, question="What law governs the Orion licence?", filters=None)
    assert [c.document_id for c in named] == [documents["orion"].pk]
    assert (
        ambiguity.fitting(tenant=tenant, question="What law governs the lease agreement?", filters=None) == []
    )


@pytest.mark.django_db
def test_a_reference_by_kind_routed_to_one_look_alike_by_score_is_still_ambiguous(tenant, case, ingest_text):
    # Only the Apache text calls itself a "contract": "the sponsorship contract" routes to it by
    # score alone, yet it may mean either sponsorship. A party's name settles it.
    cano = ingest_text(case, CANO, filename="cano-boyd-sponsorship.txt", title=CANO_TITLE)
    apache_text = APACHE.replace("This Sponsorship Agreement", "This Sponsorship Contract")
    apache = ingest_text(case, apache_text, filename="apache-lonestar-sponsorship.txt", title=APACHE_TITLE)
    ask = {"tenant": tenant, "use_cache": False, "filters": {"case_ids": [case.pk]}}
    question = "What is the governing law of the sponsorship contract?"
    alone = route(tenant=tenant, query=question, index_version=selectors.index_version_get(tenant=tenant))
    assert [d.document_id for d in alone.documents] == [apache.pk]  # what routing alone would do
    result = run_query(question=question, **ask).result
    assert result["clarification"]["type"] == "ambiguous"
    assert {c["document_id"] for c in result["clarification"]["candidates"]} == {cano.pk, apache.pk}
    assert "Oklahoma" in result["answer"] and "Kansas" in result["answer"]
    named = run_query(
        question="What is the governing law of the sponsorship contract with Boyd?", **ask
    ).result
    assert named.get("clarification") is None
    assert {c["document_id"] for c in named["citations"]} == {cano.pk}


@pytest.mark.django_db
def test_titles_holding_the_kind_as_written_fit_before_other_forms(tenant, case, ingest_text):
    services = ingest_text(case, CANO, filename="services.txt", title="Acme Services Agreement")
    ingest_text(case, APACHE, filename="servicing.txt", title="Loan Servicing Agreement")
    ask = {"tenant": tenant, "filters": None}
    as_written = ambiguity.fitting(question="What law governs the services agreement?", **ask)
    assert [c.document_id for c in as_written] == [services.pk]
    # No title says "service" otherwise: both forms fit, and the question may mean either.
    assert len(ambiguity.candidates(question="What law governs the servicer agreement?", **ask)) == 2
