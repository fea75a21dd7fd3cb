"""Asking questions: `POST query` (sync or async), `GET jobs/<job_id>`, and the caller's history
(`GET queries`, `GET queries/<request_id>`). Any role may ask; a job or a past question is
visible to whoever asked it (and, for jobs, the tenant's admins)."""

from __future__ import annotations

from django.conf import settings
from django.urls import path, reverse
from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiParameter,
    OpenApiResponse,
    PolymorphicProxySerializer,
    extend_schema,
)
from rest_framework import serializers
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response

from rag.models import AuditStatus, JobStatus, QueryJob
from rag.pipeline.sanitize import injection_findings, within_length
from rag.queries import selectors, services
from rag.queries.caller import Caller
from rag.queries.withheld import checked_row
from ragsite.exceptions import Conflict, InvalidInput, InvalidQuery, NotFound
from ragsite.throttling import check_injection_budget
from tenants.api_base import StrictJSONParser, TenantApiView

from .common import PageParameters, error_response, page_serializer, paginated
from .query_errors import AnswerShapedErrorsMixin, answer_shaped_error, query_error_responses
from .schemas import (
    DryRunResultSerializer,
    JobAcceptedSerializer,
    JobSerializer,
    QueryRecordSerializer,
    QueryRequestSerializer,
    QueryResultSerializer,
)
from .streaming import stream_response, wants_stream

MODES = ("sync", "async", "agentic")
# POST query's 200: an answer, a dry run's prompt, or (a repeated async Idempotency-Key) the job.
QUERY_RESPONSE = PolymorphicProxySerializer(
    component_name="QueryResponse",
    serializers=[QueryResultSerializer, DryRunResultSerializer, JobAcceptedSerializer],
    resource_type_field_name=None,
)
IDEMPOTENCY_HEADER = "Idempotency-Key"
STREAM_DESCRIPTION = (
    "With stream true (or Accept: text/event-stream), text/event-stream: `event: meta` "
    "`{request_id}` as soon as the question passes its checks, before the search; `event: sources` "
    "`{sources: [{citation_id, document_id, title, page, page_end}]}` once the model is about to "
    "write; `event: delta` `{text}` (draft answer text to append, not yet verified); then `event: "
    "result` (the sync answer's body plus `replaces_streamed_text`: show its answer instead of the "
    "deltas) or `event: error` (the error body plus `status`). Refusals before `meta` are JSON."
)

# One event of the stream (rag.api.streaming), as OpenAPI tools read a text/event-stream schema.
SSE_EVENT = {
    "type": "object",
    "properties": {
        "event": {"type": "string", "enum": ["meta", "sources", "delta", "result", "error"]},
        "data": {"type": "string", "description": "The event's JSON object (see the description)."},
    },
    "required": ["event", "data"],
}

# The orchestration spec's example without its `tenant_id`: the credential says the tenant, and
# another tenant's id is a 403, so a copied example must not name one.
_EXAMPLE_REQUEST = {
    "query": "What are the requirements for a valid contract?",
    "mode": "sync",
    "top_k": 5,
    "template_id": "legal_analysis_balanced",
    "citation_style": "inline_numbers",
    "response_style": "balanced",
    "filters": {
        "date_range_start": "2020-01-01",
        "jurisdictions": ["India"],
        "doc_types": ["act", "judgment"],
    },
    "strictness": "normal",
    "follow_up_count": 2,
    "dry_run": False,
}
_EXAMPLE_TENANT_NOTE = (
    "`tenant_id` is left out: the tenant is your credentials'. Given, it must be your own tenant's "
    "slug or id (another tenant's is a 403)."
)
_EXAMPLE_RESPONSE = {
    "answer": "According to Section 10 of the Indian Contract Act, 1872 [1], a valid contract requires...",
    "message": None,
    "citations": [
        {
            "citation_id": "1",
            "doc_id": "doc_42",
            "document_id": 42,
            "title": "Indian Contract Act, 1872 - Section 10",
            "source": "Act / Statute",
            "snippet": "All agreements are contracts if they are made by the free consent of parties...",
            "page": 3,
            "page_end": 3,
            "similarity_score": 0.95,
            "rank_score": 0.92,
            "date": "1872-09-01",
            "chunk_id": 1187,
            "char_start": 10412,
            "char_end": 10496,
        }
    ],
    "follow_up_questions": [
        "What happens if one of these elements is missing?",
        "Are there any exceptions to these requirements?",
    ],
    "confidence_score": 0.88,
    "disclaimer": "",
    "flags": {
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
    },
    "provenance": {
        "index_version": 12,
        "snapshot_id": "snap_20251018093000_v12",
        "weights_version": 0,
        "retrieval_latency_ms": 42.3,
        "model_provider": "anthropic",
        "model": "claude-sonnet-4-5",
        "tokens_used": 1247,
        "cost_estimate": 0.0023,
        "template_id": "legal_analysis_balanced",
        "template_version": 1,
        "response_style": "balanced",
        "documents_retrieved": [42, 57],
        "documents_used": [42],
        "not_found_reason": None,
        "timing": {"search_ms": 42.3, "inference_ms": 823.5, "total_ms": 891.2, "stages": {}},
    },
    "request_id": "req_abc123",
    "timestamp": "2025-10-18T10:30:00Z",
}

