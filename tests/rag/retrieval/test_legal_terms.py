"""Clause-type query expansion: recognising a clause named in a question, and finding the clause
when the contract never uses its name."""

import pytest

from rag.retrieval import legal_terms
from rag.retrieval.service import Reader, retrieve
from tenants.models import Role


@pytest.mark.parametrize(
    ("question", "names"),
    [
        ("Is there an anti-assignment clause in this contract?", ["anti-assignment"]),
        ("What is the governing law for this contract?", ["governing law"]),
        ("What is the expiration date of this contract?", ["expiration"]),
        ("Does the lease have a cap on liability?", ["cap on liability"]),
        ("Can either party terminate for convenience?", ["termination for convenience"]),
        ("Is there a right of first refusal (ROFR)?", ["right of first refusal"]),
        ("Who signed the memo about parking?", []),
        # The way people ask, without the clause's name
        ("When does the sponsorship of Honey Hole end?", ["expiration"]),
        ("Is it for a fixed term or does it run until notice?", ["expiration"]),
        ("When does his employment come to an end?", ["expiration"]),
        ("Can the dealer get out of the endorsement early?", ["termination for convenience"]),
        ("How are the profits split between the parties?", ["revenue sharing"]),
        ("What share of gross margin does the promoter get?", ["revenue sharing"]),
        ("What minimum detailing effort is the promoter committed to?", ["minimum commitment"]),
        ("Who owns the IP the consultant creates?", ["ip ownership"]),
        ("What limits on liability are in the agreement?", ["cap on liability"]),
        ("Which liabilities are not capped?", ["uncapped liability"]),
        ("What access to records does the company get?", ["audit rights"]),
        ("Can either side transfer its rights under the deal?", ["anti-assignment"]),
        ("When does the meeting start?", []),
        ("How long does the sponsorship last?", ["expiration"]),
        # A time limit inside the deal, not how long the deal runs
        ("How long does the supplier have to respond to a purchase order?", []),
        ("Does the developer assign its work product?", ["ip ownership"]),
        ("Can the developer assign the agreement?", ["anti-assignment"]),
    ],
)
def test_clause_types_named_in_questions(question, names):
    assert [clause.name for clause in legal_terms.clause_types(question)] == names


def test_expansion_appends_the_clause_wording_and_leaves_other_questions_alone():
    expanded = legal_terms.expand("Is there an anti-assignment clause?")
    assert expanded.startswith("Is there an anti-assignment clause? ")
    assert "prior written consent" in expanded
    assert legal_terms.expand("Who signed the memo?") == "Who signed the memo?"
    many = "assignment, insurance, audit and exclusivity terms"
    assert len(legal_terms.clause_types(many)) == legal_terms.MAX_CLAUSE_TYPES


@pytest.mark.parametrize(
    ("question", "text", "absent"),
    [
        ("What insurance must the supplier carry?", "The supplier shall deliver on time.", ["insurance"]),
        ("What insurance must the supplier carry?", "The supplier shall be insured.", []),
        ("Is there a non-compete?", "Neither party shall engage in a similar business.", []),
        ("Is there a non-compete?", "The fee is payable monthly.", ["non-compete"]),
        ("What law governs it?", "This Agreement is construed under the laws of Ohio.", []),
        # Incorporation under a law is no choice of law; a clause choosing one is.
        (
            "What law governs it?",
            "Acme, a corporation organized under the laws of Ohio, and Beta.",
            ["governing law"],
        ),
        ("What law governs it?", "The laws of England and Wales apply to this Agreement.", []),
        # A term that goes on by itself, in any of the ways contracts say so; a fixed term does not.
        ("Does the agreement renew?", "The term is two years from the Effective Date.", ["renewal"]),
        ("Does the agreement renew?", "It renews for successive one-year terms.", []),
        ("Does the agreement renew?", "Thereafter it is effective month to month until terminated.", []),
        ("Does the agreement renew?", "The Parties may extend the Term for an additional year.", []),
        # A renewal left to a later agreement, or an insurance policy renewed, is no renewal term.
        ("Does the agreement renew?", "It may be renewed upon mutual written agreement.", ["renewal"]),
        ("Does the agreement renew?", "All insurance policies shall be renewed on expiry.", ["renewal"]),
        # A right of first refusal in the words' other order is one.
        ("Is there a right of first refusal?", "TKCI will have First Right of Refusal on any sale.", []),
        ("Is there a right of first refusal?", "The fee is payable monthly.", ["right of first refusal"]),
        # An expiration date needs no particular word: never "absent"
        ("When does it expire?", "The fee is payable monthly.", []),
        ("Who signed the memo?", "The fee is payable monthly.", []),
    ],
)
def test_a_clause_is_absent_from_a_text_without_its_evidence_words(question, text, absent):
    assert [clause.name for clause in legal_terms.absent_clauses(question, [text])] == absent


def test_a_clause_is_absent_only_when_no_text_holds_its_words():
    question = "What insurance must the supplier carry?"
    assert legal_terms.absent_clauses(question, ["No such words.", "It shall maintain insurance."]) == []
    assert [c.name for c in legal_terms.absent_clauses(question, ["No such words.", "Nor here."])] == [
        "insurance"
    ]
    assert legal_terms.absent_clauses(question, []) == []


CONTRACT = (
    "SUPPLY CONTRACT between Vandelay Industries and Kramerica LLC.\n\n"
    "7. Transfer. Neither party may transfer this Agreement or any of its rights or obligations "
    "without the prior written consent of the other party.\n\n"
    "8. Notices. Notices shall be in writing and delivered by courier to the addresses above.\n\n"
    "9. Entire contract. This contract is the entire agreement of the parties; if any clause of this "
    "contract is held invalid, every other clause of this contract remains in force."
)


@pytest.mark.django_db
def test_a_clause_is_found_by_its_name_though_the_contract_never_uses_it(tenant, case, ingest_text, settings):
    settings.RAG_CHUNK_SIZE, settings.RAG_CHUNK_OVERLAP = 200, 0
    ingest_text(case, CONTRACT, filename="supply.txt")
    question = "Is there an anti-assignment clause in this contract?"

    def top():
        result = retrieve(
            tenant=tenant, query=question, top_k=3, similarity_threshold=0.0, reader=Reader(role=Role.OWNER)
        )
        return result, result.passages[0]

    result, first = top()
    assert result.clause_types == ("anti-assignment",)
    assert "7. Transfer." in first.text and "9. Entire" not in first.text
    assert "prior written consent" in first.snippet

    settings.RAG_QUERY_EXPANSION = False
    settings.RAG_RERANKER_MODEL = ""  # the cross-encoder would find the clause by meaning anyway
    result, first = top()
    assert result.clause_types == ()
    # Without it the words "clause" and "contract" win, not the answer.
    assert "clause of this contract" in first.text and "7. Transfer." not in first.text
