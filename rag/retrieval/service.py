"""The one retrieval path: route → search → fuse → rerank → rank → threshold → passages.

The query API, the pipeline, the agent's search tools and `manage.py evaluate legalbench` all call
`retrieve()`, so what is evaluated is what users get.

1. **Route** (routing.py): a question that names a document ("In the lease between A and B, …")
   is split into that reference and the question proper, and the documents matching the
   reference are found.
2. **Search**: the question runs hybrid (or semantic / keyword) search within the routed
   documents and across the whole corpus (tenant and filters always inside the SQL), each fetching
   a high-recall candidate pool (`RAG_CANDIDATE_POOL`). A question naming a clause type ("Is there
   an anti-assignment clause?") is searched together with how such clauses are worded
   (legal_terms.py, `RAG_QUERY_EXPANSION`); the snippet looks for that wording too.
3. **Relevance** of each candidate in 0..1: a weighted mean of its cosine similarity and keyword coverage
   (hybrid), or the one leg's score; a configured cross-encoder replaces this with its own score.
   Keyword coverage weighs more (SEMANTIC_SHARE): on LegalBench-RAG, shares 0.2-0.4 gave the
   same precision@1 (21-22 %), 0.5 gave 19.6 %. When routing found documents, relevance
   blends what a passage says with how well its document matches the reference:
   (1 - ROUTING_WEIGHT) · content + ROUTING_WEIGHT · document match. So
   the named document's passages come first, yet a strong passage elsewhere is not hidden.
4. **Rank** (ranking.py): the spec's rank_score = relevance·w_s + recency·w_r + trust·w_t with
   the tenant's weights; `similarity_score` is the relevance. Passages whose relevance and
   cosine are both under the similarity threshold are dropped; the best `top_k` remain.
5. **Passages**: document metadata, exact offsets, and a snippet around the best sentence.
   A confidential document the reader may not read is never searched (the request's filters carry
   what the reader sees, `SearchFilters.visibility`, into the SQL) and never yields a passage.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from rag import selectors
from rag.ingest import embedding
from rag.models import Chunk, Document, Sensitivity, SourceType
from ragsite.exceptions import InvalidQuery
from tenants.models import Role, Tenant
from tenants.selectors import owned_list

from . import ambiguity, legal_terms, ranking, replica, snippets
from .filters import SearchFilters, Visibility
from .hits import Hit
from .hybrid import MODES, hybrid_search
from .rerank import WindowScore, get_reranker, score_passages
from .routing import RoutedDocument, Routing, generic_reference, route
from .session import positive_int, retrying_lost_connection

MAX_TOP_K = 100
MAX_CANDIDATE_POOL = 1000
# Share of a routed passage's relevance that comes from its document matching the reference.
ROUTING_WEIGHT = 0.5
# Hybrid content relevance: this share of cosine similarity, the rest keyword coverage.
SEMANTIC_SHARE = 0.3
# With a cross-encoder, relevance is this share of its score, the rest the fused relevance.
# (LegalBench-RAG dev P@1: 0.8 → 19.1 %, 0.5 → 20.9 %, 0.4 → 21.5 %, none → 21.7 %; the natural
# questions' answers lead with the best window of the first passage's document, bench/README.md.)
CROSS_ENCODER_SHARE = 0.4
# A passage under the relevance thresholds is still kept when the cross-encoder reads one of its
# windows as answering the question at least this well (its logit 0: "relevant" more likely than
# not). In a small firm, or for a short document stored as one passage, the clause that answers
# can be far from the question by cosine and idf-weighted keywords ("Which state's laws govern?"
# against a licence's one passage: 0.20 both; the model: 0.90).
CROSS_ENCODER_ADMITS = 0.5


@dataclass(frozen=True)
class Reader:
    """Who is asking, for redaction: admins and owners read every confidential document, anyone
    else only those listing them as readers. `Reader()` (no user) reads no confidential text."""

    user_id: int | None = None
    role: str = Role.VIEWER

    @property
    def reads_all_confidential(self) -> bool:
        return Role.at_least(self.role, Role.ADMIN)


@dataclass(frozen=True)
class Passage:
    """One retrieved passage with everything a citation needs; offsets always index `Document.text`.
    A passage the reader may not read is never retrieved (confidential and walled-off text is
    filtered inside the search SQL, `filters.Visibility`)."""

    chunk_id: int
    document_id: int
    title: str
    source: str  # human label of the source type ("Act / Statute", "User upload")
    source_type: str
    doc_type: str
    jurisdiction: str
    date: date | None
    page_start: int
    page_end: int
    section_title: str
    char_start: int
    char_end: int
    text: str
    snippet: str
    snippet_start: int
    snippet_end: int
    similarity_score: float
    rank_score: float
    recency_boost: float
    source_trust: float
    cosine_similarity: float | None
    keyword_score: float | None
    routed: bool
    # The cross-encoder's relevance of the passage's best answer window (None: not reranked) and
    # that window's span in the document (the snippet is cut around it).
    answer_score: float | None = None
    answer_start: int | None = None
    answer_end: int | None = None
    # What else a citation may name the passage by: the uploaded file's name ("msa.pdf") and the
    # chunk's 0-based position in its document (None where unknown, as in a prompt preview).
    filename: str = ""
    chunk_index: int | None = None

    @property
    def answer_span(self) -> tuple[int, int] | None:
        """The answer window as offsets into `text` (None: not reranked)."""
        if self.answer_start is None or self.answer_end is None:
            return None
        return self.answer_start - self.char_start, self.answer_end - self.char_start


@dataclass(frozen=True)
class RetrievalResult:
    passages: list[Passage]
    routing: Routing
    mode: str
    candidates: int  # passages considered before ranking cut them to top_k
    reranker: str  # "none" or the cross-encoder's name
    clause_types: tuple[str, ...] = ()  # clause types the question names, searched with their wording
    timings: dict[str, float] = field(default_factory=dict)  # milliseconds per step


@dataclass
class _Candidate:
    hit: Hit
    routed: bool
    relevance: float = 0.0
    window: WindowScore | None = None  # the cross-encoder's best window, once reranked


@dataclass
class CandidateSet:
    """Step 1's output: every candidate passage with its relevance, before ranking."""

    tenant: Tenant
    query: str  # the query as given (whitespace-normalized)
    question: str  # the question proper (a routed document reference removed)
    searched: str  # what was searched: the question plus the wording of the clause types it names
    routing: Routing
    mode: str
    clause_types: tuple[str, ...]
    candidates: list[_Candidate]
    timings: dict[str, float] = field(default_factory=dict)


