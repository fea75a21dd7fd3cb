"""Keyword search: PostgreSQL full-text search (GIN) plus exact legal identifiers.

Query syntax is `websearch_to_tsquery`'s: "quoted phrases" must match as phrases and -word
excludes. Plain words are alternatives, not all required: a question rarely uses the document's
exact words, so a chunk matching more of them ranks higher (the share of words matched, then
`ts_rank_cd`). Identifiers ("Section 10.2", "§ 2-207", "Rule 12(b)(6)", "123 F.3d 456") are
required, checked as regular expressions on the chunk text (see identifiers.py).
"""

from __future__ import annotations

import functools
import operator
import re
from dataclasses import dataclass, field

from django.contrib.postgres.search import SearchQueryField
from django.db import connection
from django.db.models import BooleanField, F, FloatField, Func, IntegerField, Value
from django.db.models.functions import Cast

from rag.models import Chunk
from tenants.models import Tenant
from tenants.selectors import owned_list

from .filters import SearchFilters
from .hits import Hit
from .identifiers import Identifier, extract_identifiers
from .session import positive_int, search_session

MAX_WORDS = 32  # a pasted paragraph is not a keyword query; the first words are enough
_PHRASE = re.compile(r"[\"\u201c\u201d]([^\"\u201c\u201d]*)[\"\u201c\u201d]")
# ts_rank_cd normalization 32 scales a rank to rank/(rank+1): 0..1.
_RANK_NORMALIZATION = 32


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
    with connection.cursor() as cursor:
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


def keyword_search(*, tenant: Tenant, query: str, k: int, filters: SearchFilters | None = None) -> list[Hit]:
    """The `k` chunks of `tenant` best matching `query` as keywords, best first.

    Score in 0..1: (words matched + ts_rank_cd/(ts_rank_cd+1)) / (words + 1). A query with nothing
    searchable (empty, only stopwords, only exclusions) returns []. Raises `VectorStoreUnavailable`
    on timeouts and lost connections.
    """
    k = positive_int(k, "k")
    parsed = parse_query(query or "")
    with search_session():
        terms = _resolve(parsed)
        required = terms.phrases or parsed.identifiers
        if not (required or terms.words):
            return []
        chunks = owned_list(Chunk, tenant=tenant)
        if filters is not None:
            chunks = chunks.filter(filters.as_q())
        must = [f"( {tsq} )" for tsq in terms.phrases] + [f"!( {tsq} )" for tsq in terms.negated]
        if must:
            chunks = chunks.filter(_Matches(F("search_vector"), _tsquery(" & ".join(must))))
        for identifier in parsed.identifiers:
            chunks = chunks.filter(text__iregex=identifier.pattern)
        if not required:
            # Only words: at least one must match (the GIN index finds the candidates).
            chunks = chunks.filter(_Matches(F("search_vector"), _tsquery(_any(terms.words))))
        rows = list(
            chunks.annotate(matched=_words_matched(terms.words), rank=_rank(terms))
            .order_by("-matched", "-rank", "pk")
            .values_list("pk", "document_id", "matched", "rank")[:k]
        )
    hits = []
    for pk, document_id, matched_words, normalized_rank in rows:
        score = (matched_words + normalized_rank) / (len(terms.words) + 1)
        hits.append(Hit(chunk_id=pk, document_id=document_id, score=score, keyword_score=score))
    return hits


def _words_matched(words: list[str]):
    """How many of the query's words the chunk contains (SQL integer)."""
    return functools.reduce(
        operator.add,
        [Cast(_Matches(F("search_vector"), _tsquery(tsq)), IntegerField()) for tsq in words],
        Value(0),
    )


def _rank(terms: _Resolved):
    """ts_rank_cd over every positive part, scaled to 0..1 (SQL float)."""
    ranked_on = _any(terms.phrases + terms.identifier_terms + terms.words)
    if not ranked_on:
        return Value(0.0, output_field=FloatField())
    return Func(
        F("search_vector"),
        _tsquery(ranked_on),
        Value(_RANK_NORMALIZATION),
        function="ts_rank_cd",
        output_field=FloatField(),
    )