_EXAMPLE_DRY_RUN = {
    "dry_run": True,
    "generated_prompt": "You are a careful legal research assistant…\n\nContext: …",
    "generated_prompt_detail": {
        "system": "You are a careful legal research assistant…",
        "user": "Context: …",
    },
    "selected_snippets": _EXAMPLE_RESPONSE["citations"],
    "estimated_tokens": 2847,
    "context_tokens": 2310,
    "would_use_model": "claude-sonnet-4-5",
    "would_use_model_detail": {"provider": "anthropic", "model": "claude-sonnet-4-5"},
    "answerability": 0.93,
    "would_answer": True,
    "missing_clause": None,
    "flags": _EXAMPLE_RESPONSE["flags"],
    "provenance": {
        **_EXAMPLE_RESPONSE["provenance"],
        "model_provider": None,
        "model": None,
        "tokens_used": 0,
    },
    "request_id": "req_abc124",
    "timestamp": "2025-10-18T10:31:00Z",
}


def job_body(job: QueryJob) -> dict:
    """A job as the API shows it."""
    return {
        "job_id": job.job_id,
        "status": job.status,
        "mode": job.mode,
        "request_id": job.request_id,
        "poll_url": reverse("rag-job-detail", kwargs={"job_id": job.job_id}),
        "created_at": job.created_at,
        "started_at": job.started_at,
        "finished_at": job.finished_at,
        "attempts": job.attempts,
        "timing": _job_timing(job),
        "result": job.result,
        "error": _job_error(job),
    }


def _job_error(job: QueryJob) -> dict | None:
    """A failed job's error, answer-shaped like a sync request's, timed by the job's run."""
    if not job.error:
        return None
    error = {**job.error, "request_id": job.request_id}
    return answer_shaped_error(error, processing_time_ms=_job_timing(job)["run_ms"])


def _job_timing(job: QueryJob) -> dict:
    def ms(start, end):
        return round((end - start).total_seconds() * 1000, 1) if start and end else None

    return {
        "queued_ms": ms(job.created_at, job.started_at),
        "run_ms": ms(job.started_at, job.finished_at),
        "total_ms": ms(job.created_at, job.finished_at),
    }


def _pop_question(options: dict):
    """The question, taken out of `options`: `query` (the orchestration spec's request) or
    `question` (the service-interface spec's `/query` body, `{question, filters}`), never both."""
    if "query" in options and "question" in options:
        raise InvalidQuery(
            "Give the question as query or as question, not both.",
            details={"question": "The same as query; give one of them."},
        )
    if "query" not in options and "question" not in options:
        raise InvalidQuery("The query is missing.", details={"query": "This field is required."})
    return options.pop("query") if "query" in options else options.pop("question")


