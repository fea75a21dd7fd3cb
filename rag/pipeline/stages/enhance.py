"""Stage 3: query enhancement. A follow-up in a conversation ("What about termination?", "Does it
survive expiry?") is rewritten with what the earlier turns established: the document they named
and the clause type they asked about. Expansion with how contracts word a clause type happens in
retrieval (rag.retrieval.legal_terms), where the snippet also uses it."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

from rag import selectors
from rag.retrieval import ambiguity, legal_terms
from rag.retrieval.routing import route, split_reference

from ..context import QueryContext

HISTORY_TURNS = 3
# Words that point back to something said before.
_ANAPHORA = re.compile(
    r"\b(it|its|they|them|this|that|these|those|such|same|the (agreement|contract|document|clause|"
    r"provision|lease|licen[cs]e|party|parties))\b",
    re.I,
)
SHORT_QUESTION_WORDS = 6
# A follow-up about the clause discussed: very short, "what about …", or pointing at the clause.
CLAUSE_FOLLOW_UP_WORDS = 4
_ABOUT_THE_CLAUSE = re.compile(
    r"^\s*(?:what|how) about\b|^\s*and\b|"
    r"\b(?:the|this|that|such|same)\s+(?:clause|provision|obligation|covenant|restriction|section)\b",
    re.I,
)


# A question that looks beyond one document: "Which other contracts…?", "Which agreements have an
# arbitration clause?", "Do all of them …?".
_DOCUMENTS = r"(?:agreements?|contracts?|documents?|deals?|ones?)"
_SEVERAL = re.compile(
    rf"\b(?:other|another)\s+{_DOCUMENTS}\b|\b(?:agreements|contracts|documents|deals)\b|"
    rf"\b(?:all|each|every|any|both|none)\s+(?:of\s+)?(?:the\s+|these\s+|those\s+)?(?:{_DOCUMENTS}|them)\b|"
    rf"\b(?:these|those)\s+{_DOCUMENTS}\b|\bwhich\s+(?:ones|of\s+them)\b|\belse(?:where)?\b",
    re.I,
)


def rewrite_follow_up(
    question: str,
    earlier: list[str],
    cited_title: str = "",
    names_document: Callable[[str], bool] = lambda question: False,
) -> str:
    """`question` completed from `earlier` questions (oldest first) when it is a follow-up.

    - No document named, but an earlier turn named one → "In <that document>, <question>"; when
      no earlier question named one either, a follow-up about "it" / "the agreement" is about the
      one document the latest answer cited (`cited_title`). A question that names its own document
      (a reference phrase, or a party's name: `names_document`) or asks about several documents
      ("Which agreements …?", "other contracts") is left on its own. Only the turns since the
      last one that named a document by name or asked about several count: after "What about the
      Hydraspin one?", "it" is Hydraspin's agreement (the document that answer cited).
    - No clause type named, about the clause discussed ("Is it mutual?", "Does it survive
      termination?", "What about the Hydraspin one?", "Does that clause apply to affiliates?"),
      and an earlier turn asked about a clause type → "<question> (regarding <clause type>)".
      A longer question with its own subject ("When can it be terminated?", "How much rent is due
      under it?") keeps its own.
    """
    if not earlier:
        return question
    rewritten = question
    follow_up = bool(_ANAPHORA.search(question)) or len(question.split()) <= SHORT_QUESTION_WORDS
    on_its_own = split_reference(question).explicit or _names_another(question, names_document)
    on_its_own = on_its_own or bool(_SEVERAL.search(question))
    if not on_its_own:
        reference = _earlier_reference(earlier, names_document)
        if not reference and cited_title and follow_up:
            reference = cited_title
        if reference:
            rewritten = f"In {reference}, {rewritten[:1].lower()}{rewritten[1:]}"
    if _about_the_clause(question) and not legal_terms.clause_types(question):
        clauses = next(
            (found for found in (legal_terms.clause_types(q) for q in reversed(earlier)) if found), []
        )
        if clauses:
            rewritten = f"{rewritten.rstrip('?')} (regarding {clauses[0].name})?"
    return rewritten


def _about_the_clause(question: str) -> bool:
    return len(question.split()) <= CLAUSE_FOLLOW_UP_WORDS or bool(_ABOUT_THE_CLAUSE.search(question))


def _earlier_reference(earlier: list[str], names_document: Callable[[str], bool]) -> str:
    """The reference phrase of the latest earlier turn that named a document by one, or "" when a
    later turn named its document otherwise (by a party's name) or asked about several."""
    for question in reversed(earlier):
        reference = split_reference(question).reference
        if reference:
            return reference
        if _names_another(question, names_document) or _SEVERAL.search(question):
            return ""
    return ""


# "it", "its", "the agreement": the question points back at the document discussed, whatever names
# it also holds ("Is it governed by New York law?" names a state, not another document).
_POINTS_BACK = re.compile(
    r"\b(?:it|its|itself)\b|\b(?:this|that|the same|the) (?:agreement|contract|document|deal)\b", re.I
)


def _names_another(question: str, names_document: Callable[[str], bool]) -> bool:
    """Whether `question` names its own document by name, rather than pointing back."""
    return not _POINTS_BACK.search(question) and names_document(question)


class EnhanceQueryStage:
    name = "enhance"
    critical = False  # without history the question is searched as asked
    runs_after_halt = False

    def run(self, ctx: QueryContext) -> QueryContext:
        question = ctx.sanitized.sanitized_query
        ctx.search_query = question
        if ctx.config.conversation_id:
            visibility = ctx.config.filters.visibility
            ctx.conversation = selectors.conversation_questions(
                tenant=ctx.tenant,
                conversation_id=ctx.config.conversation_id,
                user_id=ctx.user_id,
                api_key_prefix=ctx.api_key_prefix,
                limit=HISTORY_TURNS,
            )
            cited_title = selectors.conversation_cited_title(
                tenant=ctx.tenant,
                conversation_id=ctx.config.conversation_id,
                user_id=ctx.user_id,
                api_key_prefix=ctx.api_key_prefix,
                hidden_cases=visibility.walled_case_ids if visibility else (),
            )
            ctx.search_query = rewrite_follow_up(
                question, ctx.conversation, cited_title, functools.partial(_names_document, ctx)
            )
        ctx.note(
            self.name,
            rewritten=ctx.search_query != question,
            search_query=ctx.search_query,
            earlier_turns=len(ctx.conversation),
        )
        return ctx


def _names_document(ctx: QueryContext, question: str) -> bool:
    """Whether `question` names a document of the scope the reader may see by a rare word such as a
    party's name ("What about the Hydraspin one?"), or by a kind only documents' titles share
    ("the distributor agreement")."""
    filters = ctx.config.filters
    # The corpus version cache_lookup resolved for this request (looked up only when it did not run).
    version = ctx.index_version
    if version is None:
        version = selectors.index_version_get(tenant=ctx.tenant)
    routing = route(tenant=ctx.tenant, query=question, index_version=version, filters=filters)
    if routing.naming:
        return True
    return bool(ambiguity.fitting(tenant=ctx.tenant, question=question, filters=filters))
