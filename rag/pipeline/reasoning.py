"""Chain-of-thought reasoning (stage-pipeline spec, "Stage 5: Reasoning"): which questions need it,
how they split into sub-questions, and what the reasoning returns.

A question needs reasoning when it compares ("Compare the termination clauses of the Acme MSA and
the Globex lease", "differences between A and B on X", "how does A differ from B", "A vs B") or
asks several things at once ("What is the governing law and what is the notice period?", two
questions, "(1) ... (2) ..."). Each part becomes a sub-question that is searched and answered on
its own, with citations; the answer then brings the parts together (rag.pipeline.stages.reasoning).
Anything else is a simple question and is answered directly: the split is by rule, deterministic,
and errs towards "simple", since a wrong split costs model calls and can lose the question's sense.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from rag.llm import Finding
from rag.retrieval.routing import DOCUMENT_WORD, REFERENCE_PHRASE, split_reference
from rag.retrieval.service import Passage

COMPARE = "compare"
MULTI_PART = "multi_part"
# Why a step has no answer: no passage of its own reached the context (none found, or none within
# the token budget); the model found nothing in them; its confidence was under the threshold; its
# answer made claims its passages do not support (or cited instructions planted in them).
NO_PASSAGES, NOT_IN_PASSAGES, LOW_CONFIDENCE, UNSUPPORTED = (
    "no_passages",
    "not_in_passages",
    "low_confidence",
    "unsupported",
)

_TOPIC_GLUE = r"(?:on|regarding|concerning|as to|as regards|in terms of|with respect to|in respect of|about)"
_COMPARE_PATTERNS = (
    # "Compare A and B on X", "Contrast A with B regarding X"
    re.compile(
        rf"^(?:please\s+)?(?:compare|contrast)\s+(?P<subjects>.+?)\s+{_TOPIC_GLUE}\s+(?P<topic>.+)$", re.I
    ),
    # "Compare the X in/of/under A and B"
    re.compile(
        r"^(?:please\s+)?(?:compare|contrast)\s+(?P<topic>.+?)\s+(?:in|of|under|between|across)\s+(?P<subjects>.+)$",
        re.I,
    ),
    # "Compare A with B"
    re.compile(r"^(?:please\s+)?(?:compare|contrast)\s+(?P<subjects>.+)$", re.I),
    # "What is the difference in X between A and B"
    re.compile(
        r"^(?:what\s+(?:are|is)\s+)?(?:the\s+)?(?:main\s+|key\s+)?differences?\s+(?:in|of)\s+(?P<topic>.+?)"
        r"\s+between\s+(?P<subjects>.+)$",
        re.I,
    ),
    # "What are the differences between A and B (regarding X)"
    re.compile(
        r"^(?:what\s+(?:are|is)\s+)?(?:the\s+)?(?:main\s+|key\s+)?differences?\s+between\s+(?P<subjects>.+?)"
        rf"(?:\s+{_TOPIC_GLUE}\s+(?P<topic>.+))?$",
        re.I,
    ),
    # "How does A differ from B (on X)", "How does A compare to/with B (on X)"
    re.compile(
        r"^how\s+(?:does|do)\s+(?P<first>.+?)\s+(?:differ\s+from|compare\s+(?:to|with))\s+(?P<second>.+?)"
        rf"(?:\s+{_TOPIC_GLUE}\s+(?P<topic>.+))?$",
        re.I,
    ),
    # "A vs B on X", "A versus B: X" (named groups `first`/`second` with "vs": see _VERSUS_CHECKED)
    re.compile(
        r"^(?P<first>.+?)\s+(?P<vs>vs\.?|versus)\s+(?P<second>.+?)"
        rf"(?:\s*[:\-\u2013\u2014]\s*|\s+{_TOPIC_GLUE}\s+)(?P<topic>.+)$",
        re.I,
    ),
    # "X: A vs B", "A vs B"
    re.compile(r"^(?:(?P<topic>[^:]+):\s*)?(?P<first>.+?)\s+(?P<vs>vs\.?|versus)\s+(?P<second>.+)$", re.I),
)
_SUBJECT_SPLIT = re.compile(r"\s*,\s*(?:and\s+)?|\s+(?:and|with|to|against|vs\.?|versus)\s+", re.I)
_WH = r"(?:what|which|who|whom|whose|when|where|why|how|whether)"
# "..., and what is ...", "...; how ..." — a new question starting inside the sentence.
_CLAUSE_SPLIT = re.compile(rf"\s*(?:,?\s+and\s+(?:also\s+)?|;\s*(?:and\s+)?)(?={_WH}\b)", re.I)
# "(1) ... (2) ...", "(a) ... (b) ...": a marker after a space, never a clause reference ("5(a)",
# "Section (b)"); the markers must count up from 1, a or i (see _enumerated).
_ENUMERATION = re.compile(r"(?:(?<=\s)|^)\((?P<label>\d{1,2}|[a-h]|i{1,3}|iv|v)\)\s*", re.I)
_REFERENCE_WORD = re.compile(
    r"\b(?:section|sections|clause|clauses|paragraph|paragraphs|para|article|articles|art|sub-?section|"
    r"subsections|schedule|exhibit|annex|appendix|rule|§+)\.?\s*$",
    re.I,
)
_SEQUENCES = (
    [str(n) for n in range(1, 100)],
    list("abcdefgh"),
    ["i", "ii", "iii", "iv", "v"],
)
_MIN_PART_WORDS = 2


@dataclass(frozen=True)
class SubQuestions:
    """How a question splits: `kind` is COMPARE or MULTI_PART, `questions` the parts in order, and
    `focuses` each part without the document or lead-in it shares with the others (what a part asks
    of the passages, where the document's name would only match its title and parties)."""

    kind: str
    questions: tuple[str, ...]
    focuses: tuple[str, ...]


def split_question(question: str) -> SubQuestions | None:
    """The question's sub-questions, or None when it is simple (see the module docstring)."""
    text = " ".join(question.split())
    compared = _compared(text.rstrip(" ?.!"))
    if compared:
        return SubQuestions(COMPARE, *zip(*compared, strict=True))
    parts = _parts(text)
    if len(parts) >= 2:
        return SubQuestions(MULTI_PART, *zip(*parts, strict=True))
    return None


@dataclass(frozen=True)
class Compared:
    """What a comparison sets side by side: its `subjects` as the question names them, in order and
    each once ("the Acme MSA", "the Beta license"), and its `topic` ("the governing law"; "" when
    it names none)."""

    subjects: tuple[str, ...]
    topic: str


def compared(question: str) -> Compared | None:
    """The subjects and topic of a comparison ("Compare A and B on X", "How does A differ from B
    regarding X?", "A vs B: X"), or None when `question` compares nothing (see the module
    docstring). The subjects may be documents, parties or anything else: the caller decides."""
    text = " ".join(question.split()).rstrip(" ?.!")
    for pattern in _COMPARE_PATTERNS:
        match = pattern.match(text)
        if not match:
            continue
        groups = match.groupdict()
        if groups.get("vs") and not _two_documents(groups["first"], groups["second"]):
            continue  # "Smith vs. Jones" is a case, "Is X mandatory versus optional" one question
        if groups.get("subjects"):
            subjects = [s for s in _SUBJECT_SPLIT.split(groups["subjects"]) if s.strip()]
        else:
            subjects = [groups["first"], groups["second"]]
        subjects = [_clean(s) for s in subjects if len(_clean(s).split()) >= 1]
        if len(subjects) < 2:
            continue
        return Compared(tuple(dict.fromkeys(subjects)), _clean(groups.get("topic") or ""))
    return None


def _compared(text: str) -> list[tuple[str, str]]:
    found = compared(text)
    if found is None:
        return []
    focus = f"What is said about {found.topic}?" if found.topic else "What are the key terms?"
    return [(_about(subject, focus), focus) for subject in found.subjects]


def _two_documents(first: str, second: str) -> bool:
    """Whether "first vs second" sets two documents side by side: neither side is a question or a
    request, and one names a kind of document ("the MSA vs the lease"), unlike a case name."""
    if _asks(first) or _asks(second):
        return False
    return bool(DOCUMENT_WORD.search(first) or DOCUMENT_WORD.search(second))


def _about(subject: str, focus: str) -> str:
    """The focus asked of `subject`, ending with it, where search routes a question to the document
    it names ("... in the Acme MSA?", rag.retrieval.routing)."""
    if not _DETERMINER.match(subject):
        subject = f"the {subject}"
    return f"{focus[:-1]} in {subject}?"


_DETERMINER = re.compile(r"(?:the|this|that|our|their)\s", re.I)


def _clean(text: str) -> str:
    return text.strip(" ,;:.?!-\u2013\u2014")


def _enumerated(text: str) -> list[str]:
    """[preamble, part 1, part 2, ...] when `text` lists two or more parts with markers counting up
    ("(1) … (2) …", "(a) … (b) …"), else []."""
    markers = [m for m in _ENUMERATION.finditer(text) if not _REFERENCE_WORD.search(text[: m.start()])]
    labels = [m["label"].lower() for m in markers]
    if len(markers) < 2 or not any(labels == sequence[: len(labels)] for sequence in _SEQUENCES):
        return []
    bounds = [0, *(m.start() for m in markers), len(text)]
    starts = [0, *(m.end() for m in markers)]
    return [text[start:end] for start, end in zip(starts, bounds[1:], strict=True)]


def _parts(text: str) -> list[tuple[str, str]]:
    enumerated = _enumerated(text)
    if enumerated:  # a preamble, then two or more numbered parts
        preamble, *items = enumerated
        preamble = _clean(preamble)
        items = [_clean(re.sub(r"\s+and\s*$", "", item.strip(), flags=re.I)) for item in items]
        verb = _request_verb(preamble)  # "For the MSA, state (1) ..." → focus "State ..."
        glue = " " if verb else ", "  # "state the …" / "Under the NDA, who …"
        parts = [
            (_question(f"{preamble}{glue}{item}" if preamble else item), _question(f"{verb} {item}".strip()))
            for item in items
            if item
        ]
    else:
        # "In the lease, what is X and when may Y?": the leading reference is context for each part.
        reference = split_reference(text)
        if reference.explicit and text.endswith(reference.question):
            lead = _clean(text[: -len(reference.question)])
            return [(_question(f"{lead}, {q[:1].lower()}{q[1:]}"), f) for q, f in _parts(reference.question)]
        sentences = [s for s in re.split(r"(?<=\?)\s+", text) if s.strip()]
        pieces = [piece for sentence in sentences for piece in _CLAUSE_SPLIT.split(sentence) if piece.strip()]
        # "Consider the X Agreement; what is ...": a lead-in that asks nothing is context for every
        # part, not a part of its own.
        lead_in = []
        while pieces and not _asks(pieces[0]):
            lead_in.append(_clean(pieces.pop(0)))
        prefix = "; ".join(lead_in)
        pieces = _pronouns_resolved(pieces)
        parts = [
            (_question(f"{prefix}; {piece}" if prefix else piece), _question(piece))
            for piece in pieces
            if _asks(piece)
        ]
    parts = [part for part in parts if len(part[0].split()) >= _MIN_PART_WORDS]
    parts = list(dict.fromkeys(parts))
    return parts if len(parts) >= 2 else []


_IT = re.compile(r"\bit\b", re.I)
# The words before a document named as the subject: "When does ", "How long will ", "Can ".
_SUBJECT_LEAD = re.compile(
    r"^\s*(?:\S+\s+){0,2}(?:does|do|did|is|are|was|were|will|would|can|could|may|might|must|shall|should)\s+$",
    re.I,
)


def _pronouns_resolved(pieces: list[str]) -> list[str]:
    """The parts with a later part's "it" read as the document the first part asks about ("When
    does the gas franchise start and how long does it run?": "How long does the gas franchise
    run?"), so that part is searched in that document too. Only a document that is the first part's
    subject is "it"; a part naming its own document is left as it is."""
    named = REFERENCE_PHRASE.search(pieces[0]) if pieces else None
    if named is None or not _SUBJECT_LEAD.match(pieces[0][: named.start()]):
        return pieces  # "What is the rent under the lease, and when is it due?": "it" is the rent
    return [pieces[0]] + [
        piece if REFERENCE_PHRASE.search(piece) else _IT.sub(named.group(), piece, count=1)
        for piece in pieces[1:]
    ]


def _request_verb(preamble: str) -> str:
    """The request a preamble ends with ("For the MSA, state" → "state"), else ""."""
    words = preamble.split()
    return words[-1] if words and words[-1].lower() in _REQUESTS else ""


_REQUESTS = frozenset(
    {"state", "list", "identify", "describe", "explain", "give", "name", "outline", "summarize"}
)
_ASKING_WORDS = _REQUESTS | {
    *("what", "which", "who", "whom", "whose", "when", "where", "why", "how", "whether"),
    *("is", "are", "was", "were", "does", "do", "did", "has", "have", "had"),
    *("can", "could", "may", "might", "must", "shall", "should", "will", "would"),
}


def _asks(text: str) -> bool:
    """Whether `text` asks something: a question or a request ("list ...", "state ...")."""
    words = text.strip().split(maxsplit=1)
    return bool(words) and words[0].lower().strip("(\"'") in _ASKING_WORDS


def _question(text: str) -> str:
    text = _clean(text)
    if not text:
        return ""
    first = text.split(maxsplit=1)[0].lower()
    end = "." if first in _REQUESTS or first == "for" else "?"
    return text[:1].upper() + text[1:] + end


@dataclass
class ReasoningStep:
    """One sub-question: the passages searched for it and the answer drawn from them."""

    number: int
    question: str
    focus: str = ""  # what it asks of the passages (SubQuestions.focuses)
    # Its passages by chunk id, best first, as its own search reranked them: each one's answer
    # window is this part's.
    passages: dict[int, Passage] = field(default_factory=dict)
    citation_ids: list[str] = field(default_factory=list)  # its passages' tokens in the context
    answer: str | None = None  # None: not found, see not_found_reason
    not_found_reason: str | None = None  # NO_PASSAGES, NOT_IN_PASSAGES, LOW_CONFIDENCE, UNSUPPORTED
    citations: list[str] = field(default_factory=list)  # the tokens its answer cites (verified)
    quotes: list[tuple[str, str]] = field(default_factory=list)  # (token, snippet) of each citation
    confidence: float = 0.0
    execution_time_ms: float = 0.0

    @property
    def chunk_ids(self) -> list[int]:
        """Its passages' chunk ids, best first."""
        return list(self.passages)

    def as_dict(self) -> dict:
        return {
            "step_number": self.number,
            "question": self.question,
            "intermediate_answer": self.answer,
            "not_found_reason": self.not_found_reason,
            "citations": list(self.citations),
            "sources": list(self.citation_ids),
            "confidence_score": self.confidence,
            "execution_time_ms": self.execution_time_ms,
        }


@dataclass
class Reasoning:
    """The reasoning of one query (the spec's ChainOfThoughtOutput)."""

    strategy: str  # COMPARE or MULTI_PART
    steps: list[ReasoningStep]
    skipped: list[str] = field(default_factory=list)  # sub-questions over max_reasoning_depth
    done: bool = False  # every step has been answered (or found unanswerable)

    def findings(self) -> tuple[Finding, ...]:
        """The steps as the model provider receives them for the synthesis."""
        return tuple(
            Finding(step.question, step.answer, tuple(step.quotes), step.confidence) for step in self.steps
        )

    @property
    def answered(self) -> list[ReasoningStep]:
        return [step for step in self.steps if step.answer is not None]

    @property
    def total_confidence(self) -> float:
        """The weakest answered step's confidence: a synthesis is as sure as its least sure part."""
        answered = self.answered
        return min(step.confidence for step in answered) if answered else 0.0

    def as_dict(self, *, show_steps: bool) -> dict:
        data = {
            "strategy": self.strategy,
            "sub_questions": [step.question for step in self.steps],
            "skipped_sub_questions": list(self.skipped),
            "steps_answered": len(self.answered),
            "total_confidence": self.total_confidence,
        }
        if show_steps:
            data["steps"] = [step.as_dict() for step in self.steps]
        return data


_FENCES = re.compile(r"<(?=\s*/?\s*(?:step|source))", re.I)


def reasoning_block(reasoning: Reasoning) -> str:
    """The answered sub-questions, appended to the context of the synthesis prompt. The answers
    quote documents and the questions come from the user, so both are fenced like sources and
    defused: neither can close or open a step or source fence."""
    lines = [
        "REASONING STEPS (each part of the question, answered from the sources above; build the "
        "final answer from them, check them against the sources, and cite the sources themselves):"
    ]
    for step in reasoning.steps:
        answer = step.answer if step.answer is not None else "Not found in the sources."
        question = step.question.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")
        lines.append(f'<step n="{step.number}" question="{question}">')
        lines.append(_FENCES.sub("&lt;", answer))
        lines.append("</step>")
    return "\n".join(lines)
