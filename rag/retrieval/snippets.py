"""The snippet shown with a citation: a short window of a retrieved passage around its best sentence.

A snippet is a span of the document text, never a rewritten copy: `text == document.text[start:end]`
(whitespace and line breaks inside it are kept as they are; the UI collapses them). Offsets are
Python string indices (code points) into the document text: a passage's `offset` (the chunk's
`char_start`) plus the position in the passage.

How a passage is cut:
- its sentences (`sentence_spans`, the chunker's sentence rules: "U.S.", "Inc.", "Sec. 2" and list
  markers are no sentence ends) are scored against the query: the sum of the weights of the distinct
  query terms a sentence contains. A word weighs more the longer it is and the fewer of the
  passage's sentences contain it; ubiquitous contract words ("agreement", "party") weigh less,
  stopwords nothing. Quoted phrases and legal identifiers ("Section 10.2", "§ 2-207",
  "Rule 12(b)(6)") weigh more than any word. Words match after light stemming ("terminate",
  "terminated", "termination"). The first of equally good sentences wins; with no match at all it
  is the first sentence;
- the window is that sentence plus whole neighbouring sentences (the next one first, then
  alternately) while they fit in `size` characters; room left over (at least a tenth of `size`) is
  filled with the end of the preceding sentence, so the snippet still ends at a sentence end, or,
  when the best sentence is the passage's first, with the start of the next one. A sentence longer
  than `size` is cut to the `size` characters holding the most matched terms (centred on them);
- a window starts at a word start and ends at a word end (passage edges count as both), except when
  one word is longer than `size`: it is cut hard. A passage no longer than `size` once trimmed is
  the snippet as a whole.

Pure functions: no ORM, no model. Parse the query once with `query_terms` and reuse the result for
every passage; a 1,000-character passage takes well under a millisecond.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_right
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from rag.ingest.chunking import BLANK_CHARS, sentence_breaks

from .identifiers import python_regex
from .keyword import parse_query

IDENTIFIER_WEIGHT = 12.0
PHRASE_MIN_WEIGHT = 8.0
PHRASE_FACTOR = 1.5  # a phrase weighs at least its words' weights times this
COMMON_FACTOR = 0.4  # weight factor of words found in nearly every contract
MAX_RARITY = 2.0  # most a word's weight grows for being in few of the passage's sentences (words <= 6)
MIN_FILL = 0.1  # share of `size` worth filling with part of a neighbouring sentence

_BLANK = frozenset(BLANK_CHARS)
_WORD = re.compile(r"\w+")
# What a snippet never cuts: a word (blanks delimit it), or "§ 12", "¶ 3" (a sign with its number).
_UNIT = re.compile(r"(?:[^\s\ufeff\u200b]*[\u00a7\u00b6][\s\ufeff\u200b]+)*[^\s\ufeff\u200b]+")

STOPWORDS = frozenset(
    [
        "a", "about", "above", "after", "again", "against", "all", "also", "am", "an", "and", "any", "are",
        "as", "at", "be", "because", "been", "before", "being", "below", "between", "both", "but", "by",
        "can", "could", "did", "do", "does", "doing", "done", "down", "during", "each", "either", "else",
        "for", "from", "further", "had", "has", "have", "having", "he", "her", "here", "hers", "him", "his",
        "how", "i", "if", "in", "into", "is", "it", "its", "itself", "let", "may", "me", "might", "more",
        "most", "must", "my", "neither", "no", "nor", "not", "of", "off", "on", "once", "only", "or",
        "other", "our", "ours", "out", "over", "own", "per", "said", "same", "say", "says", "she", "should",
        "shall", "so", "some", "such", "than", "that", "the", "their", "theirs", "them", "then", "there",
        "these", "they", "this", "those", "through", "thus", "to", "too", "under", "until", "up", "upon",
        "us", "very", "via", "was", "we", "were", "what", "when", "where", "whether", "which", "while",
        "who", "whom", "whose", "why", "will", "with", "within", "without", "would", "you", "your", "yours",
    ]
)  # fmt: skip
# Words nearly every contract sentence could contain: they count, but little.
COMMON_WORDS = frozenset(
    [
        "agreement", "agreements", "party", "parties", "contract", "contracts", "section", "sections",
        "clause", "clauses", "provision", "provisions", "herein", "hereof", "hereto", "hereunder",
        "thereof", "thereto", "therein", "document",
    ]
)  # fmt: skip

# Three Porter-like steps, each removing at most one suffix: an inflection, then an outer and an
# inner derivational suffix; (suffix, replacement, shortest stem left), longest suffixes first.
# Crude on purpose: the query and the passage go through the same function, so only consistency
# within a word family matters ("terminates", "terminated", "termination" -> "termin").
_INFLECTIONS = (
    ("ings", "", 3), ("ies", "y", 3), ("ied", "y", 3), ("ing", "", 3), ("es", "", 3), ("ed", "", 3),
    ("s", "", 3),
)  # fmt: skip
_OUTER_SUFFIXES = (("ivity", "", 3), ("ity", "", 4), ("ly", "", 4))
_INNER_SUFFIXES = (
    ("ification", "ify", 1), ("ational", "", 3), ("ation", "", 3), ("ional", "", 3), ("ator", "", 3),
    ("ance", "", 3), ("ence", "", 3), ("ment", "", 3), ("able", "", 3), ("ible", "", 3), ("ate", "", 3),
    ("ion", "", 3), ("ive", "", 3), ("al", "", 4), ("ee", "", 4), ("or", "", 4),
)  # fmt: skip


def _strip_suffix(word: str, rules: tuple[tuple[str, str, int], ...]) -> tuple[str, str]:
    """`word` without the first of `rules` that applies, and the suffix removed ("" if none)."""
    for suffix, replacement, shortest in rules:
        if word.endswith(suffix) and len(word) - len(suffix) >= shortest:
            if suffix == "s" and word[-2] in "siu":
                continue  # "business", "analysis", "status"
            return word[: len(word) - len(suffix)] + replacement, suffix
    return word, ""


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A light, rule-based stem of one lower-case word: "terminated" -> "termin", "licensee" ->
    "licens", "parties" -> "party". Not linguistics, consistency: see the suffix tables above."""
    if len(word) <= 3 or not word.isalpha():
        return word
    word, removed = _strip_suffix(word, _INFLECTIONS)
    if removed in ("ing", "ings", "ed", "es") and word.endswith(("at", "bl", "iz")):
        word += "e"  # "terminated" -> "terminate", "payables" -> "payable"
    word, _ = _strip_suffix(word, _OUTER_SUFFIXES)
    word, _ = _strip_suffix(word, _INNER_SUFFIXES)
    if word.endswith("ify") and len(word) >= 7:
        word = word[:-3]  # "indemnify" -> "indemn", like "indemnity"; "notify" stays
    while len(word) > 3 and word.endswith("e"):
        word = word[:-1]  # "license" / "licensed", "agree" / "agreed" / "agreement"
    if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "aeiouy":
        word = word[:-1]  # "committed" / "commit"
    return word


