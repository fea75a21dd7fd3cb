"""Serializers describing the query request and result for OpenAPI (the pipeline builds the
result dicts itself: rag.pipeline.result). Request validation stays in the pipeline's
`QueryConfig`, so the API and the Python `RAGService` refuse the same things the same way."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from rag.models import AuditStatus, DocType, SourceType
from rag.pipeline.config import (
    MAX_CONVERSATION_ID,
    MAX_NEW_TOKENS,
    MAX_REASONING_DEPTH,
    MAX_SOURCE_NAME,
    TOKEN_BUDGET_RANGE,
)
from rag.retrieval.filters import MAX_METADATA_KEY_LENGTH, MAX_VALUES
from rag.retrieval.hybrid import MODES as SEARCH_MODES
from rag.retrieval.service import MAX_TOP_K
from ragsite.schema import request_schema, strict_request
from templates_admin.rendering import CITATION_STYLES, MAX_FOLLOW_UPS, RESPONSE_STYLES, STRICTNESS_LEVELS

from .query_errors import QueryErrorSerializer

_SCALARS = [{"type": "string"}, {"type": "number"}, {"type": "boolean"}]


@extend_schema_field(
    {
        "type": "object",
        "nullable": True,
        "additionalProperties": {
            "oneOf": [
                *_SCALARS,
                {"type": "array", "items": {"oneOf": _SCALARS}, "minItems": 1, "maxItems": MAX_VALUES},
            ]
        },
    }
)
class MetadataFilterField(serializers.DictField):
    """What rag.retrieval.filters accepts: a flat object, each value a scalar or a list of them."""


@strict_request
class FiltersSerializer(serializers.Serializer):
    date_range_start = serializers.DateField(required=False, help_text="Documents dated on or after.")
    date_range_end = serializers.DateField(required=False, help_text="Documents dated on or before.")
    jurisdictions = serializers.ListField(child=serializers.CharField(), required=False)
    doc_types = serializers.ListField(child=serializers.ChoiceField(DocType.values), required=False)
    source_types = serializers.ListField(child=serializers.ChoiceField(SourceType.values), required=False)
    case_ids = serializers.ListField(child=serializers.IntegerField(min_value=1), required=False)
    document_ids = serializers.ListField(child=serializers.IntegerField(min_value=1), required=False)
    years = serializers.ListField(
        child=serializers.IntegerField(min_value=1000, max_value=9999),
        required=False,
        help_text='Documents dated in one of these years (or whose metadata "year" is one).',
    )
    metadata = MetadataFilterField(
        required=False,
        help_text='Document metadata that must match, e.g. {"party": "Acme", "year": [2022, 2023]}: keys '
        f"of 1 to {MAX_METADATA_KEY_LENGTH} characters, each value a string, number or boolean, or a list "
        f"of 1 to {MAX_VALUES} of them (any one matches).",
    )
    source = serializers.CharField(
        required=False,
        max_length=MAX_SOURCE_NAME,
        help_text="The service-interface spec's filter: only the document(s) with this file name or title "
        '(case-insensitive); none such: "I don\'t know".',
    )
    max_results = serializers.IntegerField(
        min_value=1,
        max_value=MAX_TOP_K,
        required=False,
        help_text="The service-interface spec's name of top_k.",
    )


class QueryOptionsSerializer(serializers.Serializer):
    """Every per-request option of the pipeline (all optional; unknown ones are refused)."""

    tenant_id = serializers.CharField(
        required=False,
        help_text="Optional: leave it out to ask your credentials' tenant. Given, it must be that "
        "tenant's slug or id; another tenant's is a 403.",
    )
    top_k = serializers.IntegerField(min_value=1, max_value=MAX_TOP_K, required=False)
    similarity_threshold = serializers.FloatField(min_value=-1, max_value=1, required=False)
    reranking_enabled = serializers.BooleanField(required=False)
    max_chunks = serializers.IntegerField(min_value=1, max_value=MAX_TOP_K, required=False)
    template_id = serializers.CharField(required=False)
    citation_style = serializers.ChoiceField(CITATION_STYLES, required=False)
    response_style = serializers.ChoiceField(RESPONSE_STYLES, required=False)
    strictness = serializers.ChoiceField(STRICTNESS_LEVELS, required=False)
    follow_up_count = serializers.IntegerField(min_value=0, max_value=MAX_FOLLOW_UPS, required=False)
    temperature = serializers.FloatField(min_value=0, max_value=1, required=False)
    max_new_tokens = serializers.IntegerField(min_value=1, max_value=MAX_NEW_TOKENS, required=False)
    token_budget = serializers.IntegerField(
        min_value=TOKEN_BUDGET_RANGE[0], max_value=TOKEN_BUDGET_RANGE[1], required=False
    )
    filters = FiltersSerializer(required=False)
    search_mode = serializers.ChoiceField(SEARCH_MODES, required=False)
    conversation_id = serializers.CharField(
        max_length=MAX_CONVERSATION_ID,
        required=False,
        help_text="Follow-up questions in one conversation are rewritten.",
    )
    use_cache = serializers.BooleanField(required=False)
    cot_enabled = serializers.BooleanField(required=False)
    show_cot_steps = serializers.BooleanField(required=False)
    max_reasoning_depth = serializers.IntegerField(min_value=1, max_value=MAX_REASONING_DEPTH, required=False)


@strict_request
class ConfigMetadataSerializer(QueryOptionsSerializer):
    """The stage-pipeline spec's per-request `config_metadata`: the same options (each given once,
    here or at the top level)."""

    def get_fields(self):
        fields = super().get_fields()
        fields.pop("tenant_id")
        return fields


@strict_request
@request_schema(oneOf=[{"required": ["query"]}, {"required": ["question"]}])
class QueryRequestSerializer(QueryOptionsSerializer):
    query = serializers.CharField(
        required=False,
        help_text="The question (at most RAG_MAX_QUERY_LENGTH characters). Exactly one of `query` and "
        "`question` is given: neither or both is a 400.",
    )
    question = serializers.CharField(
        required=False,
        help_text="The same as `query` (the service-interface spec's `{question, filters}` body); "
        "give one of the two, never both (400).",
    )
    mode = serializers.ChoiceField(
        ["sync", "async", "agentic"],
        default="sync",
        help_text="sync: answered in the response; async: a job to poll; agentic: answered in the "
        "response by the agentic loop (decompose, plan, tool calls, review).",
    )
    dry_run = serializers.BooleanField(required=False, help_text="Build the prompt without the model.")
    stream = serializers.BooleanField(
        required=False,
        help_text="Answer as Server-Sent Events (text/event-stream): `meta`, `sources`, `delta` events "
        "with the answer text as the model writes it, then `result` (the sync response plus "
        "`replaces_streamed_text`) or `error`. Default: true when the Accept header asks for "
        "text/event-stream. Not with mode async, dry_run or an Idempotency-Key (400).",
    )
    config_metadata = ConfigMetadataSerializer(
        required=False, help_text="The options above, in the stage-pipeline spec's object."
    )


class CitationSerializer(serializers.Serializer):
    citation_id = serializers.CharField()
    doc_id = serializers.CharField(help_text='"doc_<document_id>"')
    document_id = serializers.IntegerField()
    title = serializers.CharField()
    source = serializers.CharField()
    snippet = serializers.CharField(allow_blank=True)
    page = serializers.IntegerField()
    page_end = serializers.IntegerField()
    similarity_score = serializers.FloatField()
    rank_score = serializers.FloatField()
    date = serializers.DateField(allow_null=True)
    chunk_id = serializers.IntegerField()
    char_start = serializers.IntegerField(help_text="document.text[char_start:char_end] == snippet")
    char_end = serializers.IntegerField()


# The hallucination mitigations (rag.pipeline.stages.answer), in the order they are taken.
MITIGATIONS = ["re-run", "removed", "disclaimer"]


class FlagsSerializer(serializers.Serializer):
    hallucination_warning = serializers.BooleanField()
    hallucination_detected = serializers.BooleanField()
    invalid_citations = serializers.ListField(child=serializers.CharField())
    mitigation_applied = serializers.ChoiceField(
        choices=MITIGATIONS,
        allow_null=True,
        help_text="The spec's one value: the last measure taken when a check failed, the one the answer "
        "was left with (a re-run that fixed it; else a disclaimer). null when none was needed.",
    )
    mitigations_applied = serializers.ListField(
        child=serializers.ChoiceField(choices=MITIGATIONS),
        help_text='Every measure taken, in order ("re-run", then "removed" and "disclaimer"); [] for none.',
    )
    needs_verification = serializers.BooleanField()
    redactions_applied = serializers.BooleanField()
    cache_hit = serializers.BooleanField()
    prompt_injection_detected = serializers.BooleanField()
    indirect_injection_detected = serializers.BooleanField()
    token_warning = serializers.BooleanField(
        help_text="The model's reply was cut off at max_new_tokens: only its complete sentences are shown."
    )
    answer_sanitized = serializers.BooleanField(
        required=False,
        help_text="A remote image or a link outside the app was taken out of the answer, disclaimer or "
        "follow-ups ('(image removed)', '(link removed)'); a URL a cited source contains stays as text.",
    )


class TimingSerializer(serializers.Serializer):
    search_ms = serializers.FloatField()
    inference_ms = serializers.FloatField()
    total_ms = serializers.FloatField()
    stages = serializers.DictField(child=serializers.FloatField(), help_text="Milliseconds per stage.")


class VerificationSerializer(serializers.Serializer):
    misquoted = serializers.ListField(child=serializers.CharField())
    unsupported = serializers.ListField(child=serializers.CharField())
    invalid_citations = serializers.ListField(child=serializers.CharField())
    retries = serializers.IntegerField()


class ProvenanceSerializer(serializers.Serializer):
    index_version = serializers.IntegerField(allow_null=True)
    snapshot_id = serializers.CharField(allow_null=True)
    weights_version = serializers.IntegerField(allow_null=True)
    retrieval_latency_ms = serializers.FloatField()
    model_provider = serializers.CharField(allow_null=True, help_text="null: no model was called.")
    model = serializers.CharField(allow_null=True)
    model_calls = serializers.IntegerField()
    tokens_used = serializers.IntegerField()
    input_tokens = serializers.IntegerField()
    output_tokens = serializers.IntegerField()
    cost_estimate = serializers.FloatField()
    template_id = serializers.CharField(allow_null=True)
    template_version = serializers.IntegerField(allow_null=True)
    response_style = serializers.CharField(
        allow_null=True, help_text="The style that answered: the template's."
    )
    citation_style = serializers.CharField(allow_null=True)
    strictness = serializers.CharField(allow_null=True)
    search_query = serializers.CharField(allow_null=True)
    search_mode = serializers.CharField(allow_null=True)
    clause_types = serializers.ListField(child=serializers.CharField())
    routed_reference = serializers.CharField(allow_blank=True)
    reranker = serializers.CharField(allow_null=True)
    candidates = serializers.IntegerField()
    docs_retrieved = serializers.IntegerField()
    docs_used = serializers.IntegerField()
    passages_dropped = serializers.IntegerField(
        help_text="Passages left out of the prompt for the token budget."
    )
    documents_retrieved = serializers.ListField(child=serializers.IntegerField())
    documents_used = serializers.ListField(child=serializers.IntegerField())
    not_found_reason = serializers.CharField(allow_null=True)
    verification = VerificationSerializer(allow_null=True, help_text="null: no answer was checked.")
    timing = TimingSerializer()
    stages = serializers.DictField(
        child=serializers.DictField(),
        help_text="What each stage recorded (its metadata), by stage name; a cache hit's own stages, "
        "those of the run that answered being in cached_stages.",
    )


class ReasoningStepSerializer(serializers.Serializer):
    step_number = serializers.IntegerField()
    question = serializers.CharField(help_text="The sub-question.")
    intermediate_answer = serializers.CharField(
        allow_null=True, help_text="null: not found, see not_found_reason."
    )
    not_found_reason = serializers.ChoiceField(
        ["no_passages", "not_in_passages", "low_confidence", "unsupported"],
        allow_null=True,
        help_text="no_passages: none of its own (or none within the token budget); not_in_passages: the "
        "model found nothing; low_confidence: under MIN_CONFIDENCE_THRESHOLD; unsupported: claims its "
        "passages do not support.",
    )
    citations = serializers.ListField(child=serializers.CharField(), help_text="Verified citation ids.")
    sources = serializers.ListField(child=serializers.CharField(), help_text="Its passages' citation ids.")
    confidence_score = serializers.FloatField()
    execution_time_ms = serializers.FloatField()


class ReasoningSerializer(serializers.Serializer):
    """Chain of thought (cot_enabled, for compare and multi-part questions)."""

    strategy = serializers.ChoiceField(["compare", "multi_part"])
    sub_questions = serializers.ListField(child=serializers.CharField())
    skipped_sub_questions = serializers.ListField(
        child=serializers.CharField(), help_text="Sub-questions beyond max_reasoning_depth."
    )
    steps_answered = serializers.IntegerField()
    total_confidence = serializers.FloatField(help_text="The least sure answered step's confidence.")
    steps = ReasoningStepSerializer(many=True, required=False, help_text="Only with show_cot_steps.")


class QueryResultSerializer(serializers.Serializer):
    """The orchestration spec's response, plus the fields needed to open each cited passage."""

    answer = serializers.CharField(allow_null=True, help_text='null means "I don\'t know".')
    message = serializers.CharField(allow_null=True, required=False)
    citations = CitationSerializer(many=True)
    follow_up_questions = serializers.ListField(child=serializers.CharField(), required=False)
    confidence_score = serializers.FloatField(required=False)
    disclaimer = serializers.CharField(allow_blank=True, required=False)
    flags = FlagsSerializer()
    provenance = ProvenanceSerializer()
    request_id = serializers.CharField()
    timestamp = serializers.DateTimeField()
    reasoning = ReasoningSerializer(required=False, help_text="Present when chain of thought was used.")
    agent = serializers.DictField(required=False, help_text="Agentic mode: the trace of the loop.")
    clarification = serializers.DictField(
        required=False, allow_null=True, help_text="Agentic mode: what the agent needs to know, if anything."
    )


