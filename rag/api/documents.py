"""Documents: upload into a case, list and filter, follow ingestion, delete and reindex.

Viewers read; members and above upload, delete and reindex. An upload is all-or-nothing: every
file is checked first, and one bad file means nothing is stored. Ingestion runs as a background
job; poll `GET documents/<id>` for its status, stage and progress (or, for a batch, the list with
`?id=` repeated: one request for all). A document's text is never returned here.
"""

from __future__ import annotations

import json

from django.conf import settings
from django.urls import path
from drf_spectacular.extensions import OpenApiSerializerFieldExtension
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_field,
)
from rest_framework import serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response

from tenants.api_base import MAX_JSON_DEPTH, TenantApiView, json_problem
from tenants.models import Role

from .. import access, selectors
from ..ingest import attachments as attachments_split
from ..ingest import edit
from ..ingest import service as ingest
from ..models import DocType, DocumentStatus, Sensitivity, SourceType
from ..queries.caller import Caller
from .common import Pagination, error_response, paginated

MAX_IDS = 200  # `?id=` filter: one page (Pagination.max_page_size) holds them all

_CASE_ID = OpenApiParameter("case_id", int, OpenApiParameter.PATH, description="The case's id.")
_DOCUMENT_ID = OpenApiParameter("document_id", int, OpenApiParameter.PATH, description="The document's id.")
_PAGES = [
    OpenApiParameter("page", int, description="Page number (from 1)."),
    OpenApiParameter("page_size", int, description="Documents per page (default 50, at most 200)."),
]
_CASE_NOT_FOUND = error_response("No such case in this tenant (another tenant's case is not found either).")
_TOO_MANY_INGEST_JOBS = error_response(
    "TooManyIngestJobs: the tenant's documents queued or processing would pass its limit "
    "(RAG_TENANT_MAX_CONCURRENT_INGESTS; details: limit, allowed, used, adding). Nothing was queued."
)
_DOCUMENT_NOT_FOUND = error_response(
    "No such document in this tenant (another tenant's document is not found either)."
)


@extend_schema_field(OpenApiTypes.OBJECT)
class MetadataField(serializers.JSONField):
    """A document's metadata: a JSON object (a PATCH checks it with `_metadata_object`)."""


class UploadFilesField(serializers.ListField):
    """An upload's files. No count is checked here: none is the service's 400 and too many its 413
    (`uploads_check`); `UploadFilesSchema` states both in the schema."""


class UploadFilesSchema(OpenApiSerializerFieldExtension):
    """`files` in OpenAPI: 1 to RAG_MAX_FILES_PER_UPLOAD of them."""

    target_class = UploadFilesField

    def map_serializer_field(self, auto_schema, direction):
        schema = auto_schema._map_serializer_field(self.target, direction, bypass_extensions=True)
        return {**schema, "minItems": 1, "maxItems": settings.RAG_MAX_FILES_PER_UPLOAD}