@dataclass(frozen=True)
class Term:
    """One thing a sentence can match: a word (by stem), a quoted phrase or a legal identifier."""

    text: str  # as the query has it
    kind: Literal["word", "phrase", "identifier"]
    weight: float  # before the passage's rarity factor (words only)
    key: str = ""  # words: the stem
    pattern: re.Pattern[str] | None = None  # phrases and identifiers


@dataclass(frozen=True)
class QueryTerms:
    """A query parsed for snippet scoring (see `query_terms`)."""

    terms: tuple[Term, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.terms)


@dataclass(frozen=True)
class Snippet:
    """A window of the document text: `document.text[start:end] == text`.

    `sentence_start`/`sentence_end` is the best-matching sentence (the first sentence when nothing
    matched), clipped to the snippet: start <= sentence_start < sentence_end <= end.
    """

    text: str
    start: int
    end: int
    sentence_start: int
    sentence_end: int


def _word_weight(word: str) -> float:
    weight = 1.0 + min(len(word), 12) / 6
    return weight * COMMON_FACTOR if word in COMMON_WORDS else weight


def words(text: str) -> list[str]:
    """Lower-case words of `text`, without one-letter words (the "s" of "Licensee's")."""
    return [token for token in _WORD.findall(text.lower()) if len(token) > 1 or token.isdigit()]


_tokens = words