@dataclass
class RankedSet:
    """Steps 2-3's output: the kept candidates with their rank scores, best first."""

    found: CandidateSet
    items: list[tuple[_Candidate, ranking.RankScores]]
    documents: dict[int, Document]
    weights: ranking.Weights
    today: date
    reranker: str = "none"
    top_k: int | None = None  # `items` may hold more (for the reranker); rerank cuts to this
    # Candidates under the default thresholds, best first, that the cross-encoder may still admit
    # (CROSS_ENCODER_ADMITS) when fewer than RAG_RERANK_DEPTH passed them.
    below: list[tuple[_Candidate, ranking.RankScores]] = field(default_factory=list)


def retrieve(
    *,
    tenant: Tenant,
    query: str,
    top_k: int | None = None,
    mode: str = "hybrid",
    filters: SearchFilters | None = None,
    reader: Reader | None = None,
    similarity_threshold: float | None = None,
    reranking_enabled: bool = True,
    routing_enabled: bool = True,
    candidate_pool: int | None = None,
    snippet_size: int | None = None,
    today: date | None = None,
    max_chunks: int | None = None,
    index_version: int | None = None,
    weights: ranking.Weights | None = None,
) -> RetrievalResult:
    """The best `top_k` (default RAG_DEFAULT_TOP_K) passages of `tenant` for `query`, best first.

    The four steps below in order (the pipeline runs them as separate stages). `similarity_threshold`
    defaults to RAG_MIN_SIMILARITY_THRESHOLD; a configured cross-encoder reorders the ranked top_k
    and `max_chunks` (default: all) cuts them; `reader` decides what may be searched (default:
    nobody's, so no confidential text and no walled case; `seen_by_reader`); `weights` replace the
    tenant's ranking weights (see `rank`).
    Raises `InvalidQuery` for bad options and `VectorStoreUnavailable` when search fails.
    """
    top_k = positive_int(settings.RAG_DEFAULT_TOP_K if top_k is None else top_k, "top_k", maximum=MAX_TOP_K)
    found = search(
        tenant=tenant,
        query=query,
        mode=mode,
        filters=seen_by_reader(tenant, filters, reader),
        routing_enabled=routing_enabled,
        candidate_pool=max(_pool(candidate_pool), top_k),
        index_version=index_version,
    )
    clock = time.perf_counter()
    ranked = rank(found, top_k=top_k, similarity_threshold=similarity_threshold, today=today, weights=weights)
    found.timings["rank_ms"] = _since(clock)
    clock = time.perf_counter()
    ranked = rerank(ranked, enabled=reranking_enabled, max_chunks=max_chunks)
    found.timings["rerank_ms"] = _since(clock)
    clock = time.perf_counter()
    result = passages(ranked, reader=reader, snippet_size=snippet_size)
    found.timings["passages_ms"] = _since(clock)
    return result