class DocumentOutputSerializer(serializers.Serializer):
    """A document's metadata and ingestion state (never its text)."""

    id = serializers.IntegerField()
    case_id = serializers.IntegerField()
    title = serializers.CharField()
    original_filename = serializers.CharField()
    mime_type = serializers.CharField()
    size_bytes = serializers.IntegerField()
    sha256 = serializers.CharField()
    source_type = serializers.ChoiceField(choices=SourceType.choices)
    doc_type = serializers.ChoiceField(choices=DocType.choices)
    jurisdiction = serializers.CharField()
    document_date = serializers.DateField(allow_null=True)
    sensitivity = serializers.ChoiceField(choices=Sensitivity.choices)
    metadata = MetadataField(help_text="Free filter fields given on upload (party, year, …).")
    status = serializers.ChoiceField(choices=DocumentStatus.choices)
    stage = serializers.CharField(help_text='What ingestion is doing, e.g. "embedding 3/12"; "" when done.')
    progress = serializers.IntegerField(min_value=0, max_value=100, help_text="0-100.")
    error_type = serializers.CharField(help_text='Why ingestion failed, e.g. "EncryptedDocument"; "" if not.')
    error_message = serializers.CharField()
    page_count = serializers.IntegerField()
    ocr_confidence = serializers.DictField(
        child=serializers.FloatField(),
        help_text='Pages read by OCR: {"<page>": mean word confidence 0-100}; {} when none was.',
    )
    chunk_count = serializers.IntegerField()
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()
    indexed_at = serializers.DateTimeField(allow_null=True)
    uploaded_by = serializers.CharField(
        source="uploaded_by.username", allow_null=True, help_text="Username; null for API keys."
    )
    parent_id = serializers.IntegerField(
        allow_null=True, help_text="The e-mail this document came attached to; null if none."
    )
    attachment_ids = serializers.SerializerMethodField(
        help_text="An e-mail's attachments stored as documents of their own, in upload order."
    )

    attachments = serializers.SerializerMethodField(
        help_text=(
            "E-mails only (null for other documents): `pending` while the e-mail waits for its "
            "ingestion job, which extracts its attachments in the background (so an upload answers "
            "`pending` with `attachment_ids` still empty); `extracted` once it has, `attachment_ids` "
            "then listing them (none if it had none it could index); `failed` when its ingestion "
            "failed first (no attachment stored; uploading or reindexing it again retries)."
        )
    )

    def get_attachment_ids(self, document) -> list[int]:
        prefetched = getattr(document, "_prefetched_objects_cache", {}).get("attachments")
        if prefetched is not None:  # a list page (`_documents_page`)
            return [attachment.pk for attachment in prefetched]
        return selectors.document_attachment_ids(tenant=document.tenant, document_id=document.pk)

    @extend_schema_field(serializers.ChoiceField(choices=attachments_split.SPLIT_STATES, allow_null=True))
    def get_attachments(self, document) -> str | None:
        return attachments_split.split_state(document)


class UploadedDocumentOutputSerializer(DocumentOutputSerializer):
    duplicate = serializers.BooleanField(
        help_text="The same bytes were already in this case: this is that document, nothing new was stored."
    )


class DocumentFilterSerializer(serializers.Serializer):
    """Query filters of the document lists; each one given narrows the list."""

    status = serializers.ChoiceField(choices=DocumentStatus.choices, required=False)
    doc_type = serializers.ChoiceField(choices=DocType.choices, required=False)
    source_type = serializers.ChoiceField(choices=SourceType.choices, required=False)
    jurisdiction = serializers.CharField(
        required=False, allow_blank=True, max_length=100, help_text="Exact, any case."
    )
    sensitivity = serializers.ChoiceField(choices=Sensitivity.choices, required=False)
    q = serializers.CharField(
        required=False, allow_blank=True, max_length=300, help_text="Title or file name contains."
    )
    uploaded_after = serializers.DateTimeField(required=False, help_text="Uploaded at or after (ISO 8601).")
    uploaded_before = serializers.DateTimeField(required=False, help_text="Uploaded before (ISO 8601).")
    id = serializers.ListField(
        child=serializers.IntegerField(min_value=1, max_value=2**63 - 1),  # bigint ids
        source="ids",
        required=False,
        min_length=1,
        max_length=MAX_IDS,
        help_text=(
            f"Only these documents (repeat it: `?id=3&id=4`, at most {MAX_IDS}): the progress of a "
            "batch of uploads in one request. Ids the caller may not see are simply not listed."
        ),
    )

    def validate(self, attrs):
        after, before = attrs.get("uploaded_after"), attrs.get("uploaded_before")
        if after and before and after >= before:
            raise serializers.ValidationError({"uploaded_before": ["Must be later than uploaded_after."]})
        return attrs


class AllDocumentFilterSerializer(DocumentFilterSerializer):
    case_id = serializers.IntegerField(required=False, min_value=1)


def _metadata_object(parsed) -> dict:
    """Parsed metadata as it may be stored, else the serializer's ValidationError."""
    if not isinstance(parsed, dict):
        raise serializers.ValidationError("Must be a JSON object.")
    # Stored as jsonb: no NUL, no unpaired surrogate, no absurd depth.
    problem = json_problem(parsed, allow_nul=False)
    if problem:
        raise serializers.ValidationError(f"Not accepted: {problem}")
    return parsed


def _documents_page(view, **filters):
    hidden = Caller.from_request(view.request).hidden_cases
    documents = selectors.document_list(tenant=view.tenant, hidden_cases=hidden, **filters)
    documents = documents.prefetch_related(selectors.attachments_prefetch(view.tenant))
    return paginated(view, documents, DocumentOutputSerializer)


