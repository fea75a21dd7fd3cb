"""Keyword search: PostgreSQL full-text search (GIN) plus exact legal identifiers.

Query syntax is `websearch_to_tsquery`'s: "quoted phrases" must match as phrases and -word
excludes. Plain words are alternatives, not all required: a question rarely uses the document's
exact words, so a chunk matching more of them ranks higher. Each word counts by its inverse
document frequency in the tenant's corpus (term_stats.py), so "indemnify" outweighs "agreement";
`ts_rank` (term frequency, length-normalized) breaks ties. Identifiers ("Section 10.2",
"§ 2-207", "Rule 12(b)(6)", "123 F.3d 456") are required, checked as regular expressions on the
chunk text (see identifiers.py).

Speed: scoring reads every candidate's tsvector, and in a large corpus the common words of a
question match most chunks. So candidates are the chunks containing one of the question's
rarer words, as many of them as keeps the candidates under `CANDIDATE_ROWS` (by document
frequency); the common words still count in the score. A small corpus scores every match, and so
does a filter leaving few chunks (a case, a document) in a large one. In an archive-size tenant
the candidates of an AND of words are counted first, and one more word is required while they are
far more than expected (words of one contract go together). The hits' cosine similarity is read
for the hits alone: a passage's vector is stored out of line.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from django.contrib.postgres.search import SearchQueryField
from django.db import connection
from django.db.models import BooleanField, Case, F, FloatField, Func, Value, When
from django.db.models.expressions import RawSQL
from django.db.models.functions import Cast
from pgvector.django import CosineDistance

from rag import selectors
from rag.ingest import embedding
from rag.models import Chunk
from ragsite.db_routers import read_connection
from tenants.models import Tenant
from tenants.selectors import owned_list

from .filters import SearchFilters
from .hits import Hit
from .identifiers import Identifier, extract_identifiers
from .session import holds_at_most, positive_int, search_session
from .term_stats import TermStats, term_stats
from .vector import query_vector_list

MAX_WORDS = 32  # a pasted paragraph is not a keyword query; the first words are enough
_PHRASE = re.compile(r"[\"\u201c\u201d]([^\"\u201c\u201d]*)[\"\u201c\u201d]")
# ts_rank normalization: 1 divides by 1 + log(chunk length), 32 scales to rank/(rank+1), 0..1.
_RANK_NORMALIZATION = 1 | 32
# Candidate rows a words-only query may score (see the module docstring), at least this many per
# result asked for.
CANDIDATE_ROWS = 1000
CANDIDATES_PER_RESULT = 10
MAX_SCORED_WORDS = 12
# In a tenant this large (term_stats samples its frequencies from here on) the candidates an
# AND of words finds are counted before they are scored; more than this many times the row
# limit, and one more word is required (see _first_within_reach).
CHECKED_FROM_CHUNKS = 50_000
CHECKED_ROWS_FACTOR = 3
MAX_CANDIDATE_CHECKS = 3


class _Matches(Func):
    """`search_vector @@ tsquery` as a boolean SQL expression."""

    arg_joiner = " @@ "
    template = "(%(expressions)s)"
    output_field = BooleanField()


def _tsquery(text: str) -> Cast:
    # A tsquery already normalized by PostgreSQL, passed back as a literal (not re-stemmed).
    return Cast(Value(text), output_field=SearchQueryField())


@dataclass
class _Query:
    phrases: list[str] = field(default_factory=list)
    identifiers: list[Identifier] = field(default_factory=list)
    words: list[str] = field(default_factory=list)
    negated: list[str] = field(default_factory=list)


def parse_query(query: str) -> _Query:
    """Split a keyword query into phrases, identifiers, words and -excluded words (no SQL)."""
    parsed = _Query()
    parsed.phrases = [phrase.strip() for phrase in _PHRASE.findall(query) if phrase.strip()]
    rest = _PHRASE.sub(" ", query).replace('"', " ")
    parsed.identifiers, rest = extract_identifiers(rest)
    words = [identifier.label for identifier in parsed.identifiers if identifier.label]
    for token in rest.split():
        if token.startswith("-") and token[1:2].isalpha():
            parsed.negated.append(token[1:])
        else:
            words.append(token)
    parsed.words = list(dict.fromkeys(word.lower() for word in words))[:MAX_WORDS]
    return parsed


def _to_tsqueries(texts: list[str]) -> list[str]:
    """websearch_to_tsquery('english', …)::text of each text ('' for stopwords), in one round trip."""
    if not texts:
        return []
    with read_connection().cursor() as cursor:
        cursor.execute(
            "SELECT websearch_to_tsquery('english', t)::text "
            "FROM unnest(%s::text[]) WITH ORDINALITY AS u(t, i) ORDER BY i",
            [texts],
        )
        return [row[0] for row in cursor.fetchall()]


@dataclass(frozen=True)
class _Resolved:
    """The query's parts as PostgreSQL tsquery texts (stopword-only parts dropped)."""

    phrases: list[str]
    identifier_terms: list[str]
    words: list[str]
    negated: list[str]