def retrieve_with_each(
    *,
    tenant: Tenant,
    query: str,
    weights: Sequence[ranking.Weights],
    top_k: int | None = None,
    reader: Reader | None = None,
    similarity_threshold: float | None = None,
    today: date | None = None,
) -> list[RetrievalResult]:
    """`retrieve` with each of `weights` in turn, one result per weights, in order: the question is
    searched once and the same candidates are ranked with each, so the results differ by the
    weights alone (the admin compares current and proposed ranking weights this way)."""
    top_k = positive_int(settings.RAG_DEFAULT_TOP_K if top_k is None else top_k, "top_k", maximum=MAX_TOP_K)
    filters = seen_by_reader(tenant, None, reader)
    found = search(tenant=tenant, query=query, filters=filters, candidate_pool=max(_pool(None), top_k))
    today = today or timezone.localdate()
    results = []
    for each in weights:
        ranked = rank(
            found, top_k=top_k, similarity_threshold=similarity_threshold, today=today, weights=each
        )
        results.append(passages(rerank(ranked), reader=reader))
    return results


def seen_by_reader(tenant: Tenant, filters: SearchFilters | None, reader: Reader | None) -> SearchFilters:
    """`filters` bounded by what `reader` (default: no confidential access) may see, unless they
    already carry a visibility (the pipeline resolves it once per request, rag.pipeline.scope)."""
    filters = filters or SearchFilters()
    if filters.visibility is not None:
        return filters
    return filters.seen_by(reader_visibility(tenant=tenant, reader=reader or Reader()))


def reader_visibility(*, tenant: Tenant, reader: Reader) -> Visibility:
    """What `reader` may see of `tenant` now (rag.selectors.reader_visibility)."""
    return selectors.reader_visibility(
        tenant=tenant, user_id=reader.user_id, reads_all_confidential=reader.reads_all_confidential
    )


def _pool(candidate_pool: int | None) -> int:
    pool = settings.RAG_CANDIDATE_POOL if candidate_pool is None else candidate_pool
    return positive_int(pool, "candidate_pool", maximum=MAX_CANDIDATE_POOL)


def _since(clock: float) -> float:
    return round((time.perf_counter() - clock) * 1000, 2)


@retrying_lost_connection
def search(
    *,
    tenant: Tenant,
    query: str,
    mode: str = "hybrid",
    filters: SearchFilters | None = None,
    routing_enabled: bool = True,
    candidate_pool: int | None = None,
    index_version: int | None = None,
    routing: Routing | None = None,
) -> CandidateSet:
    """Step 1: route, search (hybrid, semantic or keyword) and score each candidate's relevance.

    `candidate_pool` (default RAG_CANDIDATE_POOL) passages are fetched per search leg.
    `index_version` saves a query when the caller already knows it, and `routing` the routing
    (`route`, then `with_ambiguity`) when the caller already made it for this query and `filters`.
    A lost database connection is retried (`session.retrying_lost_connection`), then
    `VectorStoreUnavailable`.
    """
    if mode not in MODES:
        raise InvalidQuery(f"Unknown search mode {mode!r}.", details={"mode": f"One of {', '.join(MODES)}."})
    pool = _pool(candidate_pool)
    timings: dict[str, float] = {}
    clock = time.perf_counter()

    def lap(name: str) -> None:
        nonlocal clock
        timings[name] = _since(clock)
        clock = time.perf_counter()

    query = " ".join((query or "").split())
    if not query:
        return CandidateSet(tenant, "", "", "", Routing("", ""), mode, (), [], timings)
    version = index_version
    if version is None and (routing_enabled or replica.replica_aliases()):
        version = selectors.index_version_get(tenant=tenant)
    if not routing_enabled:
        routing = Routing("", query)
    elif routing is None:
        routing = route(tenant=tenant, query=query, index_version=version, filters=filters)
        routing = with_ambiguity(tenant, routing, filters)
    lap("route_ms")
    question = routing.question or query
    clauses = legal_terms.clause_types(question) if settings.RAG_QUERY_EXPANSION else []
    # The words that named the document routed the search; passages are scored on the rest.
    searched = legal_terms.expand(routing.content_question or question, clauses)
    query_vector = embedding.embed([searched])[0] if mode != "keyword" else None
    lap("embed_ms")
    candidates = _search(tenant, searched, mode, filters, routing, pool, query_vector, version or 0)
    for candidate in candidates:
        candidate.relevance = _blend(routing, candidate, _content_relevance(candidate.hit, mode))
    lap("search_ms")
    return CandidateSet(
        tenant=tenant,
        query=query,
        question=question,
        searched=searched,
        routing=routing,
        mode=mode,
        clause_types=tuple(clause.name for clause in clauses),
        candidates=candidates,
        timings=timings,
    )


