"""Snippets: exact document offsets, the best sentence, the window around it, validation, real text."""

from __future__ import annotations

import random
import re
import statistics
from pathlib import Path

import pytest

from rag.ingest.chunking import BLANK_CHARS
from rag.retrieval.snippets import (
    QueryTerms,
    Snippet,
    best_snippet,
    query_terms,
    sentence_spans,
    stem,
)

CUAD_DIR = Path("/work/shared/eval/legalbench-cuad/corpus/cuad")
BLANK = frozenset(BLANK_CHARS)
SIGN_AND_BLANKS = re.compile(r"[\u00a7\u00b6][\s\ufeff\u200b]+")
NO_TERMS = QueryTerms()


def is_blank_at(text: str, pos: int) -> bool:
    """Whether text[pos] is blank (pos outside the text counts as blank: an edge)."""
    return pos < 0 or pos >= len(text) or text[pos] in BLANK


def check(document: str, offset: int, passage: str, snippet: Snippet, size: int) -> None:
    """Every snippet guarantee that holds whatever the query."""
    assert document[offset : offset + len(passage)] == passage
    assert document[snippet.start : snippet.end] == snippet.text  # the exact-offset invariant
    assert offset <= snippet.start < snippet.end <= offset + len(passage)
    assert snippet.start <= snippet.sentence_start < snippet.sentence_end <= snippet.end
    assert 0 < len(snippet.text) <= size
    assert snippet.text[0] not in BLANK and snippet.text[-1] not in BLANK
    # Words are whole: the snippet starts after a blank or at the passage's edge, and ends likewise,
    # unless a single word longer than the window had to be cut ("§ 12" counting as one word).
    local_start, local_end = snippet.start - offset, snippet.end - offset
    if not (len(snippet.text) == size and not BLANK.intersection(SIGN_AND_BLANKS.sub("", snippet.text))):
        assert is_blank_at(passage, local_start - 1), (passage[local_start - 10 : local_start + 10], snippet)
        assert is_blank_at(passage, local_end), (passage[local_end - 10 : local_end + 10], snippet)
    trimmed = passage.strip(BLANK_CHARS)
    if len(trimmed) <= size:
        assert snippet.text == trimmed


def snippet_of(passage: str, query: str | QueryTerms, size: int = 300, offset: int = 0) -> Snippet:
    terms = query_terms(query) if isinstance(query, str) else query
    snippet = best_snippet(passage=passage, offset=offset, terms=terms, size=size)
    check(" " * offset + passage, offset, passage, snippet, size)
    return snippet


def sentence_text(passage: str, snippet: Snippet, offset: int = 0) -> str:
    """The whole sentence the snippet marks as best (its span is clipped to the snippet)."""
    for start, end in sentence_spans(passage):
        if start <= snippet.sentence_start - offset < end:
            return passage[start:end]
    raise AssertionError("the best sentence is no sentence of the passage")


def filler(n: int, seed: int = 0) -> str:
    """`n` plain sentences (about 60 characters each) that match none of the test queries."""
    rng = random.Random(seed)
    words = ["the", "buyer", "seller", "goods", "invoice", "delivered", "within", "ten", "business", "week"]
    out = []
    for _ in range(n):
        sentence = " ".join(rng.choice(words) for _ in range(rng.randint(8, 12)))
        out.append(sentence[0].upper() + sentence[1:] + ".")
    return " ".join(out)


# ---------------------------------------------------------------- sentences


def test_sentence_spans_are_trimmed_and_split_at_sentence_ends():
    text = "  First sentence.  Second one!\tThird?\r\n\r\nA heading\n\nLast line without a period \n"
    spans = sentence_spans(text)
    assert [text[a:b] for a, b in spans] == [
        "First sentence.",
        "Second one!",
        "Third?",
        "A heading",
        "Last line without a period",
    ]


@pytest.mark.parametrize(
    "text",
    [
        "Acme Holdings Inc. Delaware is the seller here.",
        "Goods made in the U.S. Buyer pays the freight.",
        "As set out in Sec. 2 The Buyer pays the freight.",
        "Both parties, e.g. Acme and Globex, agree.",
        "Signed by John A. Smith for the seller.",
        "See Smith v. Jones for the rule.",
        "The fee is $1.50 per unit, see No. 4 Below.",
    ],
)
def test_legal_abbreviations_do_not_end_sentences(text):
    assert sentence_spans(text) == [(0, len(text))]


