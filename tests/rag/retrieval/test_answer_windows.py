"""What the cross-encoder reads of a passage: answer windows (a sentence; a short heading read with
the sentence after it) ranked by the words they share with the question, and the prior that
discounts parties paragraphs, definitions, signature blocks, recitals and lone headings the question
does not ask for."""

import pytest

from rag.retrieval import legal_terms, snippets
from rag.retrieval.rerank import (
    CLAUSE_WORDS_PRIOR,
    MIN_WINDOW_CHARS,
    OFF_TOPIC_PRIOR,
    POINTER_PRIOR,
    answer_windows,
    score_passages,
    window_prior,
)

SERVICES = (
    "1. Services. The Supplier shall deliver the goods described in Schedule A to the Buyer at its premises."
)
LAW = (
    "13. Governing Law. This Agreement shall be governed by the laws of the State of Texas, without "
    "regard to its conflict of laws principles."
)
ASSIGNMENT = (
    "14. Assignment. Neither party may assign this Agreement without the prior written consent of "
    "the other party."
)
PASSAGE = f"{SERVICES}\n\n{LAW}\n\n{ASSIGNMENT}"


def windows(text: str, question: str, limit: int = 10) -> list[str]:
    return [text[start:end] for start, end in answer_windows(text, snippets.query_terms(question), limit)]


def test_a_short_heading_is_read_with_the_sentence_after_it():
    found = windows(PASSAGE, "What law governs the agreement?")
    assert sorted(found) == sorted([SERVICES, LAW, ASSIGNMENT])  # three windows, not six sentences
    assert all(not window.endswith(("Services.", "Governing Law.", "Assignment.")) for window in found)


def test_windows_are_ranked_by_the_words_they_share_with_the_question():
    assert windows(PASSAGE, "What law governs the agreement?", limit=1) == [LAW]
    assert windows(PASSAGE, "Can a party assign the agreement without consent?", limit=1) == [ASSIGNMENT]
    assert windows(PASSAGE, "Where must the Supplier deliver the goods?", limit=1) == [SERVICES]
    assert windows(PASSAGE, "Can a party assign the agreement without consent?", limit=2)[0] == ASSIGNMENT


def test_a_short_sentence_joins_only_the_next_one_and_long_sentences_stand_alone():
    long = "This sentence is long enough to stand on its own as an answer window, clearly."
    assert len("AAAAAAAAAA. " + long) >= MIN_WINDOW_CHARS
    text = f"AAAAAAAAAA. {long} {long}"
    found = windows(text, "sentence")
    assert found == [f"AAAAAAAAAA. {long}", long]  # equal matches: in text order
    assert answer_windows("   ", snippets.query_terms("anything"), 5) == []
    first = "This first sentence is comfortably longer than the minimum window of eighty characters."
    assert len(first) >= MIN_WINDOW_CHARS
    assert windows(f"{first} Short one.", "short") == ["Short one.", first]  # a short last one stays alone


PARTIES = (
    "This Sponsorship Agreement is entered into as of May 1, 2008 by and between Cano Petroleum, Inc., "
    "a corporation organized under the laws of the State of Delaware, and R. C. Boyd Enterprises, LLC."
)
OPERATIVE = "This Agreement shall be governed by the laws of the State of Oklahoma."


@pytest.mark.parametrize(
    "question",
    [
        "Which state's law governs the agreement?",
        "What law governs the Cano sponsorship with Boyd?",
        "How long does the agreement last?",
    ],
)
def test_a_parties_paragraph_is_discounted_unless_the_question_asks_for_the_parties(question):
    assert window_prior(question, PARTIES) == OFF_TOPIC_PRIOR < 1
    assert window_prior(question, OPERATIVE) == 1.0


@pytest.mark.parametrize(
    "question",
    [
        "Who are the parties to the agreement?",
        "Who signed the sponsorship agreement?",
        "What is the effective date of the agreement?",
        "When was the agreement entered into?",
    ],
)
def test_a_parties_paragraph_counts_when_the_question_asks_for_it(question):
    assert window_prior(question, PARTIES) == 1.0


def test_a_question_mentioning_a_party_does_not_ask_who_the_parties_are():
    assert (
        window_prior("May either party terminate the agreement for convenience?", PARTIES) == OFF_TOPIC_PRIOR
    )


DEFINITIONS = [
    '"Term" means the period of three (3) years beginning on the Effective Date.',
    "\u201cTerm\u201d shall mean the period of three (3) years beginning on the Effective Date.",
    '1.5 "Territory" refers to the United States of America and Canada.',
]


@pytest.mark.parametrize("definition", DEFINITIONS)
def test_a_definition_is_discounted_unless_the_question_asks_what_something_means(definition):
    assert window_prior("How long is the term of the agreement?", definition) == OFF_TOPIC_PRIOR
    assert window_prior("What is the Minimum Sales Force Level?", definition) == OFF_TOPIC_PRIOR
    assert window_prior('What does "Term" mean?', definition) == 1.0
    assert window_prior("How is the Minimum Sales Force Level defined?", definition) == 1.0
    assert window_prior("What is the meaning of Territory?", definition) == 1.0