def with_ambiguity(tenant: Tenant, routing: Routing, filters: SearchFilters | None) -> Routing:
    """`routing` with the documents a reference by kind fits (ambiguity.py), where it routed
    nothing, or several documents alike: the one it fits is named ("What law governs the
    distributor agreement?" where one title says "Distributor"); several in scope are each routed
    equally when there are at most MAX_CANDIDATES, and named as ambiguous. (The pipeline then
    searches each of them alone, rag.pipeline.stages.ambiguity; a search over all of them ranks
    their passages jointly.)

    Routed by score where the kind fits several: "the promotion agreement" routed to two Promotion
    Agreements whose scores differ only by what else their texts say. Where every routed document
    is one the reference's kind fits and no rare name of the question tells them apart
    (`routing.naming`), the question may mean any of them. A reference by kind alone ("the
    sponsorship contract", every word of it a kind word) is ambiguous wherever its kind fits two
    or more titles, whatever routing chose: one of them alone, where only its text says
    "contract". A name that picks one stands ("the sponsorship agreement with Boyd")."""
    if routing.naming:
        return routing
    # The reference's words ("the promotion agreement") with the rest of the question.
    asked = " ".join(part for part in (routing.reference, routing.question) if part)
    found = ambiguity.fitting(tenant=tenant, question=asked, filters=filters)
    if not found:
        return routing
    if routing.documents and not _still_ambiguous(routing, found):
        return routing
    if len(found) == 1:
        named = RoutedDocument(found[0].document_id, found[0].title, 1.0)
        return dataclasses.replace(routing, documents=(named,))
    listed = tuple(RoutedDocument(c.document_id, c.title, 1.0) for c in found)
    routed = listed if len(listed) <= ambiguity.MAX_CANDIDATES else ()
    return dataclasses.replace(routing, documents=routed, ambiguous=listed)


def _still_ambiguous(routing: Routing, found: list[ambiguity.Candidate]) -> bool:
    """Whether a question routing chose documents for may still mean any of the several titles its
    reference's kind fits (`found`): a reference by kind alone, or routed documents that are all
    among them."""
    if len(found) < 2:
        return False
    if ambiguity.by_kind_only(routing.reference):
        return True
    routed = {d.document_id for d in routing.documents}
    return len(routed) >= 2 and routed <= {c.document_id for c in found}


def _blend(routing: Routing, candidate: _Candidate, content: float) -> float:
    if not routing.documents:
        return content
    return (1 - ROUTING_WEIGHT) * content + ROUTING_WEIGHT * routing.match(candidate.hit.document_id)


def rank(
    found: CandidateSet,
    *,
    top_k: int | None = None,
    similarity_threshold: float | None = None,
    today: date | None = None,
    weights: ranking.Weights | None = None,
) -> RankedSet:
    """Step 2: the spec's rank score with the tenant's weights (or `weights`, e.g. proposed ones
    an admin previews before saving them); candidates whose relevance and cosine similarity are
    both under the threshold (default RAG_MIN_SIMILARITY_THRESHOLD) are dropped, the best `top_k`
    kept. Under the default threshold, the best of the dropped stay in `below` for the
    cross-encoder to judge (`rerank`); a threshold the caller sets is final."""
    top_k = positive_int(settings.RAG_DEFAULT_TOP_K if top_k is None else top_k, "top_k", maximum=MAX_TOP_K)
    threshold = _threshold(similarity_threshold)
    tenant = found.tenant
    documents = _documents(tenant, {c.hit.document_id for c in found.candidates})
    if weights is None:
        weights = selectors.ranking_weights_get(tenant=tenant)
    today = today or timezone.localdate()
    items = _ranked(found.candidates, documents, weights, today)
    depth = max(top_k, settings.RAG_RERANK_DEPTH) if get_reranker() is not None else top_k
    passing = [_evidence(c, scores) >= threshold for c, scores in items]
    kept = [item for item, passed in zip(items, passing, strict=True) if passed][:depth]
    below = []
    if similarity_threshold is None:
        below = [item for item, passed in zip(items, passing, strict=True) if not passed]
        below = below[: settings.RAG_RERANK_DEPTH]
    return RankedSet(found, kept, documents, weights, today, top_k=top_k, below=below)