class DocumentListApi(TenantApiView):
    """GET: the tenant's documents, newest first, filtered."""

    pagination_class = Pagination  # for the schema; `paginated` pages the list

    @extend_schema(
        operation_id="rag_documents_list",
        parameters=[AllDocumentFilterSerializer, *_PAGES],
        responses={200: DocumentOutputSerializer(many=True), 404: error_response("No such page.")},
    )
    def get(self, request):
        filters = AllDocumentFilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        return _documents_page(self, **filters.validated_data)


class CaseDocumentsApi(TenantApiView):
    """GET: a case's documents, filtered. POST (multipart): upload files into the case."""

    required_role = {"POST": Role.MEMBER}
    parser_classes = [MultiPartParser, FormParser]
    pagination_class = Pagination  # for the schema; `paginated` pages the list

    class InputSerializer(serializers.Serializer):
        # Empty files pass here: the service reports them with the other bad files, all at once.
        files = UploadFilesField(
            child=serializers.FileField(allow_empty_file=True),
            help_text=(
                "One or more PDF, DOCX, TXT or EML (e-mail) files, or scans (PNG, JPEG, TIFF; read by "
                "OCR): repeat the field for each, at most RAG_MAX_FILES_PER_UPLOAD (maxItems; more is "
                "a 413). An e-mail's attachments of those types become documents of their own when "
                "the e-mail is indexed."
            ),
        )
        title = serializers.CharField(
            max_length=300,
            required=False,
            allow_blank=True,
            help_text=(
                "Only with a single file. Without one, the document is titled from its heading and "
                'parties once its text is extracted ("Sponsorship Agreement — Excite / NetGrocer"), '
                "else from its file name."
            ),
        )
        source_type = serializers.ChoiceField(choices=SourceType.choices, default=SourceType.USER_UPLOAD)
        doc_type = serializers.ChoiceField(choices=DocType.choices, default=DocType.OTHER)
        jurisdiction = serializers.CharField(max_length=100, required=False, allow_blank=True, default="")
        document_date = serializers.DateField(required=False, allow_null=True, default=None)
        sensitivity = serializers.ChoiceField(choices=Sensitivity.choices, default=Sensitivity.INTERNAL)
        metadata = serializers.CharField(
            required=False, allow_blank=True, help_text='A JSON object, e.g. {"party": "Acme"}.'
        )

        def validate_metadata(self, value: str) -> dict:
            if not value:
                return {}
            try:
                parsed = json.loads(value)
            except ValueError as exc:
                raise serializers.ValidationError("Not valid JSON.") from exc
            except RecursionError:
                raise serializers.ValidationError(f"Nested deeper than {MAX_JSON_DEPTH} levels.") from None
            return _metadata_object(parsed)

    class OutputSerializer(serializers.Serializer):
        documents = UploadedDocumentOutputSerializer(many=True)

    @extend_schema(
        operation_id="rag_cases_documents_list",
        parameters=[_CASE_ID, DocumentFilterSerializer, *_PAGES],
        responses={
            200: DocumentOutputSerializer(many=True),
            404: error_response("No such case in this tenant, or no such page."),
        },
    )
    def get(self, request, case_id: int):
        case = access.case_for_change(caller=Caller.from_request(request), case_id=case_id)
        filters = DocumentFilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        return _documents_page(self, case_id=case.pk, **filters.validated_data)

    @extend_schema(
        operation_id="rag_cases_documents_upload",
        parameters=[_CASE_ID],
        request={"multipart/form-data": InputSerializer},
        responses={
            201: OpenApiResponse(
                OutputSerializer, description="At least one file was stored as a new document."
            ),
            200: OpenApiResponse(
                OutputSerializer,
                description="Nothing new was stored: every file is already in the case (`duplicate: "
                "true`, the existing document) or retries a document whose ingestion failed.",
            ),
            404: _CASE_NOT_FOUND,
            413: error_response(
                "Too many files (RAG_MAX_FILES_PER_UPLOAD) or a file over RAG_MAX_UPLOAD_MB "
                "(details.files names each bad file), or QuotaExceeded: the tenant's documents or "
                "bytes limit would be passed (details: limit, allowed, used, adding), or OCRLimitExceeded: "
                "an image over RAG_OCR_MAX_PAGES frames or RAG_OCR_MAX_PIXELS per page. Nothing was stored."
            ),
            415: error_response(
                "Not multipart, or a file is not a PDF, DOCX, TXT, EML, PNG, JPEG or TIFF file "
                "(judged by its bytes; an Outlook .msg is refused naming .eml as the way); "
                "details.files names each bad file. Nothing was stored."
            ),
            422: error_response(
                "EmailTooComplex: an e-mail has more MIME parts than RAG_EMAIL_MAX_PARTS or more "
                "levels of nested parts than RAG_EMAIL_MAX_NESTING (details.files names it). Nothing "
                "was stored."
            ),
            429: _TOO_MANY_INGEST_JOBS,
        },
        description=(
            "Every file is checked before anything is stored; if one is empty (400), too large (413) "
            "or of another type (415), nothing is stored and `details.files` lists each bad file "
            "(index, filename, error_type, message). The same bytes already in the case return the "
            "existing document with `duplicate: true`, and an upload that stores nothing new answers "
            "200 instead of 201, so uploading again is safe. An e-mail (.eml) over RAG_EMAIL_MAX_PARTS MIME "
            "parts or RAG_EMAIL_MAX_NESTING levels of nesting is refused (422 EmailTooComplex, found "
            "by a quick scan; nothing stored); the background job parses it and stores its "
            "attachments as documents of their own (`parent_id` = the e-mail, listed in its "
            "`attachment_ids`; quotas count them, else the e-mail fails with QuotaExceeded): this "
            'reply says `attachments: "pending"` for it, and the e-mail `extracted` once they are. '
            "Ingestion runs in the background: poll `GET /api/v1/rag/documents/{id}`, or a batch's "
            "documents at once with `GET /api/v1/rag/cases/{case_id}/documents?id=…&id=…`."
        ),
        examples=[
            OpenApiExample(
                "Two contracts",
                value={"files": ["msa.pdf", "nda.docx"], "doc_type": "contract", "jurisdiction": "Delaware"},
                request_only=True,
            )
        ],
    )
    def post(self, request, case_id: int):
        case = access.case_for_change(caller=Caller.from_request(request), case_id=case_id)
        payload = self.InputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        data = dict(payload.validated_data)
        files = data.pop("files")
        results = ingest.documents_upload(
            tenant=self.tenant,
            case=case,
            files=files,
            uploaded_by=request.user if request.user.pk else None,
            fields=ingest.DocumentFields(**data),
        )
        documents = []
        for result in results:
            result.document.duplicate = result.duplicate
            documents.append(result.document)
        body = self.OutputSerializer({"documents": documents}).data
        # Idempotent: sending the same files again creates nothing and says so.
        created = any(result.created for result in results)
        return Response(body, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)


