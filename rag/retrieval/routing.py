"""Document-aware routing: find the document a question names, so search can look there first.

Legal questions often name their document: "In the services agreement between ACME and Globex,
what is the notice period?" or "Consider the Amendment No. 3 to the License Agreement between Fox
Mobile and Glu Mobile; what is the expiration date?". Two steps:

1. `split_reference` separates the reference ("the services agreement between ACME and Globex")
   from the question ("what is the notice period?"), by sentence shape only (no database).
2. `route` scores the tenant's documents against the reference with BM25 over a short profile of
   each document: title, file name, type, date, metadata values and the opening of its text (where
   contracts name their parties and judgments their court and parties). Rare words such as party
   names weigh most; words every document shares ("agreement", "inc") weigh almost nothing.

A query without a recognisable reference is scored as a whole, and routed only when one document
matches it clearly. Routing never excludes anything: the caller fuses the routed search with a
corpus-wide one, so a wrong guess costs rank, not recall.
"""

from __future__ import annotations

import dataclasses
import math
import re
import threading
from collections import Counter, OrderedDict
from dataclasses import dataclass

from django.db.models.functions import Left

from rag import selectors
from rag.models import Document, DocumentStatus
from tenants.models import Tenant
from tenants.selectors import owned_list

from .filters import SearchFilters

PROFILE_TEXT_CHARS = 2000  # the opening of a document: title, parties, court, date
MAX_ROUTED = 3
# A document is routed when its match is at least this share of the best one's.
ROUTE_RELATIVE = 0.8
# Normalized BM25 (share of the reference's weight matched) needed to route, with and without an
# explicit reference in the question.
MIN_SCORE_WITH_REFERENCE = 0.25
MIN_SCORE_WITHOUT_REFERENCE = 0.35
_BM25_K1, _BM25_B = 1.2, 0.75

_DOC_WORDS = (
    r"agreements?|contracts?|leases?|licen[cs]es?|amendments?|addend(?:um|a)|deeds?|memorand(?:um|a)|memos?|"
    r"polic(?:y|ies)|judg(?:e)?ments?|orders?|opinions?|briefs?|complaints?|motions?|pleadings?|acts?|statutes?|"
    r"regulations?|letters?|notes?|bylaws|charters?|certificates?|plans?|schedules?|exhibits?|awards?|"
    r"settlements?|nda|mou|sow|statements? of work|invoices?|guarantee|guaranty|indentures?|warrants?|"
    r"filings?|transcripts?|depositions?|decisions?|rulings?|decrees?|petitions?|affidavits?|covenants?"
)
_DOC_CUE = re.compile(rf"\b(?:{_DOC_WORDS})\b|\bbetween\b.+\band\b|\bv\.?\s|\bvs\.?\s", re.I)
# A word that names a kind of document ("lease", "MSA", "judgment"): what tells "the MSA vs the
# lease" (two documents) from "Smith vs. Jones" (a case name).
DOCUMENT_WORD = re.compile(rf"\b(?:{_DOC_WORDS}|msa|sla|spa|apa)\b", re.I)
_LEAD = (
    r"(?:consider(?:ing)?|regarding|concerning|re:?|in|under|per|according to|for|within|about|"
    r"with respect to|as to|from|on)"
)
_QUESTION_WORD = (
    r"(?:what|which|who|whom|whose|when|where|why|how|is|are|was|were|does|do|did|can|could|may|might|must|"
    r"shall|should|will|would|has|have|had|list|summari[sz]e|identify|describe|explain|please|find|give|tell)\b"
)
_LEADING = re.compile(rf"^\s*{_LEAD}\s+(?P<ref>.+)$", re.I | re.S)
_TRAILING_REFERENCE = r"(?P<ref>(?:the|this|that|our|their)\s+[^?]+?)\s*\??\s*$"
_TRAILING = re.compile(
    r"^(?P<q>.+?)\s+(?:in|under|of|from|within|according to)\s+" + _TRAILING_REFERENCE, re.I | re.S
)
# Without a reference phrase, only names can point at a document: capitalised words after the
# first ("… applies to Hooli and Pied Piper?") and years.
_NAME = re.compile(r"(?<=\S)[\s/]+([A-Z][\w&.'-]*)|\b((?:19|20)\d\d)\b")
_WORD = re.compile(r"[a-z0-9]+(?:[.'-][a-z0-9]+)*")
_QUESTION_WORD_RE = re.compile(r"[\w'\u2019.-]*\w")
_POSSESSIVE = re.compile(r"['\u2019]s\b", re.I)
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])|[_\-.]+")
_STOPWORDS = frozenset(
    re.findall(
        r"\w+",
        """a an and any are as at be between by consider do does for from has have in into is it its of on
        or our regarding that the their these this those to under what which with""",
    )
)