def _evidence(candidate: _Candidate, scores: ranking.RankScores) -> float:
    """What the threshold compares: the passage's relevance, or its cosine similarity when that
    is higher. Keyword coverage is idf-weighted within the tenant, so in a small corpus a passage
    saying exactly what was asked can have a low relevance while its meaning is clearly close."""
    return max(scores.similarity, candidate.hit.similarity or 0.0)


def _ranked(candidates, documents, weights, today):
    return ranking.rank(
        candidates,
        weights=weights,
        today=today,
        similarity=lambda c: c.relevance,
        document_date=lambda c: documents[c.hit.document_id].document_date,
        source_type=lambda c: documents[c.hit.document_id].source_type,
    )


def _threshold(value) -> float:
    threshold = settings.RAG_MIN_SIMILARITY_THRESHOLD if value is None else value
    if isinstance(threshold, bool) or not isinstance(threshold, int | float) or not math.isfinite(threshold):
        raise InvalidQuery(
            "similarity_threshold must be a number.", details={"similarity_threshold": "A number."}
        )
    if not -1.0 <= threshold <= 1.0:
        raise InvalidQuery(
            "similarity_threshold must be between -1 and 1.",
            details={"similarity_threshold": "Between -1 and 1."},
        )
    return float(threshold)


def rerank(ranked: RankedSet, *, enabled: bool = True, max_chunks: int | None = None) -> RankedSet:
    """Step 3: a configured cross-encoder (rerank.get_reranker) scores the best answer window of
    each of the RAG_RERANK_DEPTH best ranked passages against the question, and they are ranked
    again on CROSS_ENCODER_SHARE of that score plus the rest of the fused relevance (the routing
    match blended in as before), ahead of the passages below that depth, in their order. When
    fewer than that depth passed the thresholds, as many of the best under them (`below`) are
    read too, and kept if the model scores a window of theirs CROSS_ENCODER_ADMITS or more. Then
    the best `top_k`, and of them `max_chunks` (default: all), are kept. Without a cross-encoder,
    or `enabled=False`, the order stays and nothing under the thresholds is kept."""
    if max_chunks is not None:
        max_chunks = positive_int(max_chunks, "max_chunks", maximum=MAX_TOP_K)
    reranker = get_reranker() if enabled else None
    items = ranked.items
    depth = settings.RAG_RERANK_DEPTH
    trial = ranked.below[: max(0, depth - len(items))]
    if reranker is not None and (items or trial):
        # The best RAG_RERANK_DEPTH are rescored and ranked again; the rest keep their order after.
        head = dataclasses.replace(ranked, items=items[:depth] + trial)
        tried = {candidate.hit.chunk_id for candidate, _ in trial}
        rescored = [
            candidate
            for candidate in _rescored(head, reranker)
            if candidate.hit.chunk_id not in tried or _admitted(candidate, ranked.found.routing)
        ]
        items = _ranked(rescored, ranked.documents, ranked.weights, ranked.today) + items[depth:]
    if ranked.found.routing.ambiguous:
        items = _each_document_first(items, [d.document_id for d in ranked.found.routing.documents])
    items = items[: ranked.top_k] if ranked.top_k is not None else list(items)
    return dataclasses.replace(
        ranked,
        items=items[:max_chunks] if max_chunks is not None else items,
        reranker=reranker.name if reranker is not None else "none",
    )


def _admitted(candidate: _Candidate, routing: Routing) -> bool:
    """Whether the cross-encoder reads a passage under the thresholds as answering after all. It
    reads only the question's words: when the question names documents, a passage of another
    stays out (the lease's governing law asked for, the MSA's clause answers the words too)."""
    if routing.documents and not candidate.routed:
        return False
    return candidate.window is not None and candidate.window.score >= CROSS_ENCODER_ADMITS


def _each_document_first(items: list, document_ids: list[int]) -> list:
    """`items` with the best of each of `document_ids` first (in rank order), then the rest: an
    ambiguous question is answered from each document it may mean."""
    firsts = []
    for document_id in document_ids:
        best = next((item for item in items if item[0].hit.document_id == document_id), None)
        if best is not None:
            firsts.append(best)
    firsts.sort(key=lambda item: items.index(item))
    return firsts + [item for item in items if item not in firsts]