def query_terms(query: str) -> QueryTerms:
    """Parse `query` once for `best_snippet`: its words, "quoted phrases" and legal identifiers.

    The query syntax is keyword search's (rag.retrieval.keyword.parse_query): "-word" excludes a
    word there and is ignored here; stopwords are dropped. A query with nothing to match (empty,
    only stopwords) gives empty terms, with which every snippet starts at its passage's start.
    """
    if not isinstance(query, str):
        raise TypeError(f"query_terms() needs a str, not {type(query).__name__}")
    parsed = parse_query(query)
    terms: list[Term] = []
    words: dict[str, str] = {}  # stem -> longest word with that stem

    def add_word(word: str) -> None:
        if word in STOPWORDS:
            return
        key = stem(word)
        if len(word) > len(words.get(key, "")):
            words[key] = word

    for phrase in parsed.phrases:
        tokens = _WORD.findall(phrase.lower())
        if not tokens:
            continue
        body = r"[\W_]+".join(re.escape(token) for token in tokens)
        weight = PHRASE_FACTOR * sum(_word_weight(t) for t in tokens if t not in STOPWORDS)
        pattern = re.compile(rf"(?<!\w){body}(?!\w)", re.IGNORECASE)
        terms.append(Term(text=phrase, kind="phrase", weight=max(PHRASE_MIN_WEIGHT, weight), pattern=pattern))
        for token in _tokens(phrase):
            add_word(token)
    for identifier in parsed.identifiers:
        terms.append(
            Term(
                text=identifier.text,
                kind="identifier",
                weight=IDENTIFIER_WEIGHT,
                pattern=python_regex(identifier.pattern),
            )
        )
    for word in parsed.words:
        for token in _tokens(word):
            add_word(token)
    terms.extend(
        Term(text=word, kind="word", weight=_word_weight(word), key=key) for key, word in words.items()
    )
    return QueryTerms(terms=tuple(terms))


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """The sentences of `text` as `(start, end)` offsets, trimmed of surrounding blanks; [] if blank.

    Sentence ends are the chunker's (rag.ingest.chunking.sentence_breaks): ".", "?" or "!" that is
    not an abbreviation ("U.S.", "Inc.", "Sec.", initials) or list marker, and paragraph breaks.
    """
    start = len(text) - len(text.lstrip(BLANK_CHARS))
    end = len(text.rstrip(BLANK_CHARS))
    if start >= end:
        return []
    spans = []
    for cut, after in sentence_breaks(text):
        spans.append((start, cut))
        start = after
    spans.append((start, end))
    return spans


def best_snippet(
    *, passage: str, offset: int, terms: QueryTerms, size: int, focus: int | None = None
) -> Snippet:
    """The snippet of `passage` (which starts at `offset` in the document text) for `terms`.

    About `size` characters around the passage's best-matching sentence, never beyond the passage
    (see the module docstring). `focus`, a position in `passage`, overrides which sentence is best:
    the one holding it (a cross-encoder's choice). Raises ValueError for a blank passage, a `size`
    that is not a positive int, or a negative `offset`.
    """
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise ValueError(f"snippet size must be a positive integer number of characters, not {size!r}")
    if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
        raise ValueError(f"passage offset must be a non-negative integer, not {offset!r}")
    if not isinstance(passage, str):
        raise TypeError(f"best_snippet() needs a str passage, not {type(passage).__name__}")
    spans = sentence_spans(passage)
    if not spans:
        raise ValueError("cannot make a snippet of an empty passage")

    best, matches = _best_sentence(passage, spans, terms)
    if focus is not None:
        chosen = max(0, bisect_right([start for start, _ in spans], focus) - 1)
        if chosen != best:
            best, matches = chosen, []
    sentence_start, sentence_end = spans[best]
    if spans[-1][1] - spans[0][0] <= size:
        start, end = spans[0][0], spans[-1][1]
    elif sentence_end - sentence_start > size:
        start, end = _best_part(passage, sentence_start, sentence_end, matches, size)
    else:
        start, end = _around(passage, spans, best, size)
    sentence_start, sentence_end = max(sentence_start, start), min(sentence_end, end)
    return Snippet(
        text=passage[start:end],
        start=offset + start,
        end=offset + end,
        sentence_start=offset + sentence_start,
        sentence_end=offset + sentence_end,
    )


# A match: (start, end, weight, term index) in passage offsets.
_Match = tuple[int, int, float, int]


def _best_sentence(passage: str, spans: list[tuple[int, int]], terms: QueryTerms) -> tuple[int, list[_Match]]:
    """Index of the best sentence (0 when nothing matches) and the matches inside it."""
    scores, found, weights = _scored(passage, spans, terms)
    if not found:
        return 0, []
    best = max(range(len(spans)), key=lambda s: (scores[s], -s))
    matches = [(start, end, weights[i], i) for start, end, i, sentence in found if sentence == best]
    return best, sorted(matches)


def sentence_scores(passage: str, spans: list[tuple[int, int]], terms: QueryTerms) -> list[float]:
    """Each sentence's match score (the summed weights of the distinct query terms it contains,
    as for choosing a snippet); all 0 when nothing matches."""
    return _scored(passage, spans, terms)[0]