@dataclass(frozen=True)
class DocumentReference:
    """A query split into the part naming a document (may be "") and the question itself."""

    reference: str
    question: str

    @property
    def explicit(self) -> bool:
        return bool(self.reference)


def split_reference(query: str) -> DocumentReference:
    """Separate a leading ("In the lease between A and B, what …") or trailing ("What … in the lease
    between A and B?") document reference from the question. No reference → ("", query)."""
    text = " ".join(query.split())
    leading = _LEADING.match(text)
    if leading:
        rest = leading["ref"]
        # The reference ends at the first ";" or ":", else at a comma followed by a question word
        # (party names contain commas: "Fox Mobile Entertainment, Inc. and Glu Mobile Inc.").
        cut = re.search(r"\s*[;:]\s*", rest) or re.search(rf",\s*(?={_QUESTION_WORD})", rest, re.I)
        if cut and _DOC_CUE.search(rest[: cut.start()]):
            question = rest[cut.end() :].strip()
            if question:
                return DocumentReference(rest[: cut.start()].strip(), question)
    trailing = _TRAILING.match(text)
    if trailing and _DOC_CUE.search(trailing["ref"]):
        return DocumentReference(trailing["ref"].strip(), trailing["q"].strip() + "?")
    return DocumentReference("", text)


def tokens(text: str) -> list[str]:
    """Lower-case word tokens without stopwords or a possessive "'s"; CamelCase and snake_case file
    names are split."""
    spaced = _POSSESSIVE.sub("", _CAMEL.sub(" ", text))
    return [word for word in _WORD.findall(spaced.lower()) if word not in _STOPWORDS]


@dataclass(frozen=True)
class RoutedDocument:
    document_id: int
    title: str
    score: float  # 0..1: the share of the reference's BM25 weight this document matches


@dataclass(frozen=True)
class Routing:
    """What routing decided; `documents` is empty when nothing matched clearly enough.

    `naming` holds the question's words that named the routed documents without a reference
    phrase ("When does the Jaguars deal with ARC expire?": jaguars, arc): they chose the
    document, so they do not also score its passages (`content_question`).
    """

    reference: str
    question: str
    documents: tuple[RoutedDocument, ...] = ()
    naming: tuple[str, ...] = ()
    # A reference by kind that fits several documents in scope (rag.retrieval.ambiguity): each is
    # routed equally (when there are few) and the answer names them all.
    ambiguous: tuple[RoutedDocument, ...] = ()

    @property
    def content_question(self) -> str:
        """The question without the words that named its document: what passages are scored on."""
        return strip_words(self.question, self.naming)

    @property
    def generic_question(self) -> str:
        """`content_question` with a phrase naming the document by its kind read as "the agreement"
        (generic_reference): what the cross-encoder and the clause types read. The phrase is read
        with its naming words ("the Excite sponsorship" names a document; "the sponsorship" alone
        may be what a clause grants), and again once they are gone (more than three words before
        the kind: "the Union Dental business affiliate agreement")."""
        return generic_reference(strip_words(generic_reference(self.question), self.naming))

    def match(self, document_id: int) -> float:
        """How well `document_id` matches the reference (0 when it was not routed)."""
        return next((d.score for d in self.documents if d.document_id == document_id), 0.0)

    def as_metadata(self) -> dict:
        return {
            "reference": self.reference,
            "question": self.question,
            "documents": [
                {"doc_id": d.document_id, "title": d.title, "score": round(d.score, 4)}
                for d in self.documents
            ],
            "ambiguous": [{"doc_id": d.document_id, "title": d.title} for d in self.ambiguous],
        }


# A question word names a document (rather than saying what is asked) when at most this share of
# the tenant's documents mention it: a party's name does, "confidential" or "State" does not.
NAMING_MAX_SHARE = 0.2


def strip_words(question: str, words: tuple[str, ...]) -> str:
    """`question` without the words whose routing tokens are all in `words` ("BicycleTX",
    "Flotek's", "HPIL-Ginares"), or the question itself when nothing would be left."""
    if not words:
        return question
    naming = set(words)

    def keep(match: re.Match) -> str:
        found = tokens(match.group())
        return " " if found and all(token in naming for token in found) else match.group()

    stripped = _QUESTION_WORD_RE.sub(keep, question)
    stripped = re.sub(r"(?<=\s)[/&-](?=\s)", " ", stripped)
    stripped = " ".join(stripped.split()).replace(" ?", "?").replace(" ,", ",")
    stripped = re.sub(r"\s+(?:with|between|and|of|for|from|by|to)(?=[?.,]|$)", "", stripped, flags=re.I)
    return stripped if tokens(stripped) else question