class DocumentDetailApi(TenantApiView):
    """GET: a document's metadata and ingestion state. PATCH: change its descriptive fields.
    DELETE: remove it (member or above)."""

    required_role = {"PATCH": Role.MEMBER, "DELETE": Role.MEMBER}

    class InputSerializer(serializers.Serializer):
        # Every field optional: PATCH changes what is sent (rag.ingest.edit.document_update).
        title = serializers.CharField(max_length=300, required=False)
        case_id = serializers.IntegerField(
            min_value=1, required=False, help_text="File the document under another case of the tenant."
        )
        source_type = serializers.ChoiceField(choices=SourceType.choices, required=False)
        doc_type = serializers.ChoiceField(choices=DocType.choices, required=False)
        jurisdiction = serializers.CharField(max_length=100, required=False, allow_blank=True)
        document_date = serializers.DateField(required=False, allow_null=True)
        sensitivity = serializers.ChoiceField(choices=Sensitivity.choices, required=False)
        metadata = MetadataField(required=False, help_text='A JSON object, e.g. {"party": "Acme"}.')

        def validate_metadata(self, value) -> dict:
            return _metadata_object(value)

    @extend_schema(
        operation_id="rag_documents_retrieve",
        parameters=[_DOCUMENT_ID],
        responses={200: DocumentOutputSerializer, 404: _DOCUMENT_NOT_FOUND},
    )
    def get(self, request, document_id: int):
        hidden = Caller.from_request(request).hidden_cases
        document = selectors.document_get(tenant=self.tenant, document_id=document_id, hidden_cases=hidden)
        return Response(DocumentOutputSerializer(document).data)

    @extend_schema(
        operation_id="rag_documents_partial_update",
        parameters=[_DOCUMENT_ID],
        request=InputSerializer,
        responses={
            200: DocumentOutputSerializer,
            403: error_response(
                "Role below member, or a member changing a confidential document's sensitivity "
                "(admins and owners only)."
            ),
            404: error_response("No such document, or no such case for case_id, in this tenant."),
            409: error_response("The case named by case_id already holds the same file."),
        },
        description=(
            "Changes the fields sent. A title given here is kept on reindexing. Search and cached "
            "answers see the change at once (passages are updated in the same transaction)."
        ),
        examples=[OpenApiExample("Reclassify", value={"doc_type": "contract"}, request_only=True)],
    )
    def patch(self, request, document_id: int):
        payload = self.InputSerializer(data=request.data, partial=True)
        payload.is_valid(raise_exception=True)
        caller = Caller.from_request(request)
        access.document_for_change(caller=caller, document_id=document_id)
        if "case_id" in payload.validated_data:  # moved only into a case the caller sees
            access.case_for_change(caller=caller, case_id=payload.validated_data["case_id"])
        document = edit.document_update(
            tenant=self.tenant,
            document_id=document_id,
            data=payload.validated_data,
            reads_all_confidential=self.credential.has_role(Role.ADMIN),
        )
        return Response(DocumentOutputSerializer(document).data)

    @extend_schema(
        operation_id="rag_documents_destroy",
        parameters=[_DOCUMENT_ID],
        responses={204: None, 404: _DOCUMENT_NOT_FOUND},
        description=(
            "Deletes the document, its passages and its stored file. Cached answers are invalidated. "
            "Deleting an e-mail keeps its attachments as documents of their own (`parent_id` null)."
        ),
    )
    def delete(self, request, document_id: int):
        access.document_for_change(caller=Caller.from_request(request), document_id=document_id)
        ingest.document_delete(tenant=self.tenant, document_id=document_id)
        return Response(status=status.HTTP_204_NO_CONTENT)


