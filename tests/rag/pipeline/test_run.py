"""run_query end to end on a small real corpus with the offline extractive model: the response shape,
citations that point into the real documents, follow-ups, "I don't know", dry runs, and every
combination of template, citation style and strictness."""

import json
import re

import pytest
from django.conf import settings

from rag.models import AuditLog, Chunk, Document
from rag.pipeline import tokens
from rag.pipeline.result import NOT_FOUND_MESSAGE
from rag.pipeline.run import run_query
from templates_admin.builtins import BUILTIN_TEMPLATE_IDS
from templates_admin.rendering import CITATION_STYLES, STRICT_RULE, STRICTNESS_LEVELS, STRICTNESS_RULES

from .conftest import MSA_TITLE

QUESTION = "Is there a confidentiality clause?"
OFF_TOPIC = "What is the airspeed velocity of an unladen swallow?"

RESULT_KEYS = {
    "answer",
    "message",
    "citations",
    "follow_up_questions",
    "confidence_score",
    "disclaimer",
    "flags",
    "provenance",
    "request_id",
    "timestamp",
}
CITATION_KEYS = {
    "citation_id",
    "doc_id",
    "document_id",
    "title",
    "source",
    "snippet",
    "page",
    "page_end",
    "similarity_score",
    "rank_score",
    "date",
    "chunk_id",
    "char_start",
    "char_end",
}
FLAG_KEYS = {
    "hallucination_warning",
    "hallucination_detected",
    "invalid_citations",
    "mitigation_applied",
    "mitigations_applied",
    "needs_verification",
    "redactions_applied",
    "cache_hit",
    "prompt_injection_detected",
    "indirect_injection_detected",
    "token_warning",
    "answer_sanitized",
}
PROVENANCE_KEYS = {
    "index_version",
    "snapshot_id",
    "weights_version",
    "retrieval_latency_ms",
    "model_provider",
    "model",
    "model_calls",
    "tokens_used",
    "input_tokens",
    "output_tokens",
    "cost_estimate",
    "template_id",
    "template_version",
    "response_style",
    "citation_style",
    "strictness",
    "search_query",
    "search_mode",
    "clause_types",
    "routed_reference",
    "reranker",
    "candidates",
    "docs_retrieved",
    "docs_used",
    "passages_dropped",
    "documents_retrieved",
    "documents_used",
    "not_found_reason",
    "verification",
    "timing",
    "stages",
}
ANSWER_STAGES = [
    "sanitize",
    "cache_lookup",
    "enhance",
    "matter_review",
    "compare",
    "each_candidate",
    "retrieve",
    "rank",
    "rerank",
    "reasoning_search",
    "document_dates",
    "clause_evidence",
    "select_template",
    "build_context",
    "build_prompt",
    "reasoning",
    "generate",
    "postprocess",
    "verify",
]


def assert_citations_point_into_the_documents(result, tenant):
    assert result["citations"]
    for citation in result["citations"]:
        assert set(citation) == CITATION_KEYS
        document = Document.objects.get(pk=citation["document_id"])
        chunk = Chunk.objects.get(pk=citation["chunk_id"])
        assert document.tenant_id == tenant.pk and chunk.document_id == document.pk
        assert citation["doc_id"] == f"doc_{document.pk}"
        assert citation["title"] == document.title
        assert document.text[citation["char_start"] : citation["char_end"]] == citation["snippet"]
        assert chunk.char_start <= citation["char_start"] < citation["char_end"] <= chunk.char_end
        assert (citation["page"], citation["page_end"]) == (chunk.page_start, chunk.page_end)
        assert 1 <= citation["page"] <= citation["page_end"] <= document.page_count
        assert f"[{citation['citation_id']}]" in result["answer"]