# Capitalised words that open a question rather than name a party ("Under Union Dental's agreement").
_NOT_A_NAME = (
    r"(?:under|in|of|for|from|with|by|to|on|at|is|are|was|does|do|did|can|could|may|must|will|would|"
    r"should|what|when|how|who|which|where|why|if|per)"
)
# "the terpene supply agreement", "its agreement", "the Good Sam endorsement deal", "Flotek's supply
# agreement": a phrase that names the document by its kind, up to three words before the kind; not
# "the term of the franchise" (what is asked about, then the document).
REFERENCE_PHRASE = re.compile(
    # A possessive names it too: "Dr. Green's affiliate agreement", "Union Dental's agreement".
    r"(?:\b(?:the|this|that|its|his|her|their|our|your|my)|(?:\b(?!"
    + _NOT_A_NAME
    + r"\b)(?-i:[A-Z])[\w.&-]*\s+){0,2}"
    r"\b(?-i:[A-Z])[\w&.-]*['\u2019]s)"
    r"\s+(?P<modifiers>(?:(?!(?:the|a|an|of|in|under|to|for|"
    r"with|by|on|from|this|that|its|is|are|was|be|what|which)\b)[\w'\u2019/&.-]+\s+){0,3})"
    r"(?:agreements?|contracts?|deals?|amendments?|arrangements?|mou|msa|nda|"
    # Kinds of deal that are also what a clause grants: in the plural they are the grants ("can the
    # trademark licenses be sublicensed?"), not the document.
    r"(?P<deal>sponsorship|licen[cs]e|lease|franchise|endorsement|non-compete|cooperation|collaboration|"
    r"partnership|joint venture|co-promotion|distributorship))\b(?!\s+(?:fee|term|period|rights?)\b)",
    re.I,
)
# "the term of the franchise", "under the license": a bare kind of deal after one of these is the
# document; elsewhere ("once the endorsement is pulled", "covered by the license") it is the grant.
_OF_THE_DOCUMENT = re.compile(r"\b(?:of|under|in|to|for|from|within)\s+$", re.I)


_AMENDMENT = re.compile(r"\bamendments?$", re.I)


def generic_reference(question: str) -> str:
    """`question` with a phrase naming a document by its kind replaced by "the agreement": which
    agreement is routing's business; scoring passages on "supply agreement" finds the title and the
    parties paragraph rather than the clause asked about. A bare kind of deal ("the endorsement")
    names the document only after "of", "under", "in" …: "once the endorsement is pulled" keeps it."""

    def generic(match: re.Match) -> str:
        bare_deal = match["deal"] and not match["modifiers"]
        if bare_deal and not _OF_THE_DOCUMENT.search(question[: match.start()]):
            return match.group()
        # An amendment calls itself "this Amendment": the model reads "When does the agreement take
        # effect?" as unrelated to "This Amendment shall only become effective upon ...".
        return "the amendment" if _AMENDMENT.search(match.group()) else "the agreement"

    return REFERENCE_PHRASE.sub(generic, question)


class _Profiles:
    """BM25 statistics over one tenant's document profiles."""

    def __init__(self, rows: list[tuple[int, str, list[str]]]):
        self.rows = rows
        self.titles = {pk: title for pk, title, _ in rows}
        self.term_counts = {pk: Counter(words) for pk, _, words in rows}
        self.lengths = {pk: len(words) for pk, _, words in rows}
        count = max(len(rows), 1)
        self.average_length = sum(self.lengths.values()) / count or 1.0
        frequency: Counter = Counter()
        for counts in self.term_counts.values():
            frequency.update(counts.keys())
        self.frequency = frequency
        self.count = count
        # BM25+ style idf, never negative: a word in every document weighs ~0.
        self.idf = {word: math.log(1 + (count - n + 0.5) / (n + 0.5)) for word, n in frequency.items()}
        # A reference word no document contains is as telling as it gets: it weighs in the
        # normalization, so "the charter between Cyberdyne and Tyrell Corp" does not route on "corp".
        self.unseen_idf = math.log(1 + (count + 0.5) / 0.5)

    def names_few(self, word: str) -> bool:
        """Whether `word` is in some profile, but in at most NAMING_MAX_SHARE of them: it can name a
        document (a party's name does, "confidential" or "State" does not)."""
        return 0 < self.frequency.get(word, 0) <= max(1.0, NAMING_MAX_SHARE * self.count)

    def scores(self, words: list[str], candidates: set[int] | None) -> dict[int, float]:
        """{document: normalized BM25 in 0..1} for documents matching any of `words`."""
        words = list(dict.fromkeys(words))
        best = sum(self.idf.get(word, self.unseen_idf) for word in words) * (_BM25_K1 + 1)
        if best <= 0:
            return {}
        result = {}
        for pk, counts in self.term_counts.items():
            if candidates is not None and pk not in candidates:
                continue
            norm = _BM25_K1 * (1 - _BM25_B + _BM25_B * self.lengths[pk] / self.average_length)
            total = 0.0
            for word in words:
                tf = counts.get(word, 0)
                if tf:
                    total += self.idf[word] * tf * (_BM25_K1 + 1) / (tf + norm)
            if total:
                result[pk] = total / best
        return result


