"""GET queries/<request_id>/export and conversations/<conversation_id>/export: the caller's own
answers as a DOCX memo (citations as footnotes) or as text with citations; each export recorded."""

from __future__ import annotations

from django.http import HttpResponse
from django.urls import path
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers

from rag.exports.services import DOCX_TYPE, answers_export
from rag.models import ExportFormat
from rag.queries.caller import Caller
from ragsite.exceptions import NotFound
from tenants.api_base import TenantApiView

from .common import error_response

# `format` is DRF's renderer override, hence `as`.
AS_PARAMETER = OpenApiParameter(
    "as", OpenApiTypes.STR, enum=ExportFormat.values, description="docx (default) or text."
)
RESPONSES = {
    (200, DOCX_TYPE): OpenApiResponse(OpenApiTypes.BINARY, description="The memo (.docx)."),
    (200, "text/plain"): OpenApiResponse(OpenApiTypes.STR, description="The answer with its citations."),
    404: error_response("No answer of this caller here."),
}


class _ExportApi(TenantApiView):
    class ParamsSerializer(serializers.Serializer):
        # Named `as` in the query string (a Python keyword, hence the source mapping).
        as_ = serializers.ChoiceField(ExportFormat.values, default=ExportFormat.DOCX)

    def _respond(self, request, **which) -> HttpResponse:
        if any("\x00" in value for value in which.values()):
            raise NotFound("Query not found.")
        params = self.ParamsSerializer(data={"as_": request.query_params.get("as", ExportFormat.DOCX)})
        params.is_valid(raise_exception=True)
        file = answers_export(caller=Caller.from_request(request), fmt=params.validated_data["as_"], **which)
        response = HttpResponse(file.content, content_type=file.content_type)
        response["Content-Disposition"] = f'attachment; filename="{file.filename}"'
        response["Cache-Control"] = "no-store"
        return response


class QueryExportApi(_ExportApi):
    """GET: one of the caller's answers as a memo."""

    @extend_schema(operation_id="rag_query_export", parameters=[AS_PARAMETER], responses=RESPONSES)
    def get(self, request, request_id: str):
        return self._respond(request, request_id=request_id)


class ConversationExportApi(_ExportApi):
    """GET: every answer of one of the caller's conversations, in order, as one memo."""

    @extend_schema(operation_id="rag_conversation_export", parameters=[AS_PARAMETER], responses=RESPONSES)
    def get(self, request, conversation_id: str):
        return self._respond(request, conversation_id=conversation_id)


urlpatterns = [
    path("queries/<str:request_id>/export", QueryExportApi.as_view(), name="rag-query-export"),
    path(
        "conversations/<str:conversation_id>/export",
        ConversationExportApi.as_view(),
        name="rag-conversation-export",
    ),
]