class QueryApi(AnswerShapedErrorsMixin, TenantApiView):
    """POST: ask a question. `mode: sync` answers in the response; `mode: async` queues a job and
    answers 202 with its poll URL. An `Idempotency-Key` header makes the request repeatable: the
    same key and body return the same job (async) or the same answer (sync)."""

    parser_classes = [StrictJSONParser]

    @extend_schema(
        operation_id="rag_query",
        request=QueryRequestSerializer,
        parameters=[
            OpenApiParameter(
                IDEMPOTENCY_HEADER,
                str,
                OpenApiParameter.HEADER,
                required=False,
                description="Repeat-safe submission: the same key and body give the same job/answer.",
            )
        ],
        responses={
            (200, "application/json"): OpenApiResponse(
                QUERY_RESPONSE,
                description="sync: the answer (answer null = not found in the knowledge base); with "
                "dry_run true, the dry run instead (the prompt, no answer); async with a known "
                "Idempotency-Key: the job it created, in the 202 shape. " + STREAM_DESCRIPTION,
            ),
            (200, "text/event-stream"): OpenApiResponse(SSE_EVENT, description=STREAM_DESCRIPTION),
            202: OpenApiResponse(JobAcceptedSerializer, description="async: the job was queued."),
            **query_error_responses(
                {
                    400: "The request is not valid: an option or filter (details names it), no question "
                    "(neither `query` nor `question`, e.g. `{}`), or both `query` and `question`.",
                    404: "A filter or template names something the tenant does not have.",
                    409: "The Idempotency-Key was used with another body, or is still running.",
                    415: "The body is not JSON.",
                    503: "The index, the model (OllamaUnavailable, LLMUnavailable) or the job queue "
                    "is unavailable.",
                    504: "The model did not answer in time.",
                }
            ),
        },
        examples=[
            OpenApiExample(
                "Sync request",
                value=_EXAMPLE_REQUEST,
                request_only=True,
                description=_EXAMPLE_TENANT_NOTE,
            ),
            OpenApiExample(
                "Async request",
                value={**_EXAMPLE_REQUEST, "mode": "async"},
                request_only=True,
                description=_EXAMPLE_TENANT_NOTE,
            ),
            OpenApiExample(
                "Sync response", value=_EXAMPLE_RESPONSE, response_only=True, status_codes=["200"]
            ),
            OpenApiExample(
                "Dry-run response",
                value=_EXAMPLE_DRY_RUN,
                response_only=True,
                status_codes=["200"],
            ),
            OpenApiExample(
                "Async response",
                value={
                    "job_id": "job_xyz789",
                    "status": "queued",
                    "request_id": "req_abc123",
                    "poll_url": "/api/v1/rag/jobs/job_xyz789",
                },
                response_only=True,
                status_codes=["202"],
            ),
        ],
    )
    def post(self, request):
        if not isinstance(request.data, dict):
            raise InvalidInput("The body must be a JSON object.", details={"body": "Must be an object."})
        options = dict(request.data)
        options.pop("tenant_id", None)  # checked against the credential already (TenantApiView)
        question = _pop_question(options)
        mode = options.pop("mode", "sync")
        if mode not in MODES:
            raise InvalidInput(f"Unknown mode {mode!r}.", details={"mode": f"One of: {', '.join(MODES)}."})
        if mode == "agentic":  # answered in the response, like sync, by rag.agent's loop
            options["agentic"] = True
        stream = self._wants_stream(request, options, mode)
        caller = Caller.from_request(request)
        if self._flagged_as_injection(question):
            check_injection_budget(request)
        key = request.headers.get(IDEMPOTENCY_HEADER, "")
        if stream:
            ctx, events = services.query_stream(caller=caller, question=question, options=options)
            return stream_response(ctx, events, error_body=self._error_body)
        if mode == "async":
            job, created = services.query_job_submit(
                caller=caller, question=question, options=options, mode=mode, idempotency_key=key
            )
            accepted = {field: job_body(job)[field] for field in JobAcceptedSerializer().fields}
            return Response(accepted, status=202 if created else 200)
        if key:
            return self._idempotent_sync(caller, question, options, key)
        return Response(services.query_run(caller=caller, question=question, options=options).result)

    def perform_content_negotiation(self, request, force=False):
        """A client asking for an event stream gets its errors before the stream as JSON."""
        if wants_stream(request):
            renderer = JSONRenderer()
            return renderer, renderer.media_type
        return super().perform_content_negotiation(request, force)

    @staticmethod
    def _wants_stream(request, options: dict, mode: str) -> bool:
        """Whether to stream the answer (`stream` taken out of `options`): `"stream": true` or
        `Accept: text/event-stream`; only a sync or agentic answer streams."""
        stream = options.pop("stream", None)
        if stream is not None and not isinstance(stream, bool):
            raise InvalidInput("stream must be true or false.", details={"stream": "Must be a boolean."})
        stream = wants_stream(request) if stream is None else stream
        refusals = {
            "mode": mode == "async" and "An async job is polled, not streamed.",
            "dry_run": options.get("dry_run") is True and "A dry run has no answer to stream.",
            IDEMPOTENCY_HEADER: bool(request.headers.get(IDEMPOTENCY_HEADER))
            and "A repeatable request is answered whole; leave out stream or the key.",
        }
        refused = {name: problem for name, problem in refusals.items() if problem}
        if stream and refused:
            raise InvalidInput("This request cannot be streamed.", details=refused)
        return stream

    def _error_body(self, exc: Exception) -> tuple[int, dict]:
        """(status, body) of the error response this view would give for `exc`."""
        response = self.handle_exception(exc)
        return response.status_code, response.data

    @staticmethod
    def _flagged_as_injection(question) -> bool:
        """Whether `question` counts against the injection budget. A question the length check
        refuses is not scanned: the pipeline refuses it before its own scan, and scanning 2 MB
        first took seconds."""
        if not settings.RAG_ENABLE_INJECTION_DETECTION or not within_length(question):
            return False
        return bool(injection_findings(question))

    def _idempotent_sync(self, caller: Caller, question, options: dict, key: str) -> Response:
        job, created = services.query_job_submit(
            caller=caller, question=question, options=options, mode="sync", idempotency_key=key, enqueue=False
        )
        if created:
            job = services.query_job_run(job_id=job.job_id)
        if job.status == JobStatus.SUCCEEDED:
            return Response(checked_row(caller, job, missing="Query job not found.").result)
        if job.status == JobStatus.FAILED:
            error = dict(job.error)
            status = error.pop("status", 500)
            body = answer_shaped_error(
                {**error, "request_id": job.request_id}, processing_time_ms=self.elapsed_ms()
            )
            return Response(body, status=status)
        raise Conflict(
            "A request with this Idempotency-Key is still running; retry shortly.",
            details={"Idempotency-Key": "In progress.", "job_id": job.job_id},
        )


