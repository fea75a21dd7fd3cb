"""What a question asks for: a jurisdiction, a date, a duration, an amount, a percentage — or
nothing typed (the answer is the clause itself).

Read from the question's interrogative and the noun it asks about ("When …", "How long …", "What
law …", "How much …", "What … date", "… notice period"), not from any one wording of a clause type:
the kinds are what a lawyer expects stated first, whatever the clause.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

JURISDICTION = "jurisdiction"
DATE = "date"
DURATION = "duration"
AMOUNT = "amount"
PERCENT = "percent"
PARTIES = "parties"

# Which date a date question asks for.
SIGNED = "signed"
EFFECTIVE = "effective"
ENDS = "ends"


@dataclass(frozen=True)
class Asked:
    """A question's typed value: `kind` (one of the constants above), for a date the event
    (`SIGNED`, `EFFECTIVE`, `ENDS` or ""), `cues`: the words the value should stand near in the
    quote (the question's own content words, and the kind's), lower-case stems, and `words`: the
    question's own among them."""

    kind: str
    event: str = ""
    cues: tuple[str, ...] = ()
    words: tuple[str, ...] = ()


_LAW = re.compile(
    r"\b(?:what|which|whose)\b[^?]*\b(?:law|laws|jurisdiction)\b|\bgoverning\s+law\b|\bgoverned\s+by\b|"
    r"\bchoice\s+of\s+law\b|\bapplicable\s+law\b|\blaw\s+applies\b",
    re.I,
)
_WHEN = re.compile(
    r"^\s*(?:and\s+|so\s+|but\s+)?(?:when|by\s+when|until\s+when|as\s+of\s+when|since\s+when|"
    r"(?:on|by|from|until)\s+what\s+date|what\s+date|which\s+date)\b|"
    r"\b(?:what|which)\s+(?:is|was|are)\s+(?:the\s+|its\s+|this\s+agreement'?s\s+)?(?:\w+\s+){0,2}dates?\b|"
    r"\b(?:effective|expiration|expiry|termination|end|start|commencement|signing|execution|agreement)\s+date\b",
    re.I,
)
_HOW_LONG = re.compile(
    r"\bhow\s+long\b|\bhow\s+many\s+(?:days|weeks|months|years)\b|\bhow\s+much\s+(?:prior\s+)?notice\b|"
    r"\bfor\s+how\s+long\b|\bnotice\s+period\b|\bperiod\s+of\s+notice\b|\b(?:length|duration)\s+of\b|"
    r"\b(?:what|which)\s+(?:is|are)\s+the\s+(?:initial\s+|renewal\s+|warranty\s+)?(?:term|period)s?\b|"
    r"\brenewal\s+(?:term|period)s?\b|\bhow\s+much\s+time\b",
    re.I,
)
_HOW_MUCH = re.compile(
    r"\bhow\s+much\b(?!\s+(?:prior\s+)?(?:notice|time))|\bhow\s+many\s+(?:dollars|euros|pounds)\b|"
    r"\b(?:what|which)\s+(?:is|are|was)\s+the\s+(?:\w+\s+){0,3}"
    r"(?:fee|fees|price|cost|costs|amount|payment|compensation|salary|cap|consideration|deposit|penalty)\b|"
    r"\bdollar\s+amount\b",
    re.I,
)
# "Who are the parties?", "Between whom is this agreement?", "Which companies signed it?"
_PARTIES = re.compile(
    r"\bwho\s+(?:are|were)\s+(?:the\s+)?(?:parties|signatories|contracting\s+parties)\b|\bbetween\s+whom\b|"
    r"\b(?:which|what)\s+(?:parties|companies|entities)\s+(?:entered|signed|are\s+part(?:y|ies)\s+to)\b|"
    r"\bwho\s+(?:signed|entered\s+into)\s+(?:this|the)\b|\bwho\s+is\s+(?:this|the)\s+(?:\w+\s+)?(?:agreement|contract)\s+"
    r"(?:between|with)\b|\b(?:name|identify|list)\s+the\s+parties\b|^\s*(?:the\s+)?parties\W*$",
    re.I,
)
_PERCENT = re.compile(r"\bpercent(?:age)?\b|\b(?:what|which)\s+(?:\w+\s+){0,2}rates?\b", re.I)