def _resolve(parsed: _Query) -> _Resolved:
    quoted = [f'"{phrase}"' for phrase in parsed.phrases]
    identifier_terms = [f'"{identifier.terms}"' for identifier in parsed.identifiers]
    groups = [quoted, identifier_terms, parsed.words, parsed.negated]
    resolved = iter(_to_tsqueries([text for group in groups for text in group]))
    parts = []
    for group in groups:
        tsqueries = [next(resolved) for _ in group]
        parts.append([tsq for tsq in tsqueries if tsq])  # a stopword-only part resolves to ''
    return _Resolved(*parts)


def _any(tsqueries: list[str]) -> str:
    return " | ".join(f"( {tsq} )" for tsq in tsqueries)


_LEXEME = re.compile(r"'((?:[^']|'')*)'")


def _lexemes(tsquery: str) -> list[str]:
    return [lexeme.replace("''", "'") for lexeme in _LEXEME.findall(tsquery)]


def _word_frequency(tsquery: str, stats: TermStats) -> int:
    """Chunks containing a word (a phrase of lexemes for "non-compete"): its rarest lexeme's df."""
    return min((stats.df(lexeme) for lexeme in _lexemes(tsquery)), default=0)


def _word_weight(tsquery: str, stats: TermStats) -> float:
    """A word's weight: the idf of its rarest lexeme."""
    return max((stats.idf(lexeme) for lexeme in _lexemes(tsquery)), default=0.0)


def candidate_query(words: list[str], stats: TermStats, *, limit: int) -> str:
    """A tsquery finding the chunks worth scoring, about `limit` of them at most ('' for no
    words): the first of `candidate_queries`."""
    return next(iter(candidate_queries(words, stats, limit=limit)), "")


def candidate_queries(words: list[str], stats: TermStats, *, limit: int) -> list[str]:
    """The tsqueries that may find the chunks worth scoring, the one expected to stay within
    `limit` rows first, then each tighter one; [] for no words.

    Usually the OR of the rarest words whose chunks together stay within `limit` (at least the
    rarest one): their frequencies add up to at least the rows it finds, so it is the only one.
    When even the rarest word is in more than `limit` chunks, its chunks must also contain the
    next rarest words, as many as it takes to get under `limit` (estimated from their
    frequencies): the chunks with most of the words are still all found. The estimate assumes
    the words partly independent, which they need not be (the two parties' names of a contract
    go together), so the same AND with one more word, two more, … up to all of them follow.
    """
    frequency = {word: _word_frequency(word, stats) for word in words}
    ordered = sorted(words, key=lambda w: (frequency[w], w))
    if not ordered:
        return []
    if frequency[ordered[0]] > limit:
        required, expected = 0, float(max(stats.chunks, 1))
        for word in ordered:
            required += 1
            # The words of one question go together ("grant" and "license"): assume a share
            # of chunks the square root of independence's, so as not to underestimate.
            share = frequency[word] / max(stats.chunks, 1)
            expected *= share if required == 1 else math.sqrt(share)
            if expected <= limit:
                break
        return [" & ".join(f"( {tsq} )" for tsq in ordered[:n]) for n in range(required, len(ordered) + 1)]
    chosen, rows = [], 0
    for word in ordered:
        rows += frequency[word]
        if chosen and rows > limit:
            break
        chosen.append(word)
    return [_any(chosen)]


def _first_within_reach(chunks, queries: list[str], stats: TermStats, *, rows: int) -> str:
    """The first of `queries` (candidate_queries) whose chunks are at most `rows`, each checked
    by counting no further than one more, at most MAX_CANDIDATE_CHECKS of them, else the next.

    Checked only in a tenant of more than CHECKED_FROM_CHUNKS chunks: there an estimate off by
    a few times means thousands of rows, each costing the scoring query's reads (a two-word
    AND of one contract's party names found 5,511 passages against 1,000 expected in a
    million, bench/README.md), while a count of up to `rows` costs a few milliseconds. Below it
    the first query is taken unchecked, as it always was.
    """
    if stats.chunks <= CHECKED_FROM_CHUNKS:
        return queries[0]
    for tsquery in queries[:-1][:MAX_CANDIDATE_CHECKS]:
        if holds_at_most(chunks.filter(_Matches(F("search_vector"), _tsquery(tsquery))), rows):
            return tsquery
    return queries[min(len(queries) - 1, MAX_CANDIDATE_CHECKS)]