class JobDetailApi(AnswerShapedErrorsMixin, TenantApiView):
    """GET: an async job's status, and its result or error once finished."""

    @extend_schema(
        operation_id="rag_job_detail",
        responses={200: JobSerializer, **query_error_responses({404: "No such job for this caller."})},
    )
    def get(self, request, job_id: str):
        caller = Caller.from_request(request)
        if "\x00" in job_id:  # no id holds one, and PostgreSQL refuses it in a lookup (a 500)
            raise NotFound("Query job not found.")
        job = selectors.query_job_get(tenant=self.tenant, job_id=job_id, caller=caller)
        job = services.query_job_fail_if_stale(job)
        # Access is decided now (the result is withheld in memory, never saved so).
        job = checked_row(caller, job, missing="Query job not found.")
        return Response(JobSerializer(job_body(job)).data)


class HistoryRowSerializer(QueryRecordSerializer):
    options = serializers.JSONField(help_text="The options it was asked with (to ask it again).")


class HistoryDetailSerializer(HistoryRowSerializer):
    result = serializers.JSONField(allow_null=True, help_text="The response given (null if it failed).")


class QueryHistoryListApi(TenantApiView):
    """GET: the caller's own questions, newest first (paginated; filters below)."""

    class FilterSerializer(serializers.Serializer):
        status = serializers.ChoiceField(AuditStatus.values, required=False)
        conversation_id = serializers.CharField(max_length=100, required=False)
        q = serializers.CharField(max_length=200, required=False, help_text="Text in the question.")
        since = serializers.DateTimeField(required=False)
        until = serializers.DateTimeField(required=False)

    @extend_schema(
        operation_id="rag_query_history",
        parameters=[FilterSerializer, PageParameters],
        responses={200: page_serializer(HistoryRowSerializer), 404: error_response("No such page.")},
    )
    def get(self, request):
        filters = self.FilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        data = filters.validated_data
        rows = selectors.query_history_list(
            tenant=self.tenant,
            caller=Caller.from_request(request),
            status=data.get("status"),
            conversation_id=data.get("conversation_id"),
            text=data.get("q"),
            since=data.get("since"),
            until=data.get("until"),
        )
        return paginated(self, rows, HistoryRowSerializer)


class QueryHistoryDetailApi(TenantApiView):
    """GET: one of the caller's questions with the response it got."""

    @extend_schema(
        operation_id="rag_query_history_detail",
        responses={200: HistoryDetailSerializer, 404: error_response("No such question of this caller.")},
    )
    def get(self, request, request_id: str):
        if "\x00" in request_id:  # as in JobDetailApi
            raise NotFound("Query not found.")
        row = selectors.query_history_get(
            tenant=self.tenant, caller=Caller.from_request(request), request_id=request_id
        )
        return Response(HistoryDetailSerializer(row).data)


urlpatterns = [
    path("query", QueryApi.as_view(), name="rag-query"),
    path("jobs/<str:job_id>", JobDetailApi.as_view(), name="rag-job-detail"),
    path("queries", QueryHistoryListApi.as_view(), name="rag-query-history"),
    path("queries/<str:request_id>", QueryHistoryDetailApi.as_view(), name="rag-query-history-detail"),
]