class SimulatePromptSerializer(serializers.Serializer):
    system = serializers.CharField()
    user = serializers.CharField()


class SimulateModelSerializer(serializers.Serializer):
    provider = serializers.CharField()
    model = serializers.CharField()


class DryRunResultSerializer(serializers.Serializer):
    """`dry_run: true` (POST query, POST admin/simulate): what would be sent to the model, which
    is not called (rag.pipeline.result.dry_run_result)."""

    dry_run = serializers.BooleanField(help_text="Always true: tells this body from an answer.")
    generated_prompt = serializers.CharField(
        allow_null=True,
        help_text="The full prompt text: the system prompt, a blank line, the user prompt. null when the "
        "run stopped before a prompt was built.",
    )
    generated_prompt_detail = SimulatePromptSerializer(
        allow_null=True, help_text="The same prompt in its two parts, as sent to the model."
    )
    selected_snippets = CitationSerializer(many=True, help_text="The passages in the prompt.")
    estimated_tokens = serializers.IntegerField(help_text="Tokens of the whole prompt.")
    context_tokens = serializers.IntegerField(help_text="Tokens of the passages in it.")
    would_use_model = serializers.CharField(help_text='The model that would answer ("claude-sonnet-4-5").')
    would_use_model_detail = SimulateModelSerializer(help_text="Its provider and model.")
    answerability = serializers.FloatField(
        allow_null=True,
        help_text="The cross-encoder's score of the question alone against the best answer windows, "
        "or, when the reranker scored one of them 0.5 or more for the question read with its clause "
        "wording, that score (null without a cross-encoder; 0 when missing_clause is set); under "
        "RAG_MIN_ANSWERABILITY the answer would be not found.",
    )
    would_answer = serializers.BooleanField(
        allow_null=True, help_text='false: the question would get "not found" (not_in_documents).'
    )
    missing_clause = serializers.CharField(
        allow_null=True,
        help_text='The clause type asked about ("insurance") whose words the asked-about document '
        "never uses: why it would not be answered. Null otherwise.",
    )
    flags = FlagsSerializer()
    provenance = ProvenanceSerializer()
    request_id = serializers.CharField()
    timestamp = serializers.CharField()
    reasoning = ReasoningSerializer(required=False, help_text="Present when chain of thought was planned.")