def test_list_markers_at_line_starts_do_not_end_sentences():
    text = "The Buyer shall:\n1. Pay the fee.\n2. Take delivery."
    sentences = [text[a:b] for a, b in sentence_spans(text)]
    assert sentences == ["The Buyer shall:\n1. Pay the fee.", "2. Take delivery."]


@pytest.mark.parametrize("text", ["", "   ", "\r\n\t\u00a0\ufeff\u200b"])
def test_blank_text_has_no_sentences(text):
    assert sentence_spans(text) == []


# ---------------------------------------------------------------- query terms and stemming


@pytest.mark.parametrize(
    "family",
    [
        ["terminate", "terminated", "terminates", "terminating", "termination", "terminations", "terminable"],
        ["license", "licensed", "licenses", "licensing", "licensee", "licensees", "licensor"],
        ["indemnify", "indemnified", "indemnification", "indemnity", "indemnities"],
        ["assign", "assigned", "assignment", "assigns", "assignee"],
        ["pay", "payment", "payments", "payable"],
        ["agree", "agreed", "agrees", "agreement"],
        ["party", "parties"],
        ["renew", "renewal", "renewed"],
        ["confidential", "confidentiality"],
        ["commit", "committed"],
        ["notify", "notified", "notification"],
    ],
)
def test_word_families_share_a_stem(family):
    assert len({stem(word) for word in family}) == 1, {word: stem(word) for word in family}


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("notify", "not"),
        ("notice", "notify"),
        ("term", "termination"),
        ("business", "busy"),
        ("status", "sta"),
    ],
)
def test_unrelated_words_keep_apart(one, other):
    assert stem(one) != stem(other)


def test_query_terms_parse_words_phrases_and_identifiers():
    terms = query_terms('When may the Licensee terminate under Section 10.2 "change of control"? -lease')
    by_kind = {kind: [t for t in terms.terms if t.kind == kind] for kind in ("word", "phrase", "identifier")}
    assert [t.text for t in by_kind["phrase"]] == ["change of control"]
    assert [t.text for t in by_kind["identifier"]] == ["Section 10.2"]
    # Stopwords ("when", "may", "the", "under", "of") and excluded words ("-lease") are not terms;
    # the identifier's label is a (weak) word.
    words = sorted(t.text for t in by_kind["word"])
    assert words == ["change", "control", "licensee", "section", "terminate"]
    weights = {t.text: t.weight for t in terms.terms}
    assert weights["Section 10.2"] > weights["change of control"] > weights["terminate"] > weights["section"]


@pytest.mark.parametrize("query", ["", "   ", "what is the", "-lease", '""'])
def test_queries_with_nothing_to_match_give_empty_terms(query):
    assert not query_terms(query)


def test_query_terms_need_a_string():
    with pytest.raises(TypeError):
        query_terms(None)


# ---------------------------------------------------------------- the best sentence


def test_stemmed_words_pick_the_sentence():
    passage = "The seller ships the goods. Either party may end the deal on termination notice. Fees are due."
    snippet = snippet_of(passage, "when can it be terminated", size=40)
    assert sentence_text(passage, snippet) == "Either party may end the deal on termination notice."
    # The sentence is longer than the window: the part around "termination", the span clipped to it.
    assert snippet.text == "party may end the deal on termination"
    assert (snippet.sentence_start, snippet.sentence_end) == (snippet.start, snippet.end)


def test_a_section_number_does_not_match_a_longer_one():
    passage = (
        "Section 10.25 covers notices to the seller and to the buyer. "
        "Section 110.2 covers the insurance policy of the seller. "
        "Section 10.2 covers payment of every invoice by the buyer. "
        "Section 10.2.5 is somewhere else."
    )
    snippet = snippet_of(passage, "what does Section 10.2 say", size=70)
    assert sentence_text(passage, snippet) == "Section 10.2 covers payment of every invoice by the buyer."


def test_a_section_sign_identifier_matches_any_dash():
    passage = "Under 12-207 nothing happens. Under \u00a7 2\u2013207 additional terms are proposals. Fine."
    snippet = snippet_of(passage, "\u00a7 2-207", size=50)
    assert sentence_text(passage, snippet) == "Under \u00a7 2\u2013207 additional terms are proposals."


def test_an_identifier_beats_many_words():
    passage = (
        "The payment of the invoice is due on delivery of the goods to the buyer. Rule 12(b)(6) applies."
    )
    snippet = snippet_of(passage, "Rule 12(b)(6) payment invoice delivery goods buyer", size=40)
    assert sentence_text(passage, snippet) == "Rule 12(b)(6) applies."