_cache: OrderedDict[tuple[int, int, frozenset[int]], _Profiles] = OrderedDict()
_cache_lock = threading.Lock()
_CACHE_TENANTS = 16


def _profile_words(title: str, filename: str, doc_type: str, year, metadata, head: str) -> list[str]:
    values = [str(v) for v in (metadata or {}).values() if isinstance(v, str | int | float)]
    values += [str(item) for v in (metadata or {}).values() if isinstance(v, list) for item in v]
    parts = [title, filename.rsplit(".", 1)[0], doc_type, str(year or ""), *values, head]
    return tokens(" ".join(parts))


def _profiles(tenant: Tenant, index_version: int, hidden: frozenset[int] = frozenset()) -> _Profiles:
    """The tenant's profiles, built once per corpus version (the version bumps on every change),
    without the documents in `hidden` (see `_profiles_seen_by`)."""
    key = (tenant.pk, index_version, hidden)
    with _cache_lock:
        if key in _cache:
            _cache.move_to_end(key)
            return _cache[key]
    if hidden:
        rows = [row for row in _profiles(tenant, index_version).rows if row[0] not in hidden]
    else:
        documents = (
            owned_list(Document, tenant=tenant)
            .filter(status=DocumentStatus.READY)
            .annotate(head=Left("text", PROFILE_TEXT_CHARS))
            .values_list("pk", "title", "original_filename", "doc_type", "document_date", "metadata", "head")
        )
        rows = [
            (pk, title, _profile_words(title, filename, doc_type, date.year if date else "", metadata, head))
            for pk, title, filename, doc_type, date, metadata, head in documents
        ]
    profiles = _Profiles(rows)
    with _cache_lock:
        _cache[key] = profiles
        while len(_cache) > _CACHE_TENANTS:
            _cache.popitem(last=False)
    return profiles


def _visible_documents(tenant: Tenant, filters: SearchFilters | None) -> set[int] | None:
    """The documents the request's reader may see (None: every one)."""
    visibility = filters.visibility if filters is not None else None
    if visibility is None or not visibility.restricts():
        return None
    return set(selectors.document_ids_visible(tenant=tenant, visibility=visibility))


def _profiles_seen_by(tenant: Tenant, index_version: int, visible: set[int] | None) -> _Profiles:
    """The profiles as the request's reader may know them (`visible`: the documents they may see,
    None: every one): a document they may not see (a confidential one they may not read, one behind
    a wall) weighs in no word's statistics, so which visible document a reference routes to never
    depends on what hidden ones say."""
    profiles = _profiles(tenant, index_version)
    if visible is None:
        return profiles
    hidden = frozenset(pk for pk in profiles.titles if pk not in visible)
    return _profiles(tenant, index_version, hidden) if hidden else profiles


def _allowed_documents(
    tenant: Tenant, filters: SearchFilters | None, visible: set[int] | None
) -> set[int] | None:
    """Documents that still have chunks under `filters` (None: no restriction); `visible` when the
    filters hold nothing but what the reader may see."""
    if filters is None or filters.is_empty():
        return None
    if visible is not None and dataclasses.replace(filters, visibility=None).is_empty():
        return visible
    return set(selectors.document_ids_within(tenant=tenant, filters=filters))


_YEAR = re.compile(r"(?:19|20)\d\d")


def _ranked(scores: dict[int, float]) -> list[tuple[int, float]]:
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))


def _names(question: str) -> list[str]:
    """Capitalised words after the first, and years; "HPIL-Ginares" and "HPIL/Ginares" give both
    names as well as the compound."""
    found = tokens(" ".join(match.group(1) or match.group(2) for match in _NAME.finditer(question)))
    return found + [part for word in found if "-" in word for part in tokens(word.replace("-", " "))]