def test_a_sentence_using_a_defined_term_is_not_a_definition():
    operative = 'The "Term" of this Agreement is three years, and either party may renew it by notice.'
    assert window_prior("How long is the term of the agreement?", operative) == 1.0


def test_a_lone_capitalised_heading_is_discounted():
    assert window_prior("What law governs the agreement?", "13. GOVERNING LAW.") == OFF_TOPIC_PRIOR
    assert window_prior("What law governs the agreement?", "ARTICLE IX") == OFF_TOPIC_PRIOR


def test_a_lone_title_case_heading_is_discounted():
    assert window_prior("What law governs the agreement?", "13. Governing Law.") == OFF_TOPIC_PRIOR


def test_a_signature_block_and_a_recital_are_discounted_unless_asked_for():
    signature = "IN WITNESS WHEREOF, the parties hereto have signed this Agreement by their representatives."
    recital = "WHEREAS, the parties desire to set forth the terms on which FCC will supply products."
    assert window_prior("What is the term of the franchise?", signature) == OFF_TOPIC_PRIOR
    assert window_prior("Who signed the agreement?", signature) == 1.0
    assert window_prior("What insurance must the supplier maintain?", recital) == OFF_TOPIC_PRIOR
    assert window_prior("What is the purpose of the agreement?", recital) == 1.0


def test_a_signature_block_after_a_page_note_is_still_a_signature_block():
    # It follows the last clause in the same window; "effective as of the date" answers nothing.
    signature = (
        "(The remainder of this page has intentionally been blank.) IN WITNESS WHEREOF, each of the "
        "parties has caused this Amendment to be executed effective as of the date first above written."
    )
    assert window_prior("When does the amendment take effect?", signature) == OFF_TOPIC_PRIOR
    assert window_prior("Who executed the amendment?", signature) == 1.0
    numbered = "[Signature page follows] 5 IN WITNESS WHEREOF, the parties have executed this Agreement."
    assert window_prior("Until when does FCC have to supply?", numbered) == OFF_TOPIC_PRIOR
    # A passage may start inside it: the formula is enough.
    tail = "the parties have executed this Agreement as of the date and year first set forth above."
    assert window_prior("Until when does FCC have to supply?", tail) == OFF_TOPIC_PRIOR
    counterparts = "This Agreement may be executed in multiple counterparts, each of which is an original."
    assert window_prior("Until when does FCC have to supply?", counterparts) == 1.0


def test_a_definition_pointing_elsewhere_counts_least_unless_the_meaning_is_asked():
    pointer = 'Section 1.60 "Minimum Sales Force Level" has the meaning set forth in Section 4.3(a).'
    assert window_prior("What are the minimum sales force requirements?", pointer) == POINTER_PRIOR
    assert POINTER_PRIOR < OFF_TOPIC_PRIOR
    assert window_prior("What does Minimum Sales Force Level mean?", pointer) == 1.0


def test_headings_run_together_are_discounted_and_a_short_clause_is_not():
    question = "What limits on liability are in the agreement?"
    headings = "ARTICLE XI INDEMNIFICATION; LIMITS ON LIABILITY Section 11.1 Indemnification."
    assert window_prior(question, headings) == OFF_TOPIC_PRIOR
    assert window_prior(question, "Neither party is liable for lost profits.") == 1.0


class Recording:
    """A reranker that scores every window 0.9 and records what it read."""

    name = "recording"

    def __init__(self):
        self.read: list[tuple[str, list[str]]] = []

    def score(self, query, passages):
        self.read.append((query, list(passages)))
        return [0.9] * len(passages)


def test_score_passages_applies_the_prior_and_gives_each_passage_its_best_window():
    question = "Which state's law governs the agreement?"
    texts = [f"{PARTIES}\n\n{OPERATIVE}", PARTIES, "   "]
    reranker = Recording()
    best = score_passages(
        reranker, question, texts, terms=snippets.query_terms(question), windows_per_passage=2
    )
    assert len(reranker.read) == 1  # one model call for every window of every passage
    first, parties_only, blank = best
    assert texts[0][first.start : first.end] == OPERATIVE and first.score == pytest.approx(0.9)
    assert texts[1][parties_only.start : parties_only.end] == PARTIES
    assert parties_only.score == pytest.approx(0.9 * OFF_TOPIC_PRIOR)
    assert blank is None