class QueryRecordSerializer(serializers.Serializer):
    """What an audit row says about one question: the base of the admin's audit rows and of the
    caller's own history rows."""

    request_id = serializers.CharField()
    query = serializers.CharField()
    search_query = serializers.CharField(help_text='The question as searched, if rewritten; else "".')
    status = serializers.ChoiceField(choices=AuditStatus.choices)
    error_type = serializers.CharField()
    conversation_id = serializers.CharField()
    template_id = serializers.CharField()
    confidence = serializers.FloatField(allow_null=True)
    latency_ms = serializers.FloatField()
    cache_hit = serializers.BooleanField()
    flags = serializers.DictField()
    documents_used = serializers.ListField(child=serializers.IntegerField())
    created_at = serializers.DateTimeField()


class JobErrorSerializer(QueryErrorSerializer):
    """A failed job's error: the query endpoints' error body (processing_time_ms: the run's time)."""

    status = serializers.IntegerField(help_text="The HTTP status the same failure has in sync mode.")


class JobSerializer(serializers.Serializer):
    job_id = serializers.CharField()
    status = serializers.ChoiceField(["queued", "running", "succeeded", "failed"])
    mode = serializers.CharField()
    request_id = serializers.CharField()
    poll_url = serializers.CharField()
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)
    attempts = serializers.IntegerField()
    timing = serializers.DictField(
        child=serializers.FloatField(allow_null=True), help_text="queued_ms, run_ms, total_ms"
    )
    result = serializers.JSONField(allow_null=True, help_text="The query result once succeeded.")
    error = JobErrorSerializer(allow_null=True)


class JobAcceptedSerializer(serializers.Serializer):
    """The spec's async response."""

    job_id = serializers.CharField()
    status = serializers.CharField()
    request_id = serializers.CharField()
    poll_url = serializers.CharField()
