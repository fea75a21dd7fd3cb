"""The answer's first sentence: the value the question asks for, stated, with its citation.

`opening(question, quotes, sources)` reads the quotes an answer is about to give (and the other
passages of the same document, for the dates it defines) and returns the sentence a lawyer reads
first — "The laws of New York govern [1].", "90 days [1].", "31 October 2024: 5 years from the Effective
Date, 31 October 2019 [1][2].", "The amount is redacted in this copy ([***]) [1]." — and any
passage it had to quote as well (the preamble that dates the agreement). It states only what a
quoted text says or what follows from it by the arithmetic it shows; otherwise it returns None and
the answer stays the quotes alone.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from datetime import date
from typing import Protocol

from rag.ingest.titles.parties import find_parties
from rag.retrieval import snippets

from . import asked as kinds
from .dates import (
    AGREEMENT,
    EFFECTIVE,
    PRESUMED_UNDATED,
    PRESUMED_UNSTARTED,
    Anchor,
    TermEnd,
    anchors,
    readable,
    term_end,
)
from .parties import parties_span
from .values import (
    PERIODIC,
    Found,
    amounts_in,
    blank_dates_in,
    blanks_in,
    dates_in,
    durations_in,
    governing_jurisdiction,
    percents_in,
    redactions_in,
)

MAX_VALUE_QUOTE = 600  # characters of an added quote (the sentence holding the value)
# A term with no end but its termination: "perpetual", "for an indefinite period", "until
# terminated", "will end when terminated by either party".
PERPETUAL = re.compile(
    r"\bperpetu\w*|\bindefinite(?:ly)?\b|\buntil\s+(?:so\s+)?terminated\b|\b(?:end|expire)s?\s+(?:only\s+)?when\s+"
    r"terminated\b|\bunless\s+and\s+until\s+terminated\b",
    re.I,
)


class Passage(Protocol):
    """What a quote or a source offers: its citation token, document and text."""

    citation_id: str
    document_id: int
    text: str


@dataclass(frozen=True)
class Quote:
    """A quote the answer gives: the passage it is from and the quoted words."""

    source: Passage
    text: str


@dataclass(frozen=True)
class Opening:
    """The answer's first sentence, and the quotes it adds (the sentence that holds a value found
    outside the answer's quotes), each to cite after it; `leads`: the added quote answers the
    question itself (the agreement's date), so it goes first."""

    sentence: str
    added: tuple[Quote, ...] = ()
    leads: bool = False
    # The lead quote widened by the sentence next to it that holds the value ("… monthly fee in
    # the amount of $450. The Customer is responsible for paying the recurring monthly fees by
    # …"): quote this instead of the lead quote ("" when it holds the value as it is).
    lead_text: str = ""
    # False for a sentence that states no value: a redacted or blank one, or a term without end.
    states_value: bool = True


def opening(question: str, quotes: list[Quote], sources: list[Passage]) -> Opening | None:
    """The first sentence for `question`, from `quotes` (one document's, in answer order) and the
    other `sources` of that document; None when the question asks for no typed value or none is
    stated. A lead quote that misses the value the sentence just before or after it gives (in the
    same passage) is widened to hold it (`Opening.lead_text`): a quote never stops short of the
    number it was meant to show."""
    asked = kinds.asked_value(question)
    if asked is None or not quotes:
        return None
    found = _stated(asked, quotes, sources)
    if found is not None or asked.kind == kinds.JURISDICTION:
        return found
    for wider in neighbours(quotes[0]):
        found = _stated(asked, [Quote(quotes[0].source, wider), *quotes[1:]], sources)
        if found is not None and found.states_value:
            return dataclasses.replace(found, lead_text=wider)
    return None


_CAPS_HEADING = re.compile(r"(?:[A-Z][A-Z&/,\-]+\s+){2,}(?=[A-Z][a-z])")


def neighbours(quote: Quote) -> list[str]:
    """The quote with the sentence just before it, then with the one just after it, in its
    passage (whitespace collapsed, as quotes are); [] when the quote is not found there."""
    text = quote.source.text
    words = " ".join(text.split())
    at = words.find(quote.text)
    if at < 0:
        return []
    spans = snippets.sentence_spans(words)
    before = [s for s in spans if s[1] <= at]
    after = [s for s in spans if s[0] >= at + len(quote.text)]
    wider = []
    if before:
        start = before[-1][0]
        heading = _CAPS_HEADING.match(words, start)  # "RESPONSIBILITIES OF THE CUSTOMER The …"
        wider.append(words[heading.end() if heading else start : at + len(quote.text)].strip())
    if after:
        wider.append(words[at : after[0][1]].strip())
    return [w for w in wider if len(w) <= 2 * MAX_VALUE_QUOTE]


def _stated(asked: kinds.Asked, quotes: list[Quote], sources: list[Passage]) -> Opening | None:
    document = quotes[0].source.document_id
    same = [s for s in sources if s.document_id == document]
    if asked.kind == kinds.JURISDICTION:
        return _jurisdiction(quotes, same)
    if asked.kind == kinds.DATE:
        return _date(asked, quotes, same)
    if asked.kind == kinds.PARTIES:
        return _parties(same)
    finder = {kinds.DURATION: durations_in, kinds.AMOUNT: amounts_in, kinds.PERCENT: percents_in}[asked.kind]
    endless = asked.kind == kinds.DURATION and _role(asked) == "term" and PERPETUAL.search(quotes[0].text)
    # The lead quote answers first: a term it says runs until terminated is not the length of a
    # period a later quote gives ("six (6) months from the effective date of termination").
    found = _nearest(asked, quotes[:1] if endless else quotes, finder)
    if found is not None:
        quote, value = found
        return Opening(f"{value.text} [{quote.source.citation_id}].")
    if endless:
        return Opening(
            f"No fixed end: it runs until terminated [{quotes[0].source.citation_id}].", states_value=False
        )
    return _withheld(asked, quotes)


def _parties(same: list[Passage]) -> Opening | None:
    """The parties the preamble names ("Alfa Aesar and Hydraspin [2]."), its sentence quoted first;
    None when no passage of the document holds a preamble naming two or more."""
    ordered = sorted(same, key=lambda s: getattr(s, "chunk_number", None) not in (1, None))
    for source in ordered:
        span = parties_span(source.text)
        if span is None:
            continue
        sentence = " ".join(source.text[span[0] : span[1]].split())
        names = find_parties(sentence, {})
        if len(names) < 2:
            continue
        listed = ", ".join(names[:-1]) + (f" {names[-1]}" if names[-1] == "et al." else f" and {names[-1]}")
        quote = (
            sentence
            if len(sentence) <= MAX_VALUE_QUOTE
            else sentence[:MAX_VALUE_QUOTE].rsplit(" ", 1)[0] + " …"
        )
        return Opening(f"{listed} [{source.citation_id}].", (Quote(source, quote),), leads=True)
    return None


def _jurisdiction(quotes: list[Quote], same: list[Passage]) -> Opening | None:
    """The law the quotes say governs; else the one another passage of the document names (its
    sentence quoted first); else a redacted or blank one; else, where no passage on point speaks
    of the law that governs the agreement at all, that no governing law was found."""
    for quote in quotes:
        found = governing_jurisdiction(quote.text)
        if found is not None:
            return Opening(f"The laws of {found.value} govern [{quote.source.citation_id}].")
    for source in same:
        found = governing_jurisdiction(source.text)
        if found is not None:
            added = Quote(source, _sentence_holding(source.text, found))
            return Opening(f"The laws of {found.value} govern [{source.citation_id}].", (added,), leads=True)
    withheld = _withheld(kinds.Asked(kinds.JURISDICTION), quotes)
    if withheld is not None or any(CHOOSES_LAW.search(p.text) for p in [*quotes, *same]):
        return withheld  # a choice of law that names no place ("the laws of the Seller's country")
    return Opening(
        "No governing-law clause was found: no passage on point says which law governs the agreement. "
        "Closest in the text:",
        states_value=False,
    )


# Words choosing a law, whether or not they name the place: "governed by … laws", "construed in
# accordance with the laws", "governing law", "choice of law".
CHOOSES_LAW = re.compile(
    r"\bgovern\w*\b[^.;]{0,80}\blaws?\b|\blaws?\b[^.;]{0,80}\bgovern|\b(?:constru|interpret)\w*\b[^.;]{0,80}\blaws?\b|"
    r"\bchoice\s+of\s+law\b",
    re.I,
)


# The words just before a date that make it the end of the term ("until", "expires on", "no later
# than"); a date without them (an option's start, a notice's deadline) is no end date.
ENDS_BEFORE = re.compile(
    r"(?:until|through|expir\w*|end\w*|terminat\w*|no\s+later\s+than|up\s+to\s+and\s+including)"
    r"\s+(?:on\s+|at\s+)?(?:the\s+)?(?:close\s+of\s+business\s+on\s+)?$",
    re.I,
)
ENDS_WINDOW = 60
# A clause about the agreement's term: the words a term, its expiry or its duration is written with.
TERM_WORDS = re.compile(
    r"\bterm\b|\bexpir|\bcontinu|\bremain\s+in\b|\bin\s+(?:full\s+)?force\b|\bduration\b|\bvalid\b|"
    r"\bin\s+effect\b|\buntil\b",
    re.I,
)
# "This Amendment shall only become effective upon the Closing", "takes effect on June 1, 1998":
# the clause saying when the agreement takes effect (a date, or a condition).
EFFECTIVE_SAID = re.compile(
    r"\b(?:become|becomes|be|is|shall\s+be)\s+effective\s+(?:only\s+)?(?:upon|on|as\s+of|when|from|at)\b|"
    r"\btakes?\s+effect\b|\bcommence\s+effective\b",
    re.I,
)
EFFECTIVE_WINDOW = 80
# Whose taking effect: the agreement's ("This Agreement shall take effect …", "The term of this
# Agreement shall become effective upon …"), not a fee change's or a notice's.
_AGREEMENT_SUBJECT = re.compile(
    r"\b(?:this|the)\s+(?:\w+\s+){0,3}?(?:agreement|amendment|addendum|contract|lease|license)\b[^.;]{0,60}$",
    re.I,
)
_DEFINED_START = re.compile(r"effective\s+date|date\s+first|date\s+hereof|date\s+of\s+this|execution", re.I)


def _takes_effect(text: str) -> int | None:
    """Where the words saying when the agreement takes effect end in `text`, or None."""
    for said in EFFECTIVE_SAID.finditer(text):
        if _AGREEMENT_SUBJECT.search(text[max(0, said.start() - 120) : said.start()]):
            return said.end()
    return None


def _the_one_date(quote: Quote) -> Opening | None:
    """The date `quote` gives, when it gives exactly one (with several, which one is asked is the
    reader's to see)."""
    found = {d.value for d in dates_in(quote.text)}
    if len(found) != 1:
        return None
    return Opening(f"{readable(found.pop())} [{quote.source.citation_id}].")


def _date(asked: kinds.Asked, quotes: list[Quote], same: list[Passage]) -> Opening | None:
    """An end date: the one a term clause states, or else computed from it, or none at all
    ("until terminated"). A signing or effective date: the one the document gives its
    own agreement (preamble, definition, signature block), never a date a quote gives another
    agreement or event ("the Purchase Agreement dated as of April 7, 2003")."""
    located = _anchors(same)
    if asked.event == kinds.ENDS:
        known = {name: anchor for name, (anchor, _) in located.items()}
        for quote in quotes:
            if not TERM_WORDS.search(quote.text):
                continue  # "deliver within 45 days from the Execution Date": a deadline, not the term
            stated = _ends_on([quote])  # "commence on May 1, 2020 and ends at April 30, 2029": as stated
            if stated is not None:
                return stated
            end = term_end(quote.text, known)
            if end is not None:
                return _computed(end, quote, located)
        opening = _endless(quotes) or _ends_on(quotes)
        return opening or _withheld(asked, quotes)
    if not asked.event:  # "By when does Darren want our comments?": the lead quote's one date
        return _the_one_date(quotes[0])
    if asked.event == kinds.EFFECTIVE:
        said = _takes_effect(quotes[0].text)
        if said is not None:  # the lead quote says when the agreement takes effect
            after = quotes[0].text[said : said + EFFECTIVE_WINDOW]
            dates = dates_in(after)
            if dates:
                return Opening(f"{readable(dates[0].value)} [{quotes[0].source.citation_id}].")  # type: ignore[arg-type]
            if not _DEFINED_START.search(after):
                return None  # on a condition ("upon the Closing"): the quote answers
            # "as of the Effective Date": the date the document defines, below
    wanted = EFFECTIVE if asked.event == kinds.EFFECTIVE else AGREEMENT
    other = AGREEMENT if wanted == EFFECTIVE else EFFECTIVE
    name = wanted if wanted in located else other
    if name not in located:
        return _withheld(asked, quotes)
    anchor, source = located[name]
    added = Quote(source, _sentence_holding(source.text, anchor))
    if name != wanted:  # the document gives only the other date: that one, said so, after the quotes
        which = "the date the agreement is made" if name == AGREEMENT else "the Effective Date"
        return Opening(f"{readable(anchor.value)} ({which}) [{source.citation_id}].", (added,))
    return Opening(f"{readable(anchor.value)} [{source.citation_id}].", (added,), leads=True)


def _endless(quotes: list[Quote]) -> Opening | None:
    """ "No fixed end date: it runs until terminated [1]." when the lead quote gives the term no
    length and no end date, only its termination; "No fixed term: it runs until the last of the
    licensed patents expires [1]." when it binds the term to an event instead."""
    quote = quotes[0]
    if durations_in(quote.text) or dates_in(quote.text):
        return None
    if PERPETUAL.search(quote.text):
        return Opening(
            f"No fixed end date: it runs until terminated [{quote.source.citation_id}].", states_value=False
        )
    event = _UNTIL_EVENT.search(quote.text)
    if event and not _DATED_ELSEWHERE.search(event["event"]):
        words = _in_own_words(event["event"])
        return Opening(
            f"No fixed term: it runs until {words} [{quote.source.citation_id}].", states_value=False
        )
    return None


# A term bound to an event, not a length or a date: "shall continue in force until the earlier to
# occur of (i) the Owner no longer owns any Receivables …", "shall extend until the last date of
# expiration of the … rights licensed under this IP Agreement".
_UNTIL_EVENT = re.compile(
    r"\b(?:continue|remain|extend|last|not\s+(?:end|expire|terminate)|be\s+in\s+(?:full\s+)?(?:force|effect)"
    r"|in\s+effect)\b[^.;]{0,80}?"
    r"\buntil\s+(?P<event>[^.;:]{8,200})",
    re.I,
)
# "until the termination date specified in Exhibit A": an end date written elsewhere, not an event;
# "until March 18" (a date whose year a sentence cut left behind) is none either.
_DATED_ELSEWHERE = re.compile(
    r"\b(?:specified|set\s+(?:forth|out)|stated|identified)\s+in\b"
    r"|^\s*(?:the\s+)?(?:\d|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+\d)",
    re.I,
)
EVENT_CHARS = 140


def _in_own_words(event: str) -> str:
    """The event's words as the answer's own: without a defined term's parenthesis ('("Term")') or
    other quote marks, which would read as a quote of the passage, a redaction mark ("[*****]",
    which would read as a citation marker) said in words, and cut at a word when long."""
    words = _BRACKETED.sub("(redacted)", _DEFINED_TERM.sub("", event))
    words = " ".join(words.split()).strip("\"'\u201c\u201d ")
    if len(words) > EVENT_CHARS:
        words = words[:EVENT_CHARS].rsplit(" ", 1)[0].rstrip(" ,") + " …"
    return words


_BRACKETED = re.compile(r"\[[^\]]*\]")
_DEFINED_TERM = re.compile(r"\s*\([^()]*[\"\u201c\u201d][^()]*\)|[\"\u201c\u201d]")


def _ends_on(quotes: list[Quote]) -> Opening | None:
    """The first date in the quotes that the words just before it give as the term's end."""
    for quote in quotes:
        for found in dates_in(quote.text):
            if _DEFINED_START_AFTER.match(_words_after(quote, found)):
                continue  # "no later than September 2, 2019 (such date, the "Effective Date")": a start
            if ENDS_BEFORE.search(quote.text[max(0, found.start - ENDS_WINDOW) : found.start]):
                later = _proviso_end(quote.text[found.end :], found.value)
                runs_on = f", but its proviso runs to {readable(later)}" if later else ""
                return Opening(f"{readable(found.value)}{runs_on} [{quote.source.citation_id}].")  # type: ignore[arg-type]
    return None


def _proviso_end(after: str, end: date) -> date | None:
    """A later end date that a proviso of the same sentence gives (`after`: what follows the end
    date): "shall expire on December 31, 2006; provided, however, that … all licenses granted
    herein will continue … until March 31, 2008" → 31 March 2008. A lawyer told only the first
    date would miss the rights that outlast it."""
    spans = snippets.sentence_spans(after)  # initials and "Mrs." do not end it
    sentence = after[: spans[0][1]] if spans else after
    proviso = _PROVISO.search(sentence)
    if proviso is None:
        return None
    rest = sentence[proviso.end() :]
    for found in dates_in(rest):
        if found.value > end and ENDS_BEFORE.search(rest[max(0, found.start - ENDS_WINDOW) : found.start]):
            return found.value
    return None


_PROVISO = re.compile(
    r"\bprovided(?:,)?\s+(?:however|further|that)\b|\bexcept\s+that\b|\bsave\s+that\b", re.I
)


# A date the words after it define as the start: '(such date, the "Effective Date")'.
_DEFINED_START_AFTER = re.compile(
    r"\s*\((?:[^()]{0,20}?,\s*)?(?:the\s+)?[\"\u201c]?(?:Effective|Commencement|Start)\s+Date", re.I
)


def _words_after(quote: Quote, found: Found) -> str:
    """What follows a date of `quote` in its passage (a quote may stop right after the date)."""
    at = quote.source.text.find(found.text)
    if at < 0:
        return quote.text[found.end : found.end + 60]
    return quote.source.text[at + len(found.text) : at + len(found.text) + 60]


def _computed(end: TermEnd, quote: Quote, located: dict[str, tuple[Anchor, Passage]]) -> Opening:
    """ "31 October 2024: 5 years from the Effective Date, 31 October 2019 [1][2]." citing the
    clause and, when the start is dated in another passage, that passage (quoted too)."""
    cited = [quote.source.citation_id]
    if not end.start_name:  # "until the end of 2006": no arithmetic to show
        return Opening(f"{readable(end.value)}: {end.length} [{quote.source.citation_id}].")
    added: tuple[Quote, ...] = ()
    named = end.start_name[:1].isupper() or end.start_name.startswith("date")
    if named:
        for anchor, source in located.values():
            if anchor.value == end.start_date and source.citation_id != quote.source.citation_id:
                cited.append(source.citation_id)
                added = (Quote(source, _sentence_holding(source.text, anchor)),)
                break
    start = f"the {end.start_name}, {readable(end.start_date)}" if named else readable(end.start_date)
    markers = "".join(f"[{c}]" for c in cited)
    if end.presumed == PRESUMED_UNDATED:  # "the Effective Date" means a date the text never writes
        return Opening(
            f"{readable(end.value)}, if the {end.start_name} is the agreement's date, "
            f"{readable(end.start_date)}: {end.length} from the {end.start_name} {markers}. "
            f"The agreement does not date the {end.start_name} itself.",
            added,
        )
    if end.presumed == PRESUMED_UNSTARTED:
        since = "the Effective Date" if end.start_name == "Effective Date" else "the agreement's date"
        return Opening(
            f"{readable(end.value)}, if the term runs from {since}, {readable(end.start_date)}: "
            f"{end.length} {markers}. The clause gives the term no start.",
            added,
        )
    return Opening(f"{readable(end.value)}: {end.length} from {start} {markers}.", added)


def _anchors(same: list[Passage]) -> dict[str, tuple[Anchor, Passage]]:
    """The dates the document's passages define, each with the passage it was read in (an
    agreement date only from the passage that opens the document, where it is known)."""
    found: dict[str, tuple[Anchor, Passage]] = {}
    # The document's opening first: its preamble dates the agreement; a later passage only where
    # the opening is not among them. A signature block's date only where no passage dates the
    # agreement in words ("this Agreement shall commence effective June 1, 1998").
    ordered = sorted(same, key=lambda s: getattr(s, "chunk_number", None) not in (1, None))
    for signatures in (False, True):
        if {AGREEMENT, EFFECTIVE} <= found.keys():
            break  # both dated in words: no signature block is read
        for source in ordered:
            opening = getattr(source, "chunk_number", None) in (1, None)
            for name, anchor in anchors(source.text, opening=opening, signatures=signatures).items():
                found.setdefault(name, (anchor, source))
    return found


def _sentence_holding(text: str, anchor: Anchor | Found) -> str:
    """The sentence of `text` that holds the anchor's date, whitespace collapsed, cut after the
    date when long (never before it)."""
    for start, end in snippets.sentence_spans(text):
        if start <= anchor.start < end:
            sentence = text[start:end]
            words = " ".join(sentence.split())
            if len(words) <= MAX_VALUE_QUOTE:
                return words
            head = " ".join(text[start : anchor.end].split())
            rest = " ".join(text[anchor.end : end].split())
            room = max(0, MAX_VALUE_QUOTE - len(head))
            return head + (" " + rest[:room].rsplit(" ", 1)[0] if room and rest else "") + " …"
    return " ".join(text[anchor.start : anchor.end].split())


# A term clause gives several periods (the term, its renewals, the notice to stop them): which one
# a duration question asks for is read from the question, and a period is taken for it when the
# words around it say that role.
ROLES = {
    "notice": re.compile(r"notic|prior|advance|in\s+writing", re.I),
    "renewal": re.compile(r"renew|success|additional|extend|extens", re.I),
    "term": re.compile(r"\bterm\b|initial|commenc|continue|period\s+of|expire|effective\s+date", re.I),
}
NEAR = 60  # characters either side of a value that say what it is
BESIDE = 25  # a period this close to another role's words is that role's


def _nearest(asked: kinds.Asked, quotes: list[Quote], finder) -> tuple[Quote, Found] | None:
    """The value `finder` reads in the first quote that has any, best placed for the question: a
    duration by the role the question asks for (`ROLES`), any other value nearest the question's
    own words."""
    role = _role(asked) if asked.kind == kinds.DURATION else ""
    for quote in quotes:
        values = finder(quote.text)
        if not values:
            continue
        if role:
            best = max(values, key=lambda v: _role_score(quote.text, v, role))
            if _role_score(quote.text, best, role)[0] <= 0:
                continue  # no period of the kind asked ("within ten (10) days following notice" is no term)
            return quote, best
        cue_at = _cue_positions(asked, quote.text)
        if not cue_at:
            return quote, values[0]
        return quote, min(values, key=lambda v: min(_distance(v, at) for at in cue_at))
    return None


# A question about the agreement's own length: "How long does it last?", "What is the term?",
# "How long is the agreement?" (no word of its own but the agreement).
_ASKS_TERM = re.compile(r"^(?:term|last|durat|runs?$|expir|valid|initi|conti)")


def _role(asked: kinds.Asked) -> str:
    """Which period a duration question asks for: "notice", "renewal", "term", or "" (another
    deadline: "How many days does the supplier have to confirm a purchase order?", read by the
    question's own words)."""
    cues = " ".join(asked.words)
    for role in ("notice", "renewal"):
        if ROLES[role].search(cues):
            return role
    if not asked.words or any(_ASKS_TERM.match(word) for word in asked.words):
        return "term"
    return ""


def _role_score(text: str, value: Found, role: str) -> tuple[int, int]:
    """How surely `value` is the `role` period: its role's words near it, less other roles' words
    beside it; then nearness."""
    if PERIODIC.search(text, value.start, value.end):  # "year to year", "annual periods": a renewal's
        return (2 if role == "renewal" else -1), 0
    around = text[max(0, value.start - NEAR) : value.end + NEAR]
    beside = text[max(0, value.start - BESIDE) : value.end + BESIDE]
    score = len(ROLES[role].findall(around))
    score -= sum(2 for other, pattern in ROLES.items() if other != role and pattern.search(beside))
    nearest = min((abs(m.start() - value.start) for m in ROLES[role].finditer(text)), default=len(text))
    return score, -nearest


def _cue_positions(asked: kinds.Asked, text: str) -> list[int]:
    """Where the question's cues stand in `text` (case ignored)."""
    lowered = text.lower()
    return [m.start() for cue in asked.cues for m in re.finditer(re.escape(cue), lowered)]


def _distance(value: Found, at: int) -> int:
    if value.start <= at < value.end:
        return 0
    return value.start - at if at < value.start else at - value.end + 1


def _withheld(asked: kinds.Asked, quotes: list[Quote]) -> Opening | None:
    """ "The date is redacted in this copy ([***]) [1]." when the first quote redacts or leaves
    blank where the value would be (near the question's cues); None otherwise."""
    quote = quotes[0]
    marks = redactions_in(quote.text) + blanks_in(quote.text)
    if asked.kind == kinds.DATE:
        marks += blank_dates_in(quote.text)
    if not marks:
        return None
    cue_at = _cue_positions(asked, quote.text)
    mark = min(marks, key=lambda v: min((_distance(v, at) for at in cue_at), default=0))
    if cue_at and min(_distance(mark, at) for at in cue_at) > 150:
        return None
    how = "redacted" if mark.value == "redacted" or redactions_in(mark.text) else "left blank"
    noun = {
        kinds.JURISDICTION: "The governing law",
        kinds.DATE: "The date",
        kinds.DURATION: "The period",
        kinds.AMOUNT: "The amount",
        kinds.PERCENT: "The rate",
    }[asked.kind]
    return Opening(
        f"{noun} is {how} in this copy ({mark.text.strip()}) [{quote.source.citation_id}].",
        states_value=False,
    )
