"""Compare: two to MAX_SIDES documents set side by side on one topic, each answered from its own text.

"Compare the termination rights in the Alfa Aesar and Hydraspin agreements", "How does the governing
law of the Acme MSA differ from the Beta license?", "Contrast the exclusivity clauses of X and Y";
or, with two to MAX_SIDES documents chosen as the scope (`filters.document_ids`), "Compare the
termination rights" / "How do they differ on governing law?".

1. Detection (`comparison_asked`): the question's comparison is parsed like chain of thought's
   (rag.pipeline.reasoning.compared). Each subject must look like the name of a document (a name
   with a capital, or a kind of document: "the Beta license"); a subject that does not ("the
   licensor") makes it no comparison of documents, and search answers it as usual. Failing that, a
   question with a comparing word (compare, differ, contrast, versus) over a scope of two to
   MAX_SIDES chosen documents compares those documents.
2. Resolution (`compare`): each name is resolved like a reference to a document
   (rag.retrieval.routing.resolve_name) among the documents of the request's scope its reader may
   see. A confidential document they may not read, or one behind an ethical wall, matches nothing,
   exactly like a name no document has: when the name refers to a document by its kind ("the
   Hydraspin agreement"), the answer says which name was not found (or which visible documents a
   name fits equally) and never hints at a hidden document; a bare name that matches nothing
   ("Acme": a party, perhaps) leaves the question to search. Names that resolve to fewer than two
   different documents (both names match one contract: its parties, say) are no comparison of
   documents either.
3. Each side is searched only inside its own document (the request's filters narrowed to it): the
   normal hybrid retrieval and cross-encoder, for the topic; its best PASSAGES_PER_SIDE passages.
   A side whose best passages do not answer the topic (the answerability gate of an ordinary
   question about that one document, including its "the document never uses such words" test)
   has nothing found: its row says so rather than borrowing another document's passage.

The pipeline stage (rag.pipeline.stages.compare) puts the sides' passages in the context, grouped
by document, and the answer is a table, one row per document (rag.llm.compare).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from django.conf import settings

from rag import selectors
from rag.models import Document
from rag.pipeline.answerability import answerability, missing_clause
from rag.pipeline.reasoning import compared
from rag.retrieval import service as retrieval
from rag.retrieval.filters import SearchFilters
from rag.retrieval.routing import DOCUMENT_WORD, resolve_name
from rag.retrieval.service import Passage, Reader
from tenants.models import Tenant
from tenants.selectors import owned_list

MAX_SIDES = 4
PASSAGES_PER_SIDE = 2
# "compare", "comparison", "differ", "differences", "contrast", "versus", "vs."
_COMPARING = re.compile(r"\b(?:compar(?:e|es|ed|ing|ison)|differ\w*|contrast\w*|versus|vs\.?)(?=\W|$)", re.I)
# A subject that names a document: a capitalised word ("the Acme MSA", "Alfa Aesar") or a kind of
# document ("the supply agreement"); never a place in one ("Section 5", "clause 7.2").
_NAME_WORD = re.compile(r"(?:^|\s)(?!(?:The|This|That|These|Those|Our|Their|Its)\b)[A-Z]")
_PLACE = re.compile(
    r"^(?:the\s+)?(?:sections?|clauses?|articles?|paragraphs?|sub-?sections?|schedules?|exhibits?|annex|"
    r"appendix|§+)(?:\s|$)",
    re.I,
)
# "the governing law of the Acme MSA": the topic, then the document it is asked of.
_TOPIC_OF = re.compile(
    r"^(?P<topic>.+?)\s+(?:of|in|under|within|from)\s+(?P<name>(?:the|this|that|our)\s.+)$", re.I
)
_TOPIC_WORD = re.compile(r"\s+(?:clauses?|provisions?|rights|terms|obligations?|sections?)$", re.I)
_DETERMINER = re.compile(r"^(?:the|this|that|these|those|our|their|its|both|each)\s+", re.I)
# The words a comparison over the chosen documents wraps its topic in.
_WRAPPING = (
    re.compile(r"^(?:please\s+)?(?:compare|contrast)\s+", re.I),
    re.compile(
        r"^(?:how|in what ways?)\s+(?:do|does|did)\s+(?:they|these|those|the|both|the two)?\s*"
        r"(?:\w+\s+)?(?:differ|compare)\s*(?:on|in|regarding|as to|with respect to|about|over)?\s*",
        re.I,
    ),
    re.compile(
        r"^(?:what\s+(?:are|is)\s+)?(?:the\s+)?(?:main\s+|key\s+)?differences?\s*(?:in|of|between|on|regarding)?\s*",
        re.I,
    ),
    re.compile(
        r"\s+(?:in|of|under|between|across|for)\s+(?:these|those|the|both|each of the|the two|all)\s*"
        r"(?:two|three|four)?\s*(?:agreements|contracts|documents|leases|licen[cs]es|deals|files)$",
        re.I,
    ),
    re.compile(r"\s+(?:between|across)\s+(?:them|these|those)$", re.I),
)


@dataclass(frozen=True)
class Asked:
    """A comparison as the question asks it: the `names` it sets side by side (empty: the scope's
    chosen documents) and its `topic` ("the termination rights"; "" for none)."""

    names: tuple[str, ...]
    topic: str

    @property
    def question(self) -> str:
        """What each side is searched for: the topic as a question about one document."""
        return f"What does the agreement say about {self.topic}?" if self.topic else "What are the key terms?"

    @property
    def heading(self) -> str:
        """The topic as the table's column heading ("Termination rights")."""
        topic = _DETERMINER.sub("", self.topic) or "key terms"
        return topic[:1].upper() + topic[1:]

    @property
    def noun(self) -> str:
        """What a side without it lacks: "termination" for "the termination rights"."""
        topic = _DETERMINER.sub("", self.topic)
        return _TOPIC_WORD.sub("", topic) or "relevant"


