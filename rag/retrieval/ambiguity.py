"""A question that names its document only by kind ("What law governs the sponsorship
agreement?") where the scope holds two or more documents of that kind is ambiguous: it is never
silently answered from one of them.

`fitting` finds them: the kind words of the question's reference phrase ("sponsorship";
"support", "maintenance"; "content", "license" — "agreement", "contract" and "deal" say nothing,
nor do "two", "other" or "new") must all be in a document's title, in any of their forms
(`kind_stem`: distribution, distributor and distributorship; licence, license and licensing;
services and service). When exactly one document in scope
fits, the question names it ("What law governs the distributor agreement?" in a case with one
distributor agreement) and routing treats it as named. When two to MAX_CANDIDATES match, routing
treats each as named equally (`rag.retrieval.service.with_ambiguity`); the pipeline answers each
from its own text, searched as if the question were asked of that document alone
(rag.pipeline.stages.ambiguity); the answer quotes each, grouped by document, and the result carries
a clarification naming them by title (the ask page offers them as buttons that ask again about
one). More than MAX_CANDIDATES: the clarification alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rag import selectors
from rag.models import Document, DocumentStatus
from tenants.models import Tenant
from tenants.selectors import owned_list

from .filters import SearchFilters
from .routing import REFERENCE_PHRASE, tokens

MAX_CANDIDATES = 4
_GENERIC = frozenset(
    {"agreement", "agreements", "contract", "contracts", "deal", "deals", "arrangement", "arrangements"}
    | {"the", "this", "that", "its", "his", "her", "their", "our", "your", "my"}
    # Which one or how many, not which kind: "the two sponsorship agreements", "the new lease".
    | {"two", "three", "four", "both", "either", "each", "other", "new", "old", "current", "existing"}
    | {"signed", "same", "said", "above", "original", "main", "latest", "relevant"}
    | {"related", "respective", "various", "these", "those", "all", "any", "one"}
)
# Endings that make another word of the same kind: distribut-or / -ion / -orship, licens-ing / -or /
# -ee, promot-ion / -ional, endorse-ment. Longest first.
_DERIVED = tuple(
    sorted(
        ("ship", "ation", "ition", "ion", "ing", "ment", "ancy", "ency", "al", "or", "er", "ier", "ee"),
        key=len,
        reverse=True,
    )
)


@dataclass(frozen=True)
class Candidate:
    document_id: int
    title: str


def kind_words(question: str) -> list[str]:
    """The words of the question's reference phrase that say which kind of document it is."""
    match = REFERENCE_PHRASE.search(question)
    if not match:
        return []
    return [_singular(word) for word in tokens(match.group()) if word not in _GENERIC]


def by_kind_only(reference: str) -> bool:
    """Whether `reference` ("the sponsorship contract") names its document by kind alone: every
    word of it is a kind word of its reference phrase or says nothing of which document ("the",
    "contract"); not "the sponsorship agreement with Boyd"."""
    kinds = set(kind_words(reference))
    words = [word for word in tokens(reference) if word not in _GENERIC]
    return bool(kinds) and all(_singular(word) in kinds for word in words)


def candidates(*, tenant: Tenant, question: str, filters: SearchFilters | None) -> list[Candidate]:
    """The documents in scope whose title fits the question's reference to a kind of document, when
    more than one does ([] otherwise). At most MAX_CANDIDATES + 1 are returned (enough to tell
    "too many")."""
    found = fitting(tenant=tenant, question=question, filters=filters)
    return found if len(found) >= 2 else []


def fitting(*, tenant: Tenant, question: str, filters: SearchFilters | None) -> list[Candidate]:
    """The documents in scope whose title fits the question's reference to a kind of document: one
    when the kind names a single document ("the distributor agreement" in a case with one
    distributor agreement), several when it is ambiguous. At most MAX_CANDIDATES + 1.

    Titles holding the kind words as written (singular or plural) fit first; only where none does
    do titles holding another form of them (`kind_stem`: "the licence" for "License Agreement",
    "the distribution agreement" for "Distributor Agreement"), so "the services agreement" still
    names the one Services Agreement beside a Servicing Agreement."""
    words = kind_words(question)
    if not words:
        return []
    stems = [kind_stem(word) for word in words]
    documents = owned_list(Document, tenant=tenant).filter(status=DocumentStatus.READY)
    if filters is not None and not filters.is_empty():
        documents = documents.filter(pk__in=selectors.document_ids_within(tenant=tenant, filters=filters))
    for stem in stems:  # a cheap first cut in SQL; the exact match of words or stems follows
        documents = documents.filter(title__iregex=rf"\m{re.escape(stem).replace('licens', 'licen[cs]')}")
    as_written, other_forms = [], []
    for pk, title in documents.order_by("pk").values_list("pk", "title"):
        have = {_singular(word) for word in tokens(title)}
        if all(word in have for word in words):
            as_written.append(Candidate(pk, title))
            if len(as_written) > MAX_CANDIDATES:
                break
        elif len(other_forms) <= MAX_CANDIDATES and set(stems) <= {kind_stem(word) for word in have}:
            other_forms.append(Candidate(pk, title))
    return as_written or other_forms


def kind_stem(word: str) -> str:
    """`word` (lower case) without its plural and derivational endings, so that the forms of one
    kind of document compare equal: "distributor", "distribution" and "distributorships" →
    "distribut"; "licence", "licenses", "licensing" → "licens"; "services" → "servic". Stems are
    compared with stems only; they are not words."""
    word = word.replace("licenc", "licens")
    if word.endswith("ies") and len(word) > 5:
        word = word[:-3] + "y"
    elif word.endswith("s") and not word.endswith("ss") and len(word) > 4:
        word = word[:-1]
    for _ in range(2):
        suffix = next((s for s in _DERIVED if word.endswith(s) and len(word) - len(s) >= 4), None)
        if suffix is None:
            break
        word = word[: -len(suffix)]
    if word[-1:] in ("e", "y") and len(word) > 4:
        word = word[:-1]
    return word


def _singular(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word