def test_a_quoted_phrase_beats_its_scattered_words():
    passage = (
        "A change in the board gives the buyer control of the audit. "
        "After a change of control the seller may end the deal. "
        "Nothing else happens."
    )
    snippet = snippet_of(passage, '"change of control"', size=60)
    assert sentence_text(passage, snippet) == "After a change of control the seller may end the deal."
    # Unquoted, both sentences hold both words: the earlier one wins.
    snippet = snippet_of(passage, "change of control", size=60)
    assert sentence_text(passage, snippet).startswith("A change in the board")


def test_longer_words_weigh_more_than_short_ones():
    passage = "The fee is due on the first day. Termination needs a written reason. Nothing else."
    snippet = snippet_of(passage, "fee termination", size=40)
    assert sentence_text(passage, snippet) == "Termination needs a written reason."


def test_words_in_every_contract_weigh_little():
    # "agreement" is longer than "fees", but nearly every contract sentence could contain it.
    passage = "This Agreement binds both sides today. Fees follow the price list. Nothing else."
    snippet = snippet_of(passage, "agreement fees", size=40)
    assert sentence_text(passage, snippet) == "Fees follow the price list."


def test_a_word_rare_in_the_passage_weighs_more():
    passage = "Notice goes to the buyer. Notice goes to the seller. A breach voids the deal. Notice is final."
    snippet = snippet_of(passage, "notice breach", size=30)
    assert sentence_text(passage, snippet) == "A breach voids the deal."


def test_distinct_terms_count_once():
    passage = "Fees, fees and fees again and more fees. Late fees accrue interest. Nothing else here."
    snippet = snippet_of(passage, "late fees", size=40)
    assert sentence_text(passage, snippet) == "Late fees accrue interest."


def test_ties_go_to_the_earliest_sentence():
    passage = "Nothing here at all. Termination is in writing. Termination is by mail. Nothing else."
    snippet = snippet_of(passage, "termination", size=30)
    assert sentence_text(passage, snippet) == "Termination is in writing."


@pytest.mark.parametrize("query", ["zebra crossing", "", "the of and"])
def test_no_match_starts_at_the_passage_start(query):
    passage = "\n  " + filler(20, seed=3)
    snippet = snippet_of(passage, query, size=200, offset=500)
    assert snippet.start == 503
    first = sentence_spans(passage)[0]
    assert (snippet.sentence_start, snippet.sentence_end) == (500 + first[0], 500 + first[1])
    assert snippet.text.endswith(".")  # whole sentences, then the start of the next one at most
    assert len(snippet.text) > 150


# ---------------------------------------------------------------- the window


def test_a_short_passage_is_the_whole_trimmed_passage():
    passage = "\r\n  The fee is due.  Termination needs notice.\t\n"
    snippet = snippet_of(passage, "termination", size=300, offset=1000)
    assert snippet.text == "The fee is due.  Termination needs notice."
    assert (snippet.start, snippet.end) == (1004, 1004 + len(snippet.text))
    assert sentence_text(passage, snippet, offset=1000) == "Termination needs notice."


def test_a_passage_of_exactly_size_characters_is_whole():
    passage = "Termination needs notice. " + filler(5)
    passage = passage[: passage.rfind(" ", 0, 200)]
    snippet = snippet_of(passage, "zebra", size=len(passage))
    assert snippet.text == passage


def test_the_window_grows_by_whole_sentences_around_the_best_one():
    before, after = filler(10, seed=1), filler(10, seed=2)
    best = "Termination requires ninety days written notice."
    passage = f"{before} {best} {after}"
    snippet = snippet_of(passage, "termination notice", size=300)
    assert best in snippet.text
    assert sentence_text(passage, snippet) == best
    # Sentences on both sides, the window ending at a sentence end and filled to about `size`.
    assert snippet.text.index(best) > 0 and not snippet.text.endswith(best)
    assert snippet.text.endswith(".")
    assert 300 * 0.9 - 15 <= len(snippet.text) <= 300


def test_room_left_is_filled_from_the_previous_sentence_keeping_the_sentence_end():
    long_before = "The buyer " + "and the seller " * 30 + "agree."  # 466 chars: never whole
    best = "Termination requires notice."
    long_after = "The seller " + "and the buyer " * 30 + "agree."
    passage = f"{long_before} {best} {long_after}"
    snippet = snippet_of(passage, "termination", size=200)
    assert snippet.text.endswith(best)
    assert 200 * 0.9 - 15 <= len(snippet.text) <= 200
    assert sentence_text(passage, snippet) == best


