"""A prompt template filled as the pipeline would fill it, for sample passages instead of retrieved
ones (the template admin's preview). Same builders as BuildContextStage and BuildPromptStage: the
context builder fences the passages with the template's citation tokens, `render` fills the template.
Nothing is read or written: the template may be unsaved.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from django.conf import settings

from rag.llm import cited
from rag.models import DocType, SourceType
from rag.retrieval.service import Passage
from templates_admin.rendering import RenderedPrompt, render

from .context_builder import BuiltContext, build_context
from .stages.prompt import ATTACHED_SOURCES, prompt_tokens

SAMPLE_QUESTION = "How much notice is needed to terminate the agreement?"
SAMPLE_PASSAGE = (
    "Section 10.2 Termination. Either party may terminate this Agreement on ninety (90) days written "
    "notice to the other party."
)
# Sample passages are labelled doc_42, doc_43, ...: the id the requirements' citation example uses.
_FIRST_SAMPLE_DOCUMENT_ID = 42


@dataclass(frozen=True)
class PromptPreview:
    prompt: RenderedPrompt
    context: BuiltContext
    estimated_tokens: int


def sample_passages(texts: Sequence[str]) -> list[Passage]:
    """One made-up passage per text (document "Sample document N", page 1, relevance 1.0)."""
    passages = []
    for index, text in enumerate(texts):
        document_id = _FIRST_SAMPLE_DOCUMENT_ID + index
        passages.append(
            Passage(
                chunk_id=index + 1,
                document_id=document_id,
                title=f"Sample document {index + 1}",
                source=SourceType.USER_UPLOAD.label,
                source_type=SourceType.USER_UPLOAD.value,
                doc_type=DocType.CONTRACT.value,
                jurisdiction="",
                date=None,
                page_start=1,
                page_end=1,
                section_title="",
                char_start=0,
                char_end=len(text),
                text=text,
                snippet=text,
                snippet_start=0,
                snippet_end=len(text),
                similarity_score=1.0,
                rank_score=1.0,
                recency_boost=0.0,
                source_trust=0.5,
                cosine_similarity=1.0,
                keyword_score=1.0,
                routed=False,
            )
        )
    return passages


def prompt_preview(
    template, *, question: str = SAMPLE_QUESTION, passages: Sequence[str] = (SAMPLE_PASSAGE,)
) -> PromptPreview:
    """`template` (a `PromptTemplate`, saved or not) filled with `question` and the sample `passages`
    under its own citation style, strictness and follow-up count, within RAG_TOKEN_BUDGET.

    With Claude's citations (rag.llm.cited) the passages go beside the prompt as search results,
    so the preview shows the prompt Claude gets: without them.

    Raises `ConfigurationError` for a template whose placeholders are invalid (validate it first)."""
    built = build_context(
        sample_passages([text for text in passages if text.strip()]),
        citation_style=template.citation_style,
        token_budget=settings.RAG_TOKEN_BUDGET,
    )
    if cited.attached():
        prompt = render(template, context=ATTACHED_SOURCES, question=question, sources_attached=True)
    else:
        prompt = render(template, context=built.text, question=question, boundary=built.boundary)
    return PromptPreview(prompt=prompt, context=built, estimated_tokens=prompt_tokens(prompt))
