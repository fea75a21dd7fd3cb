"""The request options that change the offline provider's answer (orchestration spec, "Built-in
Templates", "Strictness Levels", "Citation Styles"): `response_style` (terse: the one operative
sentence; detailed: more supporting quotes), `strictness` (strict: only quotes that score close to
the lead; lenient: weaker ones too) and `end_list` (a "Sources:" list ends the answer). With the
default options (balanced, normal, inline_numbers) the answer is the one it has always been."""

import json

import pytest

from rag.llm import GenerationRequest, Source
from rag.llm.extractive import MAX_QUOTES, ExtractiveProvider, answer

QUESTION = "How can the agreement be terminated?"
TERMINATION = "Either party may terminate this Agreement on ninety (90) days written notice."
CURE = "The notice shall state the breach, which the other party may cure within thirty days."
INSOLVENCY = "A party may terminate at once if the other party becomes insolvent."
CHANGE = "The Customer may terminate on a change of control of the Supplier."
CONVENIENCE = "The Customer may terminate for convenience after the first year."
SURVIVAL = "Payment obligations survive any termination of this Agreement."


def window(citation_id, focus, score, *, document_id=1, title="Acme Globex MSA", page=1):
    """A reranked passage: its best answer window `focus` scored `score` by the cross-encoder."""
    return Source(
        citation_id=citation_id,
        document_id=document_id,
        title=title,
        page=page,
        text=f"Words before. {focus} Words after.",
        similarity_score=0.5,
        answer_score=score,
        focus=focus,
    )


def cited(reply) -> list[str]:
    return [citation["id"] for citation in reply["citations"]]


# Windows of one contract, best first, all close enough to the lead to be quoted by default.
FIVE_WINDOWS = [
    window("1", f"{TERMINATION} {CURE}", 0.95),
    window("2", INSOLVENCY, 0.9),
    window("3", CHANGE, 0.85),
    window("4", CONVENIENCE, 0.8),
    window("5", SURVIVAL, 0.75),
]


def test_terse_quotes_only_the_operative_sentence_of_the_lead_window():
    balanced = answer(QUESTION, FIVE_WINDOWS)
    terse = answer(QUESTION, FIVE_WINDOWS, response_style="terse")
    assert terse["answer"] == f'Acme Globex MSA states: "{TERMINATION}" [1]'
    assert terse["citations"] == [{"id": "1", "doc_id": "1", "snippet": TERMINATION}]
    assert CURE in balanced["answer"] and len(cited(balanced)) == MAX_QUOTES


def test_detailed_quotes_more_supporting_windows_than_balanced():
    balanced = answer(QUESTION, FIVE_WINDOWS)
    detailed = answer(QUESTION, FIVE_WINDOWS, response_style="detailed")
    assert cited(balanced) == ["1", "2", "3"]
    assert cited(detailed) == ["1", "2", "3", "4", "5"]
    assert CONVENIENCE in detailed["answer"] and SURVIVAL in detailed["answer"]


# A lead window, one that scores 0.42 of it, and one that scores 0.21 of it.
GRADED = [window("1", TERMINATION, 0.95), window("2", INSOLVENCY, 0.4), window("3", CHANGE, 0.2)]


@pytest.mark.parametrize(
    ("strictness", "expected"), [("strict", ["1"]), ("normal", ["1", "2"]), ("lenient", ["1", "2", "3"])]
)
def test_strictness_sets_how_close_to_the_lead_a_supporting_window_must_score(strictness, expected):
    assert cited(answer(QUESTION, GRADED, strictness=strictness)) == expected


def test_strictness_also_sets_the_bar_for_sentences_matched_by_words():
    # Without reranking, sentences score by the question's words they hold: here 1, 0.74 and 0.43
    # of the best one.
    sources = [
        Source(
            "1",
            11,
            "Initech lease",
            3,
            "Landlord may terminate this Lease on thirty days notice if rent is unpaid.",
        ),
        Source("2", 12, "Acme lease", 1, "The landlord may end the lease if the rent is unpaid."),
        Source("3", 13, "Hooli lease", 1, "The landlord may terminate on notice."),
    ]
    question = "When may the landlord terminate the lease for unpaid rent?"
    assert cited(answer(question, sources, strictness="strict")) == ["1"]
    assert cited(answer(question, sources)) == ["1", "2"]
    assert cited(answer(question, sources, strictness="lenient")) == ["1", "2", "3"]


def test_end_list_ends_the_answer_with_a_sources_list():
    sources = [window("1", TERMINATION, 0.95, page=4), window("2", INSOLVENCY, 0.9, page=7)]
    plain = answer(QUESTION, sources)
    listed = answer(QUESTION, sources, citation_style="end_list")
    assert "Sources:" not in plain["answer"]
    assert listed["answer"] == (
        plain["answer"] + "\n\nSources:\n[1] Acme Globex MSA, p. 4\n[2] Acme Globex MSA, p. 7"
    )
    assert listed["citations"] == plain["citations"]


def test_i_dont_know_has_no_sources_list():
    unrelated = Source("1", 1, "Acme MSA", 1, "The parties signed on Tuesday.", similarity_score=0.1)
    reply = answer("What is the airspeed of a swallow?", [unrelated], citation_style="end_list")
    assert reply["answer"] == "I don't know." and reply["citations"] == []


def test_the_provider_takes_the_options_from_the_request():
    request = GenerationRequest(
        system="",
        prompt="",
        question=QUESTION,
        sources=tuple(FIVE_WINDOWS),
        response_style="terse",
        strictness="strict",
        citation_style="end_list",
    )
    reply = json.loads(ExtractiveProvider().generate(request).text)
    assert (
        reply["answer"]
        == f'Acme Globex MSA states: "{TERMINATION}" [1]\n\nSources:\n[1] Acme Globex MSA, p. 1'
    )


def test_the_default_options_are_balanced_normal_and_inline_numbers():
    explicit = answer(
        QUESTION, GRADED, response_style="balanced", strictness="normal", citation_style="inline_numbers"
    )
    assert answer(QUESTION, GRADED) == explicit
    request = GenerationRequest(system="", prompt="", question=QUESTION, sources=tuple(GRADED))
    assert json.loads(ExtractiveProvider().generate(request).text) == explicit