def test_the_first_sentence_is_followed_by_the_start_of_the_next():
    best = "Termination requires notice."
    passage = f"{best} The seller " + "and the buyer " * 30 + "agree."
    snippet = snippet_of(passage, "termination", size=200)
    assert snippet.start == 0 and snippet.text.startswith(best)
    assert 200 * 0.9 - 15 <= len(snippet.text) <= 200


def test_a_long_sentence_is_cut_around_its_matches():
    words = ["the", "buyer", "and", "seller", "shall", "deliver", "goods", "weekly"]
    rng = random.Random(7)
    head = " ".join(rng.choice(words) for _ in range(120))
    tail = " ".join(rng.choice(words) for _ in range(120))
    sentence = f"Whereas {head} subject to Section 10.2 and its indemnification duties {tail}."
    passage = f"Short first one. {sentence} Short last one."
    snippet = snippet_of(passage, "indemnify under Section 10.2", size=150)
    assert "Section 10.2 and its indemnification duties" in snippet.text
    assert 150 - 15 <= len(snippet.text) <= 150
    # Centred: the matched words are neither at the very start nor at the very end.
    position = snippet.text.index("Section 10.2")
    assert 30 < position < 100
    assert sentence_text(passage, snippet) == sentence
    assert (snippet.sentence_start, snippet.sentence_end) == (snippet.start, snippet.end)  # clipped


def test_a_long_first_sentence_without_matches_starts_at_the_passage_start():
    passage = "Whereas " + "the buyer and the seller " * 40 + "agree. Then more."
    snippet = snippet_of(passage, "zebra", size=100)
    assert snippet.start == 0 and snippet.text.startswith("Whereas the buyer")


def test_a_word_longer_than_the_window_is_cut_hard():
    url = "https://example.com/" + "a" * 400
    passage = f"{url} is the termination portal address."
    snippet = snippet_of(passage, "zebra", size=100)
    assert snippet.text == url[:100]
    # A matching part made of whole words is preferred to the hard cut.
    snippet = snippet_of(passage, "termination portal", size=100)
    assert snippet.text == "is the termination portal address."


@pytest.mark.parametrize(
    "passage",
    [
        # Filled backwards from the previous sentence, forwards into the next one, and a long sentence.
        "The seller " + "and the buyer " * 20 + "act under \u00a7 12 of the code. "
        "Termination requires notice. The buyer " + "and the seller " * 20 + "agree.",
        "Termination requires notice. The buyer acts under \u00a7 12 of the code "
        + "and the seller " * 20
        + "agree.",
        "The buyer acts under \u00a7 12 and \u00b6 3 on termination " + "and the seller " * 20 + "agree.",
    ],
)
def test_a_section_sign_stays_with_its_number(passage):
    starts, ends = set(), set()
    for size in range(30, 130):
        snippet = snippet_of(passage, "termination", size=size)
        starts.add(snippet.text.split()[0])
        ends.add(snippet.text.split()[-1])
    assert not {"12", "3"} & starts, starts
    assert not {"\u00a7", "\u00b6"} & ends, ends
    assert "\u00a7" in starts | ends or "12" in ends  # the sign was at a window edge at some size


def test_whitespace_inside_the_snippet_is_kept_verbatim():
    passage = "Nothing here.\r\n\r\nTermination\r\n  requires\tnotice.\u00a0\u00a0Fees apply.\r\n"
    passage += filler(10)
    snippet = snippet_of(passage, "termination", size=80)
    assert snippet.text.startswith("Nothing here.\r\n\r\nTermination\r\n  requires\tnotice.\u00a0\u00a0Fees")


# ---------------------------------------------------------------- validation


@pytest.mark.parametrize("size", [0, -1, 1.5, "300", None, True])
def test_size_must_be_a_positive_int(size):
    with pytest.raises(ValueError, match="size"):
        best_snippet(passage="Some text.", offset=0, terms=NO_TERMS, size=size)


@pytest.mark.parametrize("passage", ["", "   ", "\r\n\t\ufeff"])
def test_an_empty_passage_is_refused(passage):
    with pytest.raises(ValueError, match="empty passage"):
        best_snippet(passage=passage, offset=0, terms=NO_TERMS, size=300)