# The agreement's own date: signed, executed, dated, made, or "the date of this agreement".
_SIGNED = re.compile(
    r"\bsign|\bexecut|\bdated\b|\bentered\s+into\b|\bmade\b|\b(?:agreement|contract)(?:'s)?\s+date\b|"
    r"\bdate\s+(?:of|on)\s+(?:this|the|its)\s+(?:\w+\s+)?(?:agreement|contract|amendment|addendum|lease|license)\b",
    re.I,
)
_EFFECTIVE = re.compile(
    r"\beffective\b|\btake\s+effect\b|\bcommenc|\bstart|\bbegin|\bbecome\s+binding\b", re.I
)
_ENDS = re.compile(
    r"\buntil\s+when\b|\bexpir|\bend\b|\bends\b|\bterminat|\blast\b|\brun\s+(?:out|until)\b|\bfinish|\bover\b",
    re.I,
)

KIND_CUES = {
    JURISDICTION: ("law", "govern"),
    DATE: ("date", "dated", "as of", "effective"),
    DURATION: ("term", "period", "notice", "renew"),
    AMOUNT: ("pay", "fee", "price", "amount", "sum"),
    PERCENT: ("percent", "rate", "royalt"),
}
EVENT_CUES = {
    SIGNED: ("dated", "as of", "made", "entered", "executed", "signed"),
    EFFECTIVE: ("effective", "commence", "as of"),
    ENDS: ("expire", "terminat", "until", "through", "end", "term"),
}
_STOP_WORDS = [
    "a", "an", "and", "any", "are", "as", "at", "be", "by", "can", "could", "do", "does", "for", "from",
    "has", "have", "how", "i", "in", "is", "it", "its", "long", "many", "much", "of", "on", "or", "our",
    "shall", "should", "that", "the", "their", "them", "there", "this", "to", "under", "until", "was",
    "we", "what", "when", "where", "which", "who", "whom", "will", "with", "would", "you", "your",
    "agreement", "contract",
]  # fmt: skip
_STOP = frozenset(_STOP_WORDS)


# "Can/May/Could X …?", "Is X allowed/permitted/free to …?": a question asking whether something is
# allowed, whose answer a restriction turns into "No".
_PERMISSION = re.compile(
    r"^\s*(?:(?:and|so|but),?\s+)?(?:can|may|could|might)\b|"
    r"^\s*(?:is|are|will)\b[^?]{0,60}?\b(?:allowed|permitted|permissible|possible|free\s+to|entitled\s+to|able\s+to)\b",
    re.I,
)
_WITHOUT = re.compile(r"\bwithout\b", re.I)


def asks_permission(question: str) -> bool:
    """Whether `question` asks if something is allowed ("Can Detto assign it without consent?")."""
    return bool(_PERMISSION.search(question))


def restricted_opening(question: str, noun: str) -> str:
    """The first sentence answering a permission question about something the document restricts
    (`noun`: "a restriction on assignment"): "No: …" when it asks about doing it without a
    condition ("without consent"), "Not freely: …" otherwise; the quote then says on what terms."""
    start = "No" if _WITHOUT.search(question) else "Not freely"
    return f"{start}: the agreement has {noun}."


# A yes/no question's qualifier and its negation in a clause: "Is the license exclusive?" against
# "a limited, non-exclusive right and license"; "transferable" / "non-transferable", "revocable" /
# "irrevocable", "assignable" / "not assignable". Adjectives only: "required" / "not required" in a
# clause is too often about something else ("not required to name additional insureds").
_QUALIFIER = re.compile(r"\b[a-z]{4,}(?:able|ible|ive|ual)\b")
_NEGATION = r"(?:non-\s*|non|non |not |ir|in|un)"


