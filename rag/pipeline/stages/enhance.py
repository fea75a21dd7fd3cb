"""Stage 3: query enhancement. A follow-up in a conversation ("What about termination?", "Does it
survive expiry?") is rewritten with what the earlier turns established: the document they named
and the clause type they asked about. Expansion with how contracts word a clause type happens in
retrieval (rag.retrieval.legal_terms), where the snippet also uses it."""

from __future__ import annotations

import re

from rag import selectors
from rag.retrieval import legal_terms
from rag.retrieval.routing import split_reference

from ..context import QueryContext

HISTORY_TURNS = 3
# Words that point back to something said before.
_ANAPHORA = re.compile(
    r"\b(it|its|they|them|this|that|these|those|such|same|the (agreement|contract|document|clause|"
    r"provision|lease|licen[cs]e|party|parties))\b",
    re.I,
)
SHORT_QUESTION_WORDS = 6


# A follow-up that looks beyond the document discussed ("Which other contracts…?").
_ELSEWHERE = re.compile(r"\b(other|another|else|any (agreement|contract|document)s?|all)\b", re.I)


def rewrite_follow_up(question: str, earlier: list[str], cited_title: str = "") -> str:
    """`question` completed from `earlier` questions (oldest first) when it is a follow-up.

    - No document named, but an earlier turn named one → "In <that document>, <question>"; when
      no earlier question named one either, a follow-up about "it" / "the agreement" is about the
      one document the latest answer cited (`cited_title`), unless it asks about other documents.
    - No clause type named, phrased as a follow-up (pronoun/"the clause" or very short), and an
      earlier turn asked about a clause type → "<question> (regarding <clause type>)".
    """
    if not earlier:
        return question
    rewritten = question
    follow_up = bool(_ANAPHORA.search(question)) or len(question.split()) <= SHORT_QUESTION_WORDS
    if not split_reference(question).explicit:
        reference = next(
            (ref for ref in (split_reference(q).reference for q in reversed(earlier)) if ref), ""
        )
        if not reference and cited_title and follow_up and not _ELSEWHERE.search(question):
            reference = cited_title
        if reference:
            rewritten = f"In {reference}, {rewritten[:1].lower()}{rewritten[1:]}"
    if follow_up and not legal_terms.clause_types(question):
        clauses = next(
            (found for found in (legal_terms.clause_types(q) for q in reversed(earlier)) if found), []
        )
        if clauses:
            rewritten = f"{rewritten.rstrip('?')} (regarding {clauses[0].name})?"
    return rewritten


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
            ctx.search_query = rewrite_follow_up(question, ctx.conversation, cited_title)
        ctx.note(
            self.name,
            rewritten=ctx.search_query != question,
            search_query=ctx.search_query,
            earlier_turns=len(ctx.conversation),
        )
        return ctx