@pytest.mark.parametrize("offset", [-1, 1.0, None])
def test_the_offset_must_be_a_non_negative_int(offset):
    with pytest.raises(ValueError, match="offset"):
        best_snippet(passage="Some text.", offset=offset, terms=NO_TERMS, size=300)


def test_size_one_still_keeps_every_guarantee():
    snippet = snippet_of("Termination requires notice. Fees apply.", "fees", size=1)
    assert snippet.text == "F"


# ---------------------------------------------------------------- many passages


def random_document(rng: random.Random, n: int) -> str:
    pieces = ["Termination", "terminated", "notice", "Inc.", "U.S.", "Sec. 2", "e.g.", "No. 4",
              "Section 10.2", "Section 10.25", "\u00a7 2-207", "\u00a7", "\u00b6 3", "fee;",
              "end.", "why?", "yes!", "(a)", "1.", "caf\u00e9", "\u00fcber", "na\u00efve",
              "\u4e2d\u6587", "\U0001f600", "e\u0301", "\u2014", "\u201cquoted.\u201d",
              "x" * 70, "_" * 130, " ", " ", " ", " ", "  ", "\n", "\r\n", "\r\n\r\n", "\n\n",
              "\t", "\x0c", "\u00a0", "\ufeff", "\u200b", ". ", "the", "buyer", "seller",
              "goods", "licensee"]  # fmt: skip
    return "".join(rng.choice(pieces) for _ in range(n))


def test_random_passages_keep_every_guarantee():
    rng = random.Random(29)
    queries = [
        "",
        "termination notice",
        "Section 10.2",
        "\u00a7 2-207 fee",
        '"the buyer"',
        "caf\u00e9 licensee",
        "what is Sec. 2 about",
        "zebra",
        "\U0001f600 yes",
    ]
    document = random_document(rng, 30000)
    terms = [query_terms(query) for query in queries]
    checked = 0
    for _ in range(1500):
        offset = rng.randrange(len(document))
        passage = document[offset : offset + rng.randint(1, 1200)]
        if not passage.strip(BLANK_CHARS):
            continue
        size = rng.choice([1, 5, 30, 80, 150, 300, 300, 600])
        snippet = best_snippet(passage=passage, offset=offset, terms=rng.choice(terms), size=size)
        check(document, offset, passage, snippet, size)
        checked += 1
    assert checked > 1000


def cuad_passages(count: int, seed: int) -> list[tuple[str, int, str]]:
    """(document, offset, passage) triples: 1,000-character passages at random offsets."""
    files = sorted(CUAD_DIR.glob("*.txt"))[:6]
    rng = random.Random(seed)
    documents = [path.read_text(encoding="utf-8") for path in files]
    out = []
    for _ in range(count):
        document = rng.choice(documents)
        offset = rng.randrange(len(document) - 1000)
        out.append((document, offset, document[offset : offset + 1000]))
    return out


@pytest.mark.skipif(not CUAD_DIR.is_dir(), reason="CUAD eval corpus not present")
def test_real_contract_passages_keep_every_guarantee():
    queries = [
        "when can the agreement be terminated for breach",
        "governing law",
        "Section 2.1",
        '"intellectual property"',
        "who must indemnify whom",
        "exclusivity",
        "zebra",
    ]
    terms = [query_terms(query) for query in queries]
    lengths = []
    for document, offset, passage in cuad_passages(300, seed=31):
        for query_terms_ in terms:
            snippet = best_snippet(passage=passage, offset=offset, terms=query_terms_, size=300)
            check(document, offset, passage, snippet, 300)
            lengths.append(len(snippet.text))
    # About `size` characters: real text has long runs of blanks and odd lines, so a median.
    assert statistics.median(lengths) >= 250


@pytest.mark.skipif(not CUAD_DIR.is_dir(), reason="CUAD eval corpus not present")
def test_real_contract_passages_show_the_query_word():
    found = 0
    for document, offset, passage in cuad_passages(200, seed=37):
        word = re.search(r"\b(terminat\w*|indemnif\w*|confidential\w*|assign\w*)\b", passage, re.I)
        if not word:
            continue
        snippet = best_snippet(passage=passage, offset=offset, terms=query_terms(word.group()), size=300)
        check(document, offset, passage, snippet, 300)
        sentence = document[snippet.sentence_start : snippet.sentence_end]
        assert stem(word.group().lower()) in {stem(w.lower()) for w in re.findall(r"\w+", sentence)}
        found += 1
    assert found > 20