def test_a_window_without_the_asked_clauses_words_counts_less():
    # The model likes the indemnity sentence for an insurance question as much as the insurance one.
    question = "What insurance must the supplier maintain?"
    indemnity = "Each party shall indemnify and hold harmless the other party against all claims and losses."
    insurance = "The supplier shall provide five million dollars of commercial liability insurance."
    reranker = Recording()
    best = score_passages(
        reranker,
        question,
        [indemnity, insurance],
        terms=snippets.query_terms(question),
        windows_per_passage=1,
        evidence=legal_terms.evidence(question),
    )
    assert best[0].score == pytest.approx(0.9 * CLAUSE_WORDS_PRIOR)
    assert best[1].score == pytest.approx(0.9)
    # A question naming no clause with words of its own leaves the scores alone.
    assert legal_terms.evidence("When does the agreement expire?") == []


@pytest.mark.parametrize(
    "window",
    [
        "NON COMPETITION AGREEMENT AND RIGHT OF FIRST OFFER THIS AGREEMENT is dated May 3, 2006.",
        "(E) The Veoneer Parties and the Nissin Parties entered into that certain Amendment to Joint "
        "Venture Agreement as of June 28, 2019.",
    ],
)
def test_a_dated_title_line_and_a_recital_of_an_earlier_deal_are_discounted(window):
    # Both repeat the deal's own words ("right of first offer", "amendment"): the model likes them.
    assert window_prior("What right of first offer does Western Copper have?", window) == OFF_TOPIC_PRIOR
    assert window_prior("When does the amendment take effect?", window) == OFF_TOPIC_PRIOR
    assert window_prior("When is the agreement dated?", window) == 1.0


EFFECTIVE_DATE_ONLY = '1.1 This Agreement shall take effect 26 September 2019 (the "Effective Date").'
TERM = (
    '1.2 This Agreement shall take effect on 1 May 2019 (the "Effective Date") and shall continue '
    "unless and until either party gives notice to the other."
)


@pytest.mark.parametrize(
    "question",
    ["How long does the employment last?", "When does Crockett's employment come to an end?"],
)
def test_a_sentence_that_only_names_the_effective_date_is_discounted_for_how_long_it_lasts(question):
    # It shares "agreement", "employment" and a date with the question; it says nothing of the end.
    assert window_prior(question, EFFECTIVE_DATE_ONLY) == OFF_TOPIC_PRIOR
    assert window_prior(question, TERM) == 1.0  # the same start, with how long it continues


@pytest.mark.parametrize(
    "question",
    [
        "When does the service agreement take effect?",
        "When does the employment start?",
        "What is the effective date?",
        "When did the agreement commence?",
    ],
)
def test_the_effective_date_sentence_counts_when_the_question_asks_when_it_starts(question):
    assert window_prior(question, EFFECTIVE_DATE_ONLY) == 1.0


def test_the_priors_read_the_question_as_asked_not_the_clause_wording_added_for_the_model():
    # The expiration wording the model reads ("The term ... shall commence on the Effective Date
    # ...") names the effective date; the user asked how long the employment lasts.
    asked = "How long does the employment last?"
    question = legal_terms.expand(asked)
    assert "Effective Date" in question and window_prior(question, EFFECTIVE_DATE_ONLY) == 1.0
    texts = [EFFECTIVE_DATE_ONLY, PARTIES]
    reranker = Recording()
    best = score_passages(
        reranker, question, texts, terms=snippets.query_terms(question), windows_per_passage=1, asked=asked
    )
    assert reranker.read[0][0] == question  # the model still reads the clause wording
    assert [window.score for window in best] == pytest.approx([0.9 * OFF_TOPIC_PRIOR] * 2)


AUDIT = (
    "14.3 Each Party shall keep accurate books, accounts and records covering all transactions "
    "relating to this Agreement, and upon request from the other Party, shall allow access to same. "
    "14.4 Either Party shall have the right to request the other to provide, through an auditor agreed "
    "to by the Parties, validation of the information and data referred to herein. "
    "14.5 Each Party shall maintain complete maintenance and operational records."
)


def test_the_last_window_goes_to_the_sentence_with_most_of_the_users_own_words():
    asked = "Can Purolator have the data checked by an auditor?"
    question = legal_terms.expand(asked)  # "... keep complete and accurate books and records ..."
    terms = snippets.query_terms(question)
    by_wording = windows(AUDIT, question, limit=2)
    assert not any("auditor" in window for window in by_wording)  # the wording alone misses it
    chosen = answer_windows(AUDIT, terms, 2, snippets.query_terms(asked))
    assert [AUDIT[start:end] for start, end in chosen] == [
        by_wording[0],
        AUDIT[AUDIT.index("14.4") : AUDIT.index(" 14.5")],
    ]
    # Already among the best by the wording, or one window only: nothing changes.
    assert answer_windows(AUDIT, terms, 1, snippets.query_terms(asked)) == answer_windows(AUDIT, terms, 1)
    assert answer_windows(AUDIT, terms, 3, snippets.query_terms("Who keeps books?")) == answer_windows(
        AUDIT, terms, 3
    )