@dataclass(frozen=True)
class Side:
    """One document of a comparison: the `name` the question gave it (its title when the scope
    chose it), its best `passages` on the topic, and its row's text when none answers (`missing`)."""

    name: str
    document_id: int
    title: str
    passages: tuple[Passage, ...] = ()
    missing: str = ""


@dataclass(frozen=True)
class Comparison:
    """The documents compared, each with what was found in it; or the names that resolved to no
    document (`unresolved`) or to several equally (`ambiguous`: the name and the visible titles it
    fits), when the comparison cannot be made as asked."""

    asked: Asked
    sides: tuple[Side, ...]
    unresolved: tuple[str, ...] = ()
    ambiguous: tuple[tuple[str, tuple[str, ...]], ...] = ()

    @property
    def found(self) -> tuple[Side, ...]:
        return tuple(side for side in self.sides if side.passages)

    @property
    def problem(self) -> str:
        """What keeps the comparison from being made ("" when nothing does): each name not found,
        each name that fits several documents."""
        parts = [
            f"No document in scope matches \u201c{name}\u201d: check the name, or choose the documents "
            "to compare."
            for name in self.unresolved
        ]
        for name, titles in self.ambiguous:
            shown = ", ".join(f"\u201c{title}\u201d" for title in titles)
            parts.append(f"\u201c{name}\u201d fits several documents ({shown}): name the one you mean.")
        return " ".join(parts)

    @property
    def nothing_found(self) -> str:
        """The answer when no side holds anything on the topic."""
        titles = " or ".join(f"\u201c{side.title}\u201d" for side in self.sides)
        return f"No {self.asked.noun} provision found in {titles}."


def comparison_asked(question: str, filters: SearchFilters) -> Asked | None:
    """The comparison of documents `question` asks for, or None (see the module docstring, step 1).
    Only the question's wording and the number of documents the scope chose are read."""
    found = compared(question)
    if found is not None:
        names, topic = _names_and_topic(found.subjects, found.topic)
        if 2 <= len(names) <= MAX_SIDES and all(_names_document(name) for name in names):
            return Asked(names, topic)
    if 2 <= len(filters.document_ids) <= MAX_SIDES and _COMPARING.search(question):
        return Asked((), found.topic if found and found.topic else _topic(question))
    return None


def _names_and_topic(subjects: tuple[str, ...], topic: str) -> tuple[tuple[str, ...], str]:
    """The subjects as names of documents, and the topic: "the governing law of the Acme MSA" gives
    its topic when the question names none elsewhere; a kind of document named once in the plural
    ("the Alfa Aesar and Hydraspin agreements") is every name's."""
    names = list(subjects)
    if not topic:
        split = _TOPIC_OF.match(names[0])
        if split and _names_document(split["name"]):
            topic, names[0] = split["topic"], split["name"]
    head, _, last = names[-1].rpartition(" ")
    kind = _singular(last)
    shared = kind != last and DOCUMENT_WORD.fullmatch(kind)
    if shared and not any(DOCUMENT_WORD.search(name) for name in names[:-1]):
        names = [f"{name} {kind}" for name in names[:-1]] + [f"{head} {kind}".strip()]
    return tuple(dict.fromkeys(names)), topic