@pytest.mark.django_db
def test_an_answer_has_exactly_the_documented_shape(tenant, corpus):
    ctx = run_query(tenant=tenant, question=QUESTION, request_id="req_shape_test_1")
    result = ctx.result
    assert set(result) == RESULT_KEYS
    assert set(result["flags"]) == FLAG_KEYS
    assert set(result["provenance"]) == PROVENANCE_KEYS
    timing = result["provenance"]["timing"]
    assert set(timing) == {"search_ms", "inference_ms", "total_ms", "stages"}
    assert list(timing["stages"]) == [f"{name}_ms" for name in ANSWER_STAGES]
    assert json.loads(json.dumps(result)) == result  # plain JSON, as cached and served

    msa = corpus["msa"]
    assert result["request_id"] == "req_shape_test_1" == ctx.request_id
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", result["timestamp"])
    assert result["message"] is None
    assert "Each party shall keep the other party's Confidential Information secret" in result["answer"]
    assert 0.5 <= result["confidence_score"] <= 1
    assert result["disclaimer"]
    assert result["flags"] == {
        "hallucination_warning": False,
        "hallucination_detected": False,
        "invalid_citations": [],
        "mitigation_applied": None,
        "mitigations_applied": [],
        "needs_verification": False,
        "redactions_applied": False,
        "cache_hit": False,
        "prompt_injection_detected": False,
        "indirect_injection_detected": False,
        "token_warning": False,
        "answer_sanitized": False,
    }
    provenance = result["provenance"]
    assert provenance["passages_dropped"] == 0
    assert provenance["documents_used"] == [msa.pk] and provenance["docs_used"] == 1
    assert msa.pk in provenance["documents_retrieved"]
    assert (provenance["model_provider"], provenance["model"], provenance["model_calls"]) == (
        "extractive",
        "extractive-v1",
        1,
    )
    assert provenance["tokens_used"] == provenance["input_tokens"] + provenance["output_tokens"] > 0
    assert (provenance["template_id"], provenance["citation_style"], provenance["strictness"]) == (
        "legal_analysis_balanced",
        "inline_numbers",
        "normal",
    )
    assert provenance["search_query"] == QUESTION and provenance["clause_types"] == ["confidentiality"]
    assert provenance["index_version"] >= 2
    assert re.fullmatch(rf"snap_\d{{14}}_v{provenance['index_version']}", provenance["snapshot_id"])
    assert provenance["verification"] == {
        "misquoted": [],
        "unsupported": [],
        "invalid_citations": [],
        "retries": 0,
    }
    assert timing["total_ms"] == pytest.approx(sum(timing["stages"].values()), abs=0.05)
    assert timing["search_ms"] == provenance["retrieval_latency_ms"]


@pytest.mark.django_db
def test_citations_map_to_real_documents_and_offsets(tenant, corpus):
    result = run_query(tenant=tenant, question=QUESTION).result
    assert_citations_point_into_the_documents(result, tenant)
    (citation,) = result["citations"]
    assert citation["document_id"] == corpus["msa"].pk and citation["title"] == MSA_TITLE
    assert citation["citation_id"] == "1" and citation["source"] == "User upload"
    assert citation["snippet"].startswith("Each party shall keep")


@pytest.mark.django_db
def test_citations_of_a_pdf_carry_its_page(tenant, case, upload, settings):
    settings.RAG_CHUNK_SIZE = 120
    settings.RAG_CHUNK_OVERLAP = 0
    document = upload(case, "contract.pdf").document
    result = run_query(tenant=tenant, question="Which state's laws govern the supply agreement?").result
    assert_citations_point_into_the_documents(result, tenant)
    # The clause itself is quoted, without the notice table and headings above it.
    citation = next(c for c in result["citations"] if "construed according to the laws" in c["snippet"])
    assert citation["snippet"].startswith("This Agreement")
    assert citation["document_id"] == document.pk
    assert citation["page"] == 2  # the governing-law clause is on the contract's second page


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("options", "count"), [({}, 2), ({"follow_up_count": 4}, 4), ({"follow_up_count": 0}, 0)]
)
def test_follow_up_count(tenant, corpus, options, count):
    result = run_query(tenant=tenant, question=QUESTION, **options).result
    assert result["answer"] is not None
    assert len(result["follow_up_questions"]) == count
    assert len(set(result["follow_up_questions"])) == count


def assert_not_found(result):
    assert result["answer"] is None
    assert result["message"] == NOT_FOUND_MESSAGE == "Information not found in the knowledge base."
    assert result["citations"] == [] and result["follow_up_questions"] == []
    assert result["confidence_score"] == 0.0
    assert set(result) == RESULT_KEYS


@pytest.mark.django_db
def test_an_off_topic_question_is_i_dont_know(tenant, corpus, counted_extractive):
    ctx = run_query(tenant=tenant, question=OFF_TOPIC)
    assert_not_found(ctx.result)
    assert ctx.result["provenance"]["not_found_reason"] == "no_passages"
    assert counted_extractive == []  # nothing to ask the model about
    assert AuditLog.objects.get(request_id=ctx.request_id).status == "not_found"


@pytest.mark.django_db
def test_an_answer_under_the_confidence_threshold_is_i_dont_know(tenant, corpus, settings):
    confident = run_query(tenant=tenant, question=QUESTION, use_cache=False).result
    assert confident["answer"] is not None
    settings.MIN_CONFIDENCE_THRESHOLD = confident["confidence_score"] + 0.01
    ctx = run_query(tenant=tenant, question=QUESTION, use_cache=False)
    assert_not_found(ctx.result)
    assert ctx.result["provenance"]["not_found_reason"] == "low_confidence"
    assert ctx.processed.answer is not None  # the model answered; the pipeline withheld it