def _scored(passage: str, spans: list[tuple[int, int]], terms: QueryTerms):
    """(score per sentence, matches as (start, end, term index, sentence), weight per term)."""
    if not terms:
        return [0.0] * len(spans), [], {}
    starts = [start for start, _ in spans]
    found: list[tuple[int, int, int, int]] = []  # (start, end, term index, sentence index)
    words = {term.key: i for i, term in enumerate(terms.terms) if term.kind == "word"}
    for match in _WORD.finditer(passage):
        i = words.get(stem(match.group().lower()))
        if i is not None:
            found.append((match.start(), match.end(), i, bisect_right(starts, match.start()) - 1))
    for i, term in enumerate(terms.terms):
        if term.pattern is not None:
            for match in term.pattern.finditer(passage):
                found.append((match.start(), match.end(), i, bisect_right(starts, match.start()) - 1))
    if not found:
        return [0.0] * len(spans), [], {}

    # Words weigh more when fewer of the passage's sentences contain them.
    sentences_with: dict[int, set[int]] = {}
    for _, _, i, sentence in found:
        sentences_with.setdefault(i, set()).add(sentence)
    weights = {}
    for i, sentences in sentences_with.items():
        term = terms.terms[i]
        rarity = 1.0
        if term.kind == "word":
            rarity = min(MAX_RARITY, 1.0 + 0.5 * math.log(len(spans) / len(sentences)))
        weights[i] = term.weight * rarity
    scores = [0.0] * len(spans)
    for i, sentences in sentences_with.items():
        for sentence in sentences:
            scores[sentence] += weights[i]
    return scores, found, weights


def _around(passage: str, spans: list[tuple[int, int]], best: int, size: int) -> tuple[int, int]:
    """Sentence `best` with whole neighbouring sentences, then part of one, up to `size` chars."""
    first = last = best
    start, end = spans[best]
    next_turn = True
    while True:
        can_next = last + 1 < len(spans) and spans[last + 1][1] - start <= size
        can_previous = first > 0 and end - spans[first - 1][0] <= size
        if can_next and (next_turn or not can_previous):
            last += 1
            end = spans[last][1]
        elif can_previous:
            first -= 1
            start = spans[first][0]
        else:
            break
        next_turn = not next_turn
    room = size - (end - start)
    if room < max(1, size * MIN_FILL):
        return start, end
    if first > 0:  # the end of the previous sentence: the snippet still ends at a sentence end
        previous_start = spans[first - 1][0]
        units = _UNIT.finditer(passage, previous_start, start)
        return next((unit.start() for unit in units if unit.start() >= start - room), start), end
    if last + 1 < len(spans):  # the start of the next sentence
        unit_ends = [unit.end() for unit in _UNIT.finditer(passage, end, spans[last + 1][1])]
        return start, max((unit_end for unit_end in unit_ends if unit_end <= end + room), default=end)
    return start, end


def _best_part(passage: str, start: int, end: int, matches: list[_Match], size: int) -> tuple[int, int]:
    """The part of the sentence passage[start:end] (longer than `size`) to show: at most `size`
    characters from a word start to a word end, holding the greatest weight of distinct terms;
    of equally good parts, the middle one of the first run of them. Without a match, the start."""
    words = [unit.span() for unit in _UNIT.finditer(passage, start, end)]
    word_ends = [word_end for _, word_end in words]
    by_end = sorted(range(len(matches)), key=lambda m: matches[m][1])
    weights = {i: weight for _, _, weight, i in matches}
    inside = [False] * len(matches)  # whether a match lies in the current part
    counts = dict.fromkeys(weights, 0)  # matches of each term in the current part
    added = removed = 0  # next match to add (in end order) and to drop (in start order)
    candidates: list[tuple[int, int, float]] = []
    for word_start, _ in words:
        j = bisect_right(word_ends, word_start + size) - 1
        if j < 0 or word_ends[j] <= word_start:
            continue  # the word at word_start alone is longer than `size`
        part_end = word_ends[j]
        # Slide: parts only move right, so matches leave by their start and enter by their end.
        while removed < len(matches) and matches[removed][0] < word_start:
            if inside[removed]:
                inside[removed] = False
                counts[matches[removed][3]] -= 1
            removed += 1
        while added < len(by_end) and matches[by_end[added]][1] <= part_end:
            m = by_end[added]
            if matches[m][0] >= word_start:
                inside[m] = True
                counts[matches[m][3]] += 1
            added += 1
        score = math.fsum(weights[i] for i, count in counts.items() if count)  # order-independent
        candidates.append((word_start, part_end, score))
        if part_end == end:
            break  # later parts only lose text
    top = max((score for _, _, score in candidates), default=0)
    if top == 0:  # nothing matched in whole words: the sentence's start, a word longer than `size` cut hard
        return candidates[0][:2] if candidates and candidates[0][0] == start else (start, start + size)
    first = next(i for i, candidate in enumerate(candidates) if candidate[2] == top)
    last = first
    while last + 1 < len(candidates) and candidates[last + 1][2] == top:
        last += 1
    return candidates[(first + last) // 2][:2]