def negated_qualifier(question: str, clause: str) -> str | None:
    """The negated form of a qualifier `question` asks about that `clause` gives, as written
    ("non-exclusive"), when the clause never gives the qualifier itself; None otherwise. A yes/no
    question whose clause was found then opens "No", not "Yes". A permission question's verb is
    read as its qualifier too ("Can King sublicense the marks?" against "non-sublicensable"),
    unless the clause plainly says it may be done ("may sublicense")."""
    if not _YES_NO.match(question.strip()):
        return None
    asked = {word: None for word in _QUALIFIER.findall(question.lower())} | _abilities(question)
    for word, verb in asked.items():
        found = re.search(rf"\b{_NEGATION}{word}\b", clause, re.I)
        if found is None:
            continue
        if verb is not None and re.search(rf"\b(?:may|can)\s+(?:be\s+)?{verb}", clause, re.I):
            continue
        bare = re.finditer(r"(?<![-\w])" + word + r"\b", clause, re.I)
        if all(_NEGATED_BEFORE.search(clause[: m.start()]) for m in bare):  # never said plainly
            return re.sub(r"-\s+", "-", found.group(0))  # "non- sublicensable" broken across lines
    return None


def _abilities(question: str) -> dict[str, str]:
    """A permission question's verbs as the qualifiers a clause denies them with, each mapped to
    its verb: "Can it be transferred?" → transferable, "sublicense" → sublicensable, "revoke" →
    revocable (a `_QUALIFIER` of the question's own is read as it stands)."""
    if not asks_permission(question):
        return {}
    forms: dict[str, str] = {}
    for verb in re.findall(r"[a-z]{5,}", question.lower()):
        stem = verb[:-2] if verb.endswith("ed") else verb
        stem = stem[:-1] if stem.endswith("e") else stem
        stem = stem[:-1] if stem.endswith("rr") else stem
        root = verb[:-1] if verb.endswith("ed") else verb  # "transferred" → "transferre": may transfer
        forms[stem + "able"] = root[: len(stem)]
        forms[stem[:-1] + "cable" if stem.endswith("k") else stem + "ible"] = root[: len(stem)]
    return forms


_YES_NO = re.compile(r"(?i)(?:is|are|was|were|does|do|did|has|have|can|may|will|shall)\b")
_NEGATED_BEFORE = re.compile(r"(?i)(?:\bnon(?:-\s*|\s)?|\bnot\s+)$")


def asked_value(question: str) -> Asked | None:
    """The typed value `question` asks for, or None (a yes/no question, a question about a clause)."""
    text = question.strip()
    if not text:
        return None
    cues = _content_stems(text)
    if _PARTIES.search(text):
        return Asked(PARTIES, cues=cues, words=cues)
    if _LAW.search(text):
        return Asked(JURISDICTION, cues=cues + KIND_CUES[JURISDICTION], words=cues)
    if _HOW_LONG.search(text):
        return Asked(DURATION, cues=cues + KIND_CUES[DURATION], words=cues)
    if _WHEN.search(text):
        event = _date_event(text)
        return Asked(DATE, event=event, cues=cues + EVENT_CUES.get(event, KIND_CUES[DATE]), words=cues)
    if _PERCENT.search(text):
        return Asked(PERCENT, cues=cues + KIND_CUES[PERCENT], words=cues)
    if _HOW_MUCH.search(text):
        return Asked(AMOUNT, cues=cues + KIND_CUES[AMOUNT], words=cues)
    return None


def _date_event(question: str) -> str:
    """Which date: the end of the term, the start, or the signing (in that order of precedence:
    "When does the agreement signed in 2019 expire?" asks for the end)."""
    if _ENDS.search(question):
        return ENDS
    if _EFFECTIVE.search(question):
        return EFFECTIVE
    if _SIGNED.search(question):
        return SIGNED
    return ""


def _content_stems(question: str) -> tuple[str, ...]:
    """The question's content words, cut to a 5-letter stem ("renewal" → "renew", "notice")."""
    words = re.findall(r"[a-z]+", question.lower())
    return tuple(dict.fromkeys(w[:5] for w in words if w not in _STOP and len(w) > 2))