@pytest.mark.django_db
def test_a_dry_run_shows_the_prompt_and_calls_no_model(tenant, corpus, fake_provider):
    provider = fake_provider(error=AssertionError("a dry run must not call the model"))
    ctx = run_query(tenant=tenant, question=QUESTION, dry_run=True, top_k=3)
    result = ctx.result
    assert provider.calls == 0 and ctx.generations == []
    assert set(result) == {
        "dry_run",
        "generated_prompt",
        "generated_prompt_detail",
        "selected_snippets",
        "estimated_tokens",
        "context_tokens",
        "would_use_model",
        "would_use_model_detail",
        "answerability",
        "would_answer",
        "missing_clause",
        "flags",
        "provenance",
        "request_id",
        "timestamp",
    }
    assert result["dry_run"] is True
    # The simulation says whether the question would be answered or "not found".
    assert result["would_answer"] is True and result["answerability"] >= settings.RAG_MIN_ANSWERABILITY
    # The spec's string: the whole prompt; its parts beside it.
    assert result["generated_prompt"] == f"{ctx.prompt.system}\n\n{ctx.prompt.user}"
    assert result["generated_prompt_detail"] == {"system": ctx.prompt.system, "user": ctx.prompt.user}
    assert ctx.context.text in result["generated_prompt_detail"]["user"]
    assert QUESTION in result["generated_prompt_detail"]["user"]
    assert result["estimated_tokens"] == tokens.count_tokens(ctx.prompt.system) + tokens.count_tokens(
        ctx.prompt.user
    )
    assert result["context_tokens"] == ctx.context.tokens > 0
    assert result["would_use_model"] == "extractive-v1"
    assert result["would_use_model_detail"] == {"provider": "extractive", "model": "extractive-v1"}
    snippets = result["selected_snippets"]
    assert [s["document_id"] for s in snippets] == [corpus["msa"].pk]
    for snippet in snippets:
        assert set(snippet) == CITATION_KEYS
        document = Document.objects.get(pk=snippet["document_id"])
        assert document.text[snippet["char_start"] : snippet["char_end"]] == snippet["snippet"]
    assert result["provenance"]["model_calls"] == 0
    assert AuditLog.objects.get(request_id=ctx.request_id).status == "dry_run"


@pytest.mark.django_db
def test_a_dry_run_without_passages_still_shows_the_prompt(tenant, corpus, fake_provider):
    provider = fake_provider(error=AssertionError("a dry run must not call the model"))
    result = run_query(tenant=tenant, question=OFF_TOPIC, dry_run=True).result
    assert provider.calls == 0
    assert result["selected_snippets"] == [] and OFF_TOPIC in result["generated_prompt_detail"]["user"]


@pytest.mark.django_db
@pytest.mark.parametrize("template_id", BUILTIN_TEMPLATE_IDS)
def test_every_template_citation_style_and_strictness_answers_end_to_end(tenant, corpus, template_id):
    msa = corpus["msa"]
    follow_ups = {"legal_analysis_terse": 1, "legal_analysis_balanced": 2, "legal_analysis_detailed": 3}
    for style in CITATION_STYLES:
        for strictness in STRICTNESS_LEVELS:
            label = f"{template_id}/{style}/{strictness}"
            ctx = run_query(
                tenant=tenant, question=QUESTION, template_id=template_id, citation_style=style,
                strictness=strictness,
            )  # fmt: skip
            result = ctx.result
            assert result["answer"] is not None, label
            assert_citations_point_into_the_documents(result, tenant)
            expected_id = f"doc_{msa.pk}" if style == "bracketed_ids" else "1"
            assert [c["citation_id"] for c in result["citations"]] == [expected_id], label
            assert f'<source id="{expected_id}" doc_id="doc_{msa.pk}"' in ctx.prompt.user, label
            provenance = result["provenance"]
            assert (provenance["template_id"], provenance["citation_style"], provenance["strictness"]) == (
                template_id,
                style,
                strictness,
            ), label
            assert ctx.prompt.system.endswith(STRICTNESS_RULES[strictness]), label
            assert (STRICT_RULE in ctx.prompt.system) == (strictness == "strict"), label
            assert len(result["follow_up_questions"]) == follow_ups[template_id], label
            assert not result["flags"]["hallucination_detected"], label