class DocumentReindexApi(TenantApiView):
    """POST: queue a fresh extract → chunk → embed of one document (member or above)."""

    required_role = Role.MEMBER

    @extend_schema(
        operation_id="rag_documents_reindex",
        parameters=[_DOCUMENT_ID],
        request=None,
        responses={202: DocumentOutputSerializer, 404: _DOCUMENT_NOT_FOUND, 429: _TOO_MANY_INGEST_JOBS},
        description="Its current passages stay searchable until the new ones replace them.",
    )
    def post(self, request, document_id: int):
        access.document_for_change(caller=Caller.from_request(request), document_id=document_id)
        document = ingest.document_reindex(tenant=self.tenant, document_id=document_id)
        return Response(DocumentOutputSerializer(document).data, status=status.HTTP_202_ACCEPTED)


class CaseReindexApi(TenantApiView):
    """POST: queue every document of a case for reindexing (member or above)."""

    required_role = Role.MEMBER

    class OutputSerializer(serializers.Serializer):
        queued = serializers.IntegerField(help_text="Documents queued.")

    @extend_schema(
        operation_id="rag_cases_reindex",
        parameters=[_CASE_ID],
        request=None,
        responses={202: OutputSerializer, 404: _CASE_NOT_FOUND, 429: _TOO_MANY_INGEST_JOBS},
    )
    def post(self, request, case_id: int):
        access.case_for_change(caller=Caller.from_request(request), case_id=case_id)
        queued = ingest.case_reindex(tenant=self.tenant, case_id=case_id)
        return Response(self.OutputSerializer({"queued": queued}).data, status=status.HTTP_202_ACCEPTED)


urlpatterns = [
    path("documents", DocumentListApi.as_view(), name="rag-documents"),
    path("documents/<int:document_id>", DocumentDetailApi.as_view(), name="rag-document"),
    path("documents/<int:document_id>/reindex", DocumentReindexApi.as_view(), name="rag-document-reindex"),
    path("cases/<int:case_id>/documents", CaseDocumentsApi.as_view(), name="rag-case-documents"),
    path("cases/<int:case_id>/reindex", CaseReindexApi.as_view(), name="rag-case-reindex"),
]