def keyword_search(
    *, tenant: Tenant, query: str, k: int, filters: SearchFilters | None = None, query_vector=None
) -> list[Hit]:
    """The `k` chunks of `tenant` best matching `query` as keywords, best first.

    With `query_vector`, each hit also carries its cosine similarity to it (None for a chunk
    without a vector of the current embedding model), read for the `k` hits only: hybrid search
    needs it for every hit.

    Score in 0..1: (idf of the words matched + mean idf · ts_rank/(ts_rank+1)) / (idf of all
    words + mean idf). A query with nothing searchable (empty, only stopwords, only exclusions)
    returns []. Raises `VectorStoreUnavailable` on timeouts and lost connections.
    """
    k = positive_int(k, "k")
    parsed = parse_query(query or "")
    with search_session():
        terms = _resolve(parsed)
        required = terms.phrases or parsed.identifiers
        if not (required or terms.words):
            return []
        stats = term_stats(tenant=tenant, index_version=selectors.index_version_get(tenant=tenant))
        weights = _scored_words(terms.words, stats)
        chunks = owned_list(Chunk, tenant=tenant)
        if filters is not None:
            chunks = chunks.filter(filters.as_q())
        must = [f"( {tsq} )" for tsq in terms.phrases] + [f"!( {tsq} )" for tsq in terms.negated]
        if must:
            chunks = chunks.filter(_Matches(F("search_vector"), _tsquery(" & ".join(must))))
        for identifier in parsed.identifiers:
            chunks = chunks.filter(text__iregex=identifier.pattern)
        if not required:
            # Only words: a chunk must contain one of the rarer ones (the GIN index finds them).
            # The word frequencies are the tenant's: a filter (a case, the routed document) that
            # leaves few chunks is scored whole, or words common in the tenant would require
            # words its chunks do not have.
            limit = max(CANDIDATE_ROWS, CANDIDATES_PER_RESULT * k)
            if filters is not None and holds_at_most(chunks, limit):
                worth_scoring = _any(list(weights))
            else:
                queries = candidate_queries(list(weights), stats, limit=limit)
                worth_scoring = _first_within_reach(chunks, queries, stats, rows=CHECKED_ROWS_FACTOR * limit)
            chunks = chunks.filter(_Matches(F("search_vector"), _tsquery(worth_scoring)))
        rows = list(
            chunks.annotate(matched=_words_matched(weights), rank=_rank(terms, list(weights)))
            .order_by("-matched", "-rank", "pk")
            .values_list("pk", "document_id", "matched", "rank")[:k]
        )
        similarity = _similarities(tenant, [row[0] for row in rows], query_vector)
    mean_weight = sum(weights.values()) / len(weights) if weights else 1.0
    total = sum(weights.values()) + mean_weight
    hits = []
    for pk, document_id, matched_weight, normalized_rank in rows:
        score = min((matched_weight + mean_weight * normalized_rank) / total, 1.0)
        hits.append(
            Hit(
                chunk_id=pk,
                document_id=document_id,
                score=score,
                similarity=similarity.get(pk),
                keyword_score=score,
            )
        )
    return hits


def _scored_words(words: list[str], stats: TermStats) -> dict[str, float]:
    """{word: weight} of the query's MAX_SCORED_WORDS most informative words (each costs a tsvector
    lookup per candidate row; the rest are so common they barely move a score)."""
    weights = {word: _word_weight(word, stats) for word in words}
    kept = sorted(weights, key=lambda word: (-weights[word], word))[:MAX_SCORED_WORDS]
    return {word: weights[word] for word in words if word in kept}


def _words_matched(weights: dict[str, float]) -> RawSQL:
    """The summed weights of the query's words the chunk contains (SQL float). Raw SQL because
    the ORM takes longer to compile a dozen CASE expressions than PostgreSQL takes to run them."""
    if not weights:
        return RawSQL("0.0", [], output_field=FloatField())
    column = f"{connection.ops.quote_name(Chunk._meta.db_table)}.{connection.ops.quote_name('search_vector')}"
    case = f"CASE WHEN {column} @@ %s::tsquery THEN %s ELSE 0.0 END"
    params = [item for tsq, weight in weights.items() for item in (tsq, weight)]
    sql = "(" + " + ".join([case] * len(weights)) + ")"  # only placeholders are interpolated
    return RawSQL(sql, params, output_field=FloatField())  # noqa: S611


def _similarities(tenant: Tenant, chunk_ids: list[int], query_vector) -> dict[int, float | None]:
    """{chunk id: cosine similarity to `query_vector`} of the chunks kept, in a query of their own:
    a passage's vector is stored out of line (TOAST), so reading it for every candidate the
    scoring query weighs cost as much as the scoring itself at a million passages (bench/README.md)."""
    if query_vector is None or not chunk_ids:
        return {}
    rows = (
        owned_list(Chunk, tenant=tenant)
        .filter(pk__in=chunk_ids)
        .annotate(similarity=_similarity(query_vector))
        .values_list("pk", "similarity")
    )
    return dict(rows)


def _similarity(query_vector):
    """1 - cosine distance to `query_vector` for chunks of the current embedding model (SQL)."""
    return Case(
        When(
            embedding_model=embedding.model_id(),
            then=Value(1.0) - CosineDistance("embedding", query_vector_list(query_vector)),
        ),
        default=Value(None),
        output_field=FloatField(),
    )


def _rank(terms: _Resolved, words: list[str]):
    """ts_rank over every positive part, scaled to 0..1 (SQL float). Not ts_rank_cd: it costs twice
    as much per row and ranked no better on LegalBench-RAG (bench/README.md)."""
    ranked_on = _any(terms.phrases + terms.identifier_terms + words)
    if not ranked_on:
        return Value(0.0, output_field=FloatField())
    return Func(
        F("search_vector"),
        _tsquery(ranked_on),
        Value(_RANK_NORMALIZATION),
        function="ts_rank",
        output_field=FloatField(),
    )