def _rescored(ranked: RankedSet, reranker) -> list[_Candidate]:
    found = ranked.found
    candidates = [candidate for candidate, _ in ranked.items]
    texts = dict(
        owned_list(Chunk, tenant=found.tenant)
        .filter(pk__in=[c.hit.chunk_id for c in candidates])
        .values_list("pk", "text")
    )
    # The model reads the question with the usual wording of the clause type it names: it matches
    # words more than meaning ("governing law" scores "governed by the laws of" low; with the
    # wording, high). A phrase naming a routed document by its kind ("the Flotek supply agreement")
    # is read as "the agreement": the kind words find the title and the parties paragraph. (The
    # search legs keep them: LegalBench-RAG dev R@8 85.3 % with, 82.4 % without.)
    # Chunks replaced by a reindex since the search are gone: they are not rescored (nor kept).
    candidates = [c for c in candidates if c.hit.chunk_id in texts]
    proper = found.routing.generic_question or generic_reference(found.question)
    question = legal_terms.expand(proper)
    windows = score_passages(
        reranker,
        question,
        [texts[c.hit.chunk_id] for c in candidates],
        terms=snippets.query_terms(question),
        windows_per_passage=settings.RAG_RERANK_WINDOWS,
        evidence=legal_terms.evidence(proper),
        asked=proper,
    )
    rescored = []
    for candidate, window in zip(candidates, windows, strict=True):
        content = _content_relevance(candidate.hit, found.mode)
        if window is not None:
            content = CROSS_ENCODER_SHARE * window.score + (1 - CROSS_ENCODER_SHARE) * content
        relevance = _blend(found.routing, candidate, content)
        rescored.append(dataclasses.replace(candidate, relevance=relevance, window=window))
    return rescored


def passages(
    ranked: RankedSet, *, reader: Reader | None = None, snippet_size: int | None = None
) -> RetrievalResult:
    """Step 4: the kept passages with document metadata, offsets, snippets and redaction."""
    found = ranked.found
    size = positive_int(snippet_size or settings.RAG_SNIPPET_SIZE, "snippet_size")
    reader = reader or Reader()
    return RetrievalResult(
        passages=_passages(found.tenant, ranked.items, ranked.documents, reader, found.searched, size),
        routing=found.routing,
        mode=found.mode,
        candidates=len(found.candidates),
        reranker=ranked.reranker,
        clause_types=found.clause_types,
        timings=found.timings,
    )


def _search(
    tenant, question, mode, filters, routing: Routing, pool: int, query_vector, index_version: int
) -> list[_Candidate]:
    """Candidates from the routed documents first, then the whole corpus (each chunk once). The
    scans run on a read replica when one is fresh for the tenant (replica.py)."""
    routed = None
    if routing.documents:
        routed = dataclasses.replace(filters or SearchFilters(), document_ids=_routed_ids(filters, routing))
    scopes = [routed, filters] if routed and routed.document_ids else [filters]
    scanned, _ = replica.searched_on_replica(
        lambda scope: hybrid_search(
            tenant=tenant, query=question, k=pool, filters=scope, mode=mode, query_vector=query_vector
        ),
        scopes,
        tenant=tenant,
        index_version=index_version,
    )
    *routed_hits, corpus_hits = scanned
    found: dict[int, _Candidate] = {}
    for hits in routed_hits:
        for hit in hits:
            found[hit.chunk_id] = _Candidate(hit, routed=True)
    for hit in corpus_hits:
        if hit.chunk_id not in found:
            found[hit.chunk_id] = _Candidate(hit, routed=routing.match(hit.document_id) > 0)
    return list(found.values())


def _routed_ids(filters: SearchFilters | None, routing: Routing) -> tuple[int, ...]:
    routed = [d.document_id for d in routing.documents]
    if filters is not None and filters.document_ids:
        routed = [pk for pk in routed if pk in set(filters.document_ids)]
    return tuple(routed)


def _content_relevance(hit: Hit, mode: str) -> float:
    """What the passage says, scored in 0..1 (negative cosines count as 0)."""
    cosine = max(hit.similarity or 0.0, 0.0)
    keyword = hit.keyword_score or 0.0
    if mode == "semantic":
        return cosine
    if mode == "keyword":
        return keyword
    return SEMANTIC_SHARE * cosine + (1 - SEMANTIC_SHARE) * keyword