def _singular(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def _names_document(name: str) -> bool:
    return not _PLACE.match(name) and bool(_NAME_WORD.search(name) or DOCUMENT_WORD.search(name))


def _topic(question: str) -> str:
    """The topic of a comparison over the chosen documents: the question without the words that
    ask to compare them ("Compare the termination rights of these agreements" → "the termination
    rights")."""
    topic = " ".join(question.split()).rstrip(" ?.!")
    for pattern in _WRAPPING:
        topic = pattern.sub("", topic)
    return topic.strip(" ,;:")


def compare(
    *,
    tenant: Tenant,
    asked: Asked,
    filters: SearchFilters,
    reader: Reader,
    index_version: int,
    mode: str = "hybrid",
    reranking_enabled: bool = True,
) -> Comparison | None:
    """The comparison `asked` for, its names resolved within `filters` (which carry the reader's
    visibility: rag.pipeline.scope) and each side searched in its own document (module docstring,
    steps 2 and 3); None when it is no comparison of two or more documents after all."""
    if asked.names:
        sides, unresolved, ambiguous = _resolved(tenant, asked.names, filters, index_version)
        if not sides:
            return None  # no name is a document (parties, say)
        if unresolved or ambiguous:
            # Said only of a name that refers to a document by its kind ("the Zyxwv agreement"); a
            # bare name ("Acme") may be a party, and then the question is search's.
            if not all(DOCUMENT_WORD.search(name) for name in [*unresolved, *(n for n, _ in ambiguous)]):
                return None
            return Comparison(asked, tuple(sides), tuple(unresolved), tuple(ambiguous))
        if len(sides) < 2:
            return None  # every name is the same document (two parties of one contract)
    else:
        sides = _chosen(tenant, filters)
        if len(sides) < 2:
            return None
    searched = tuple(
        _searched(tenant, side, asked, filters, reader, mode=mode, reranking_enabled=reranking_enabled)
        for side in sides
    )
    return Comparison(asked, searched)


def _resolved(tenant, names, filters, index_version) -> tuple[list[Side], list[str], list]:
    sides: list[Side] = []
    unresolved: list[str] = []
    ambiguous: list[tuple[str, tuple[str, ...]]] = []
    for name in names:
        match = resolve_name(tenant=tenant, name=name, index_version=index_version, filters=filters)
        if match.document is not None:
            if all(side.document_id != match.document.document_id for side in sides):
                sides.append(Side(name, match.document.document_id, match.document.title))
        elif match.fits:
            ambiguous.append((name, tuple(d.title for d in match.fits)))
        else:
            unresolved.append(name)
    return sides, unresolved, ambiguous


def _chosen(tenant: Tenant, filters: SearchFilters) -> list[Side]:
    """The scope's chosen documents the reader may see, in the order chosen."""
    visible = set(selectors.document_ids_within(tenant=tenant, filters=filters))
    titles = dict(owned_list(Document, tenant=tenant).filter(pk__in=visible).values_list("pk", "title"))
    return [Side(titles[pk], pk, titles[pk]) for pk in filters.document_ids if pk in titles]


def _searched(
    tenant, side: Side, asked: Asked, filters: SearchFilters, reader, *, mode, reranking_enabled
) -> Side:
    """`side` with its best passages on the topic, searched inside its own document only; none
    (and its row's "not found" text) when they do not answer it."""
    passages = own_passages(
        tenant=tenant,
        document_id=side.document_id,
        question=asked.question,
        filters=filters,
        reader=reader,
        mode=mode,
        reranking_enabled=reranking_enabled,
        routing_enabled=False,  # the topic's question is ours: it names no document
    )
    if not passages:
        return Side(
            side.name, side.document_id, side.title, (), f"No {asked.noun} provision found in {side.title}."
        )
    return Side(side.name, side.document_id, side.title, passages)


def own_passages(
    *,
    tenant: Tenant,
    document_id: int,
    question: str,
    filters: SearchFilters,
    reader: Reader,
    mode: str = "hybrid",
    reranking_enabled: bool = True,
    routing_enabled: bool = True,
    max_chunks: int = PASSAGES_PER_SIDE,
) -> tuple[Passage, ...]:
    """The best `max_chunks` passages of one document for `question`, as if it had been asked of
    that document alone (`filters.document_ids=[document_id]`, within `filters`, which carry the
    reader's visibility): its own search inside that document, its own cross-encoder ranking, and
    the answerability gate of a question about one document (including its "the document never
    uses such words" test). () when they do not answer it, or the document is outside `filters`
    or not the reader's to see."""
    own = filters.narrowed(SearchFilters(document_ids=(document_id,)))
    if own is None:
        return ()
    result = retrieval.retrieve(
        tenant=tenant,
        query=question,
        filters=own,
        reader=reader,
        mode=mode,
        similarity_threshold=0.0,  # the document was chosen: the cross-encoder judges (below)
        reranking_enabled=reranking_enabled,
        routing_enabled=routing_enabled,
        max_chunks=max_chunks,
    )
    passages = tuple(p for p in result.passages if p.document_id == document_id)
    if not passages or missing_clause(tenant, result, question, own) is not None:
        return ()
    score = answerability(result, question)
    if score is not None and score < settings.RAG_MIN_ANSWERABILITY:
        return ()
    return passages