def _naming(profiles: _Profiles, words: list[str], routed: tuple[RoutedDocument, ...]) -> tuple[str, ...]:
    """The rare words among `words` that the routed documents' profiles contain."""
    return tuple(
        word
        for word in dict.fromkeys(words)
        if profiles.names_few(word) and any(profiles.term_counts[d.document_id].get(word) for d in routed)
    )


def route(*, tenant: Tenant, query: str, index_version: int, filters: SearchFilters | None = None) -> Routing:
    """The documents of `tenant` that `query` names, best first (at most MAX_ROUTED).

    `index_version` is the tenant's corpus version (rag.selectors.index_version_get), which keys
    the cached document profiles.
    """
    split = split_reference(query)
    words = tokens(split.reference) if split.explicit else _names(split.question)
    if not words:
        return Routing(split.reference, split.question)
    visible = _visible_documents(tenant, filters)
    profiles = _profiles_seen_by(tenant, index_version, visible)
    if not split.explicit:
        # Capitalised words that no document contains ("IP", "Who") say nothing about which
        # document is meant; a reference phrase's unknown words do (a contract not in the corpus).
        words = [word for word in words if word in profiles.frequency]
    else:
        # "Can GA assign its rights under the agency agreement?": a party named outside the
        # reference tells two agency agreements apart (its rare names only: not "Law", "Term").
        words += [word for word in _names(split.question) if profiles.names_few(word)]
    allowed = _allowed_documents(tenant, filters, visible)
    minimum = MIN_SCORE_WITH_REFERENCE if split.explicit else MIN_SCORE_WITHOUT_REFERENCE
    ranked = _ranked(profiles.scores(words, allowed))
    if not split.explicit and (not ranked or ranked[0][1] < minimum):
        # "Can the Glumetza agreement be renewed after 2011?": a year without a reference phrase
        # is more often part of the question than of the document's name.
        words = [word for word in words if not _YEAR.fullmatch(word)]
        ranked = _ranked(profiles.scores(words, allowed)) if words else []
    if not ranked or ranked[0][1] < minimum:
        return Routing(split.reference, split.question)
    top = ranked[0][1]
    routed = tuple(
        RoutedDocument(pk, profiles.titles[pk], score)
        for pk, score in ranked[:MAX_ROUTED]
        if score >= ROUTE_RELATIVE * top
    )
    named = _names(split.question) if split.explicit else words
    naming = _naming(profiles, [word for word in named if word in profiles.frequency], routed)
    return Routing(split.reference, split.question, routed, naming)


@dataclass(frozen=True)
class NameMatch:
    """What a name resolves to (`resolve_name`): the one document it names, or the documents it fits
    equally (`fits`, when it names none of them clearly); neither when nothing in scope matches."""

    document: RoutedDocument | None = None
    fits: tuple[RoutedDocument, ...] = ()


def resolve_name(
    *, tenant: Tenant, name: str, index_version: int, filters: SearchFilters | None = None
) -> NameMatch:
    """The document of `tenant` that `name` ("the Acme MSA", "Hydraspin agreement") names, scored like
    a question's explicit reference (`route`) over the profiles of the documents the request's
    reader may see (`filters.visibility`) and within its scope (`filters`). A document they may not
    see, or one outside the scope, matches nothing: the name is unresolved, exactly as when no such
    document exists. Words naming a kind of document that no visible profile holds ("msa" where the
    title says "Master Services Agreement") are left out; any other unknown word counts against the
    match (a party no document names). Resolved when the best match reaches
    MIN_SCORE_WITH_REFERENCE and no other document comes within ROUTE_RELATIVE of it."""
    words = tokens(name)
    visible = _visible_documents(tenant, filters)
    profiles = _profiles_seen_by(tenant, index_version, visible)
    words = [word for word in words if word in profiles.frequency or not DOCUMENT_WORD.fullmatch(word)]
    if not words:
        return NameMatch()
    ranked = _ranked(profiles.scores(words, _allowed_documents(tenant, filters, visible)))
    if not ranked or ranked[0][1] < MIN_SCORE_WITH_REFERENCE:
        return NameMatch()
    top = ranked[0][1]
    close = [
        RoutedDocument(pk, profiles.titles[pk], score)
        for pk, score in ranked
        if score >= ROUTE_RELATIVE * top
    ]
    if len(close) > 1:
        return NameMatch(fits=tuple(close[: MAX_ROUTED + 1]))
    return NameMatch(document=close[0])