def _documents(tenant: Tenant, ids: set[int]) -> dict[int, Document]:
    return {
        document.pk: document
        for document in owned_list(Document, tenant=tenant)
        .filter(pk__in=ids)
        .only(
            "pk",
            "title",
            "original_filename",
            "source_type",
            "doc_type",
            "jurisdiction",
            "document_date",
            "sensitivity",
        )
    }


def _readable_confidential(tenant: Tenant, reader: Reader, documents: list[Document]) -> set[int]:
    confidential = [d.pk for d in documents if d.sensitivity == Sensitivity.CONFIDENTIAL]
    if not confidential or reader.reads_all_confidential:
        return set(confidential)
    if reader.user_id is None:
        return set()
    through = Document.confidential_readers.through
    return set(
        through.objects.filter(
            document_id__in=confidential, document__tenant=tenant, user_id=reader.user_id
        ).values_list("document_id", flat=True)
    )


def _answer_window(candidate: _Candidate, chunk: Chunk, *, opening: int) -> dict:
    """The answer window's score and document offsets; a window opening the passage starts at
    `opening`, the start of its sentence (see _opening_windows)."""
    window = candidate.window
    if window is None:
        return {}
    start = chunk.char_start + window.start
    return {
        "answer_score": round(window.score, 4),
        "answer_start": opening if opening < chunk.char_start else start,
        "answer_end": chunk.char_start + window.end,
    }


# A passage cut inside a sentence opens with a fragment ("done any act or thing which will in any
# way impair the rights of King ..."): quoted as an answer, it reads as nonsense. When the answer
# window is that fragment, the passage is taken back to the sentence's start, found in the
# document's previous passage (chunks overlap), at most this far back.
SENTENCE_LOOKBACK_CHARS = 600


def _opening_windows(tenant: Tenant, kept: list[tuple[_Candidate, Chunk]]) -> dict[int, tuple[str, int]]:
    """{chunk id: (the text before it that completes the sentence its answer window opens with,
    the page that text starts on)}, for the chunks whose answer window is their first words and
    starts inside a sentence."""
    opening = [
        chunk
        for candidate, chunk in kept
        if candidate.window is not None
        and chunk.index > 0
        and not chunk.text[: candidate.window.start].strip()
    ]
    if not opening:
        return {}
    wanted = Q()
    for chunk in opening:
        wanted |= Q(document_id=chunk.document_id, index=chunk.index - 1)
    previous = {
        (row.document_id, row.index): row
        for row in owned_list(Chunk, tenant=tenant)
        .filter(wanted)
        .only("document_id", "index", "text", "char_start", "page_end")
    }
    prefixes = {}
    for chunk in opening:
        before = previous.get((chunk.document_id, chunk.index - 1))
        if before is not None:
            prefix = sentence_before(before.text, before.char_start, chunk.text, chunk.char_start)
            if prefix:
                prefixes[chunk.pk] = (prefix, min(chunk.page_start, before.page_end))
    return prefixes


def sentence_before(previous: str, previous_start: int, text: str, start: int) -> str:
    """The start of the sentence `text` (at document offset `start`) opens inside, as found at the
    end of `previous` (at `previous_start`, overlapping or ending where `text` starts): "" when
    `text` opens on a sentence's start, or that start is over SENTENCE_LOOKBACK_CHARS back."""
    tail_from = max(previous_start, start - SENTENCE_LOOKBACK_CHARS)
    tail = previous[tail_from - previous_start : start - previous_start]
    if not tail.strip() or len(tail) != start - tail_from:
        return ""
    joined = tail + text[:SENTENCE_LOOKBACK_CHARS]
    for begin, end in snippets.sentence_spans(joined):
        if begin < len(tail) < end and (begin > 0 or tail_from == previous_start == 0):
            return tail[begin:]
        if begin >= len(tail):
            break
    return ""


def _passages(tenant, kept, documents, reader: Reader, question: str, size: int) -> list[Passage]:
    if not kept:
        return []
    chunk_ids = [c.hit.chunk_id for c, _ in kept]
    rows = {
        chunk.pk: chunk
        for chunk in owned_list(Chunk, tenant=tenant)
        .filter(pk__in=chunk_ids)
        .only(
            "pk",
            "document_id",
            "index",
            "text",
            "char_start",
            "char_end",
            "page_start",
            "page_end",
            "section_title",
        )
    }
    # A document reindexed since the search replaced its chunks: the gone ones are left out (the
    # next question finds the new ones), never a 500.
    kept = [(candidate, scores) for candidate, scores in kept if candidate.hit.chunk_id in rows]
    # A confidential document the reader may not read does not exist for them: the search leaves
    # it out inside the SQL (SearchFilters.visibility); a caller that searched without it still
    # gets none of its passages, and no notice, heading, score or offset that would show it matched.
    readable = _readable_confidential(tenant, reader, [documents[c.hit.document_id] for c, _ in kept])
    kept = [
        (candidate, scores)
        for candidate, scores in kept
        if documents[candidate.hit.document_id].sensitivity != Sensitivity.CONFIDENTIAL
        or candidate.hit.document_id in readable
    ]
    openings = _opening_windows(tenant, [(c, rows[c.hit.chunk_id]) for c, _ in kept])
    terms = snippets.query_terms(question)
    passages = []
    for candidate, scores in kept:
        chunk = rows[candidate.hit.chunk_id]
        document = documents[candidate.hit.document_id]
        window = candidate.window
        prefix, page_start = openings.get(chunk.pk, ("", chunk.page_start))
        char_start = chunk.char_start - len(prefix)
        text = prefix + chunk.text
        snippet = snippets.best_snippet(
            passage=text,
            offset=char_start,
            terms=terms,
            size=size,
            focus=window.start + len(prefix) if window is not None else None,
        )
        passages.append(
            Passage(
                chunk_id=chunk.pk,
                document_id=document.pk,
                title=document.title,
                source=SourceType(document.source_type).label,
                source_type=document.source_type,
                doc_type=document.doc_type,
                jurisdiction=document.jurisdiction,
                date=document.document_date,
                page_start=page_start,
                page_end=chunk.page_end,
                section_title=chunk.section_title,
                char_start=char_start,
                char_end=chunk.char_end,
                text=text,
                snippet=snippet.text,
                snippet_start=snippet.start,
                snippet_end=snippet.end,
                similarity_score=scores.similarity,
                rank_score=scores.rank_score,
                recency_boost=scores.recency_boost,
                source_trust=scores.source_trust,
                cosine_similarity=candidate.hit.similarity,
                keyword_score=candidate.hit.keyword_score,
                routed=candidate.routed,
                **_answer_window(candidate, chunk, opening=char_start),
                filename=document.original_filename,
                chunk_index=chunk.index,
            )
        )
    return passages


def chosen_passages(
    *,
    tenant: Tenant,
    question: str,
    chosen: Sequence[tuple[Hit, WindowScore | None]],
    reader: Reader | None = None,
    context_chars: int | None = None,
) -> RetrievalResult:
    """Passages for chunks another judgement chose (a matter review's verdicts: one per document),
    in the order given, each with its answer window, like `passages` gives for a search.
    `context_chars`: each passage is cut to its answer window with about this many characters
    either side (at word ends; offsets stay exact), so a list of many documents fits the context."""
    reader = reader or Reader()
    documents = _documents(tenant, {hit.document_id for hit, _ in chosen})
    candidates = [_Candidate(hit, routed=False, relevance=hit.score, window=window) for hit, window in chosen]
    weights = selectors.ranking_weights_get(tenant=tenant)
    scores = {c.hit.chunk_id: s for c, s in _ranked(candidates, documents, weights, timezone.localdate())}
    kept = [(c, scores[c.hit.chunk_id]) for c in candidates]
    size = positive_int(settings.RAG_SNIPPET_SIZE, "snippet_size")
    found = _passages(tenant, kept, documents, reader, question, size)
    if context_chars is not None:
        found = [_around_answer(passage, context_chars) for passage in found]
    reranker = get_reranker()
    return RetrievalResult(
        passages=found,
        routing=Routing("", question),
        mode="review",
        candidates=len(chosen),
        reranker=reranker.name if reranker is not None else "none",
    )


def _around_answer(passage: Passage, chars: int) -> Passage:
    """`passage` cut to its answer window and about `chars` characters either side."""
    span = passage.answer_span
    if span is None:
        return passage
    text = passage.text
    start = max(0, span[0] - chars)
    end = min(len(text), span[1] + chars)
    if start > 0:
        start = text.find(" ", start, span[0]) + 1 or span[0]
    if end < len(text):
        cut = text.rfind(" ", span[1], end)
        end = cut if cut > 0 else span[1]
    return dataclasses.replace(
        passage,
        text=text[start:end],
        char_start=passage.char_start + start,
        char_end=passage.char_start + end,
    )
