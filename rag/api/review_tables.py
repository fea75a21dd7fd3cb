"""Review tables (issue #34): every document of a case by the columns chosen, filled by a
background job. Viewers read tables and their exports; members and above make, re-run, cancel and
delete them; the firm's saved column sets (review templates) are read by all and made and deleted
by admins. A table is found through its case: a walled-off case's table, another tenant's and a
missing id are the same 404; its cells are re-checked against the reader on every read.
"""

from __future__ import annotations

from django.http import HttpResponse
from django.urls import path, reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response

from rag import selectors as rag_selectors
from rag.queries.caller import Caller
from rag.review.columns import COLUMNS
from rag.review.tables import selectors, services
from rag.review.tables.export import FORMATS, XLSX_TYPE, table_export
from rag.review.tables.models import ReviewStatus, ReviewTable
from rag.review.tables.selectors import TableView
from rag.review.tables.specs import table_columns
from tenants.api_base import StrictJSONParser, TenantApiView
from tenants.models import Role

from .common import error_response

_TABLE_ID = OpenApiParameter("table_id", int, OpenApiParameter.PATH, description="The review table's id.")
_CASE_ID = OpenApiParameter("case_id", int, OpenApiParameter.PATH, description="The case's id.")
_TEMPLATE_ID = OpenApiParameter(
    "review_template_id", int, OpenApiParameter.PATH, description="The review template's id."
)
_NO_TABLE = error_response(
    "No such review table here (another tenant's, or a walled-off case's, is not found either)."
)
_NO_CASE = error_response("No such case here (another tenant's, or a walled-off one, is not found either).")
_BAD_INPUT = error_response("Bad columns, or both or neither of columns and template_id.")
_COLUMNS_HELP = (
    'A list of {"key": "<built-in column key>"} (GET review-columns) or {"question": "<plain words>"}, '
    "in order; at most 50."
)


class ColumnSerializer(serializers.Serializer):
    index = serializers.IntegerField()
    key = serializers.CharField(help_text="The built-in column's key, or q<index> for a typed question.")
    label = serializers.CharField()
    kind = serializers.ChoiceField(["presence", "value", "question"])
    question = serializers.CharField(help_text="What each document is asked.")


class ProgressSerializer(serializers.Serializer):
    done = serializers.IntegerField(help_text="Cells of the latest run finished.")
    total = serializers.IntegerField(help_text="Cells of the latest run in all (documents times columns).")


class ErrorSerializer(serializers.Serializer):
    error_type = serializers.CharField()
    message = serializers.CharField()


class TableStatusSerializer(serializers.Serializer):
    """A table without its cells: what a poller reads."""

    id = serializers.IntegerField()
    case_id = serializers.IntegerField()
    name = serializers.CharField(allow_blank=True)
    status = serializers.ChoiceField(ReviewStatus.choices)
    progress = ProgressSerializer()
    error = ErrorSerializer(allow_null=True)
    columns = ColumnSerializer(many=True)
    created_by = serializers.CharField(allow_null=True, help_text="The username of who made it.")
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)
    url = serializers.CharField(help_text="The table with its cells.")


class CellReviewSerializer(serializers.Serializer):
    answer = serializers.CharField(help_text="The reviewer's answer; it wins over the machine's `answer`.")
    note = serializers.CharField(allow_blank=True)
    reviewer = serializers.CharField(help_text="Username, or the API key's prefix.")
    reviewed_at = serializers.DateTimeField()


class CellSerializer(serializers.Serializer):
    id = serializers.IntegerField(help_text="The cell's id: PUT/DELETE review-cells/<id> reviews it.")
    column_index = serializers.IntegerField()
    column_key = serializers.CharField()
    answer = serializers.CharField(
        allow_blank=True, help_text='"Yes" / "No" for a presence column, else the answer or its "not found".'
    )
    quote = serializers.CharField(allow_blank=True, help_text="The document's text[char_start:char_end].")
    chunk_id = serializers.IntegerField(allow_null=True)
    char_start = serializers.IntegerField(allow_null=True)
    char_end = serializers.IntegerField(allow_null=True)
    page = serializers.IntegerField(allow_null=True)
    confidence = serializers.FloatField(allow_null=True)
    needs_review = serializers.BooleanField(help_text="Low confidence, no evidence, or an error.")
    error = serializers.CharField(allow_blank=True)
    passage_url = serializers.CharField(allow_null=True, help_text="The quoted passage in the staff UI.")
    review = CellReviewSerializer(allow_null=True, help_text="A lawyer's review of the cell, if any.")


class RowSerializer(serializers.Serializer):
    document_id = serializers.IntegerField()
    title = serializers.CharField()
    status = serializers.CharField(help_text="The document's ingestion status.")
    cells = serializers.ListField(
        child=CellSerializer(allow_null=True), help_text="One per column, in order; null until computed."
    )


class TableSerializer(TableStatusSerializer):
    """A table as the reader may see it now: a row per document of the case they may read."""

    redactions_applied = serializers.BooleanField(
        help_text="Cells of confidential documents the reader may not read were left out."
    )
    rows = RowSerializer(many=True)


class TemplateSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    columns = serializers.ListField(child=serializers.DictField(), help_text=_COLUMNS_HELP)
    created_by = serializers.CharField(allow_null=True)
    created_at = serializers.DateTimeField()


class BuiltinColumnSerializer(serializers.Serializer):
    key = serializers.CharField()
    label = serializers.CharField()
    kind = serializers.ChoiceField(["presence", "value"])
    question = serializers.CharField()


def status_body(table: ReviewTable) -> dict:
    return {
        "id": table.pk,
        "case_id": table.case_id,
        "name": table.name,
        "status": table.status,
        "progress": {"done": min(table.done, table.total), "total": table.total},
        "error": table.error or None,
        "columns": [column.as_json() for column in table_columns(table.columns)],
        "created_by": table.created_by.get_username() if table.created_by else None,
        "created_at": table.created_at,
        "started_at": table.started_at,
        "finished_at": table.finished_at,
        "url": reverse("rag-review-table", kwargs={"table_id": table.pk}),
    }


def passage_url(cell) -> str | None:
    if cell.char_start is None or cell.char_end is None:
        return None
    page = reverse("web:document", args=[cell.document_id])
    return f"{page}?start={cell.char_start}&end={cell.char_end}"


def cell_body(cell) -> dict | None:
    if cell is None:
        return None
    return {
        "id": cell.pk,
        "column_index": cell.column_index,
        "column_key": cell.column_key,
        "answer": cell.answer,
        "quote": cell.quote,
        "chunk_id": cell.chunk_id,
        "char_start": cell.char_start,
        "char_end": cell.char_end,
        "page": cell.page,
        "confidence": cell.confidence,
        "needs_review": cell.needs_review,
        "error": cell.error,
        "passage_url": passage_url(cell),
        "review": review_body(cell),
    }


def review_body(cell) -> dict | None:
    if not cell.reviewed:
        return None
    return {
        "answer": cell.reviewed_answer,
        "note": cell.review_note,
        "reviewer": cell.reviewer,
        "reviewed_at": cell.reviewed_at,
    }


def table_body(view: TableView) -> dict:
    return {
        **status_body(view.table),
        "redactions_applied": view.redactions_applied,
        "rows": [
            {
                "document_id": row.document_id,
                "title": row.title,
                "status": row.status,
                "cells": [cell_body(cell) for cell in row.cells],
            }
            for row in view.rows
        ],
    }


def _table(request, table_id) -> ReviewTable:
    caller = Caller.from_request(request)
    return selectors.review_table_get(
        tenant=caller.tenant, table_id=table_id, hidden_cases=caller.hidden_cases
    )


class ReviewColumnsApi(TenantApiView):
    """GET: the built-in columns (CUAD's clause types, and value columns such as governing law)."""

    @extend_schema(operation_id="rag_review_columns", responses={200: BuiltinColumnSerializer(many=True)})
    def get(self, request):
        rows = [{"key": c.key, "label": c.label, "kind": c.kind, "question": c.question} for c in COLUMNS]
        return Response(BuiltinColumnSerializer(rows, many=True).data)


class CaseReviewTablesApi(TenantApiView):
    """GET: the case's review tables, newest first. POST: a new table, queued (member or above)."""

    required_role = {"POST": Role.MEMBER}
    parser_classes = [StrictJSONParser]

    class InputSerializer(serializers.Serializer):
        name = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")
        columns = serializers.ListField(
            child=serializers.JSONField(), required=False, allow_null=False, help_text=_COLUMNS_HELP
        )
        template_id = serializers.IntegerField(
            required=False, min_value=1, max_value=2**63 - 1, help_text="A review template's columns instead."
        )

    @extend_schema(
        operation_id="rag_case_review_tables_list",
        parameters=[_CASE_ID],
        responses={200: TableStatusSerializer(many=True), 404: _NO_CASE},
    )
    def get(self, request, case_id: int):
        caller = Caller.from_request(request)
        case = rag_selectors.case_get(tenant=caller.tenant, case_id=case_id, hidden_cases=caller.hidden_cases)
        tables = selectors.review_table_list(tenant=caller.tenant, case_id=case.pk)
        return Response(TableStatusSerializer([status_body(t) for t in tables], many=True).data)

    @extend_schema(
        operation_id="rag_case_review_tables_create",
        parameters=[_CASE_ID],
        request=InputSerializer,
        responses={
            202: OpenApiResponse(TableStatusSerializer, description="Queued; poll its status."),
            400: _BAD_INPUT,
            404: error_response("No such case or review template here."),
            503: error_response("The job could not be queued."),
        },
        examples=[
            OpenApiExample(
                "Built-in columns and a question",
                value={
                    "name": "Diligence",
                    "columns": [
                        {"key": "change_of_control"},
                        {"key": "governing_law"},
                        {"question": "Who may terminate this agreement for convenience?"},
                    ],
                },
                request_only=True,
            )
        ],
    )
    def post(self, request, case_id: int):
        payload = self.InputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        data = payload.validated_data
        table = services.review_table_create(
            caller=Caller.from_request(request),
            case_id=case_id,
            columns=data.get("columns"),
            template_id=data.get("template_id"),
            name=data.get("name", ""),
        )
        table.refresh_from_db()
        return Response(TableStatusSerializer(status_body(table)).data, status=status.HTTP_202_ACCEPTED)


class ReviewTableApi(TenantApiView):
    """GET: the table with a row per document the reader may read now. DELETE: remove it (member+)."""

    required_role = {"DELETE": Role.MEMBER}

    @extend_schema(
        operation_id="rag_review_table_retrieve",
        parameters=[_TABLE_ID],
        responses={200: TableSerializer, 404: _NO_TABLE},
    )
    def get(self, request, table_id: int):
        table = _table(request, table_id)
        view = selectors.review_table_view(caller=Caller.from_request(request), table=table)
        return Response(TableSerializer(table_body(view)).data)

    @extend_schema(
        operation_id="rag_review_table_destroy", parameters=[_TABLE_ID], responses={204: None, 404: _NO_TABLE}
    )
    def delete(self, request, table_id: int):
        services.review_table_delete(table=_table(request, table_id))
        return Response(status=status.HTTP_204_NO_CONTENT)


class ReviewTableStatusApi(TenantApiView):
    """GET: the table's status and progress, without its cells (for polling)."""

    @extend_schema(
        operation_id="rag_review_table_status",
        parameters=[_TABLE_ID],
        responses={200: TableStatusSerializer, 404: _NO_TABLE},
    )
    def get(self, request, table_id: int):
        return Response(TableStatusSerializer(status_body(_table(request, table_id))).data)


class ReviewTableCancelApi(TenantApiView):
    """POST: stop a queued or running table (cells made so far stay); a finished one is unchanged."""

    required_role = Role.MEMBER

    @extend_schema(
        operation_id="rag_review_table_cancel",
        request=None,
        parameters=[_TABLE_ID],
        responses={200: TableStatusSerializer, 404: _NO_TABLE},
    )
    def post(self, request, table_id: int):
        table = services.review_table_cancel(table=_table(request, table_id))
        return Response(TableStatusSerializer(status_body(table)).data)


class ReviewTableRerunApi(TenantApiView):
    """POST: run the table again for the caller, recomputing only the cells of documents that
    changed (reindexed, added; removed ones dropped)."""

    required_role = Role.MEMBER

    @extend_schema(
        operation_id="rag_review_table_rerun",
        request=None,
        parameters=[_TABLE_ID],
        responses={
            202: TableStatusSerializer,
            404: _NO_TABLE,
            409: error_response("The table is still queued or running."),
            503: error_response("The job could not be queued."),
        },
    )
    def post(self, request, table_id: int):
        caller = Caller.from_request(request)
        table = services.review_table_rerun(caller=caller, table=_table(request, table_id))
        return Response(TableStatusSerializer(status_body(table)).data, status=status.HTTP_202_ACCEPTED)


class ReviewTableExportApi(TenantApiView):
    """GET: the table as the reader may see it, as CSV or XLSX."""

    class ParamsSerializer(serializers.Serializer):
        as_ = serializers.ChoiceField(FORMATS, default="csv")

    @extend_schema(
        operation_id="rag_review_table_export",
        parameters=[
            _TABLE_ID,
            OpenApiParameter(
                "as", OpenApiTypes.STR, enum=list(FORMATS), description="csv (default) or xlsx."
            ),
        ],
        responses={
            (200, "text/csv"): OpenApiResponse(OpenApiTypes.STR, description="The table as CSV."),
            (200, XLSX_TYPE): OpenApiResponse(OpenApiTypes.BINARY, description="The table as a workbook."),
            400: error_response("An unknown format."),
            404: _NO_TABLE,
        },
    )
    def get(self, request, table_id: int):
        params = self.ParamsSerializer(data={"as_": request.query_params.get("as", "csv")})
        params.is_valid(raise_exception=True)
        table = _table(request, table_id)
        view = selectors.review_table_view(caller=Caller.from_request(request), table=table)
        file = table_export(view, params.validated_data["as_"])
        response = HttpResponse(file.content, content_type=file.content_type)
        response["Content-Disposition"] = f'attachment; filename="{file.filename}"'
        response["Cache-Control"] = "no-store"
        return response


def template_body(template) -> dict:
    return {
        "id": template.pk,
        "name": template.name,
        "columns": template.columns,
        "created_by": template.created_by.get_username() if template.created_by else None,
        "created_at": template.created_at,
    }


class ReviewTemplatesApi(TenantApiView):
    """GET: the firm's saved column sets. POST: save one (admin or above)."""

    required_role = {"POST": Role.ADMIN}
    parser_classes = [StrictJSONParser]

    class InputSerializer(serializers.Serializer):
        name = serializers.CharField(max_length=200)
        columns = serializers.ListField(child=serializers.JSONField(), help_text=_COLUMNS_HELP)

    @extend_schema(operation_id="rag_review_templates_list", responses={200: TemplateSerializer(many=True)})
    def get(self, request):
        templates = selectors.review_template_list(tenant=self.tenant)
        return Response(TemplateSerializer([template_body(t) for t in templates], many=True).data)

    @extend_schema(
        operation_id="rag_review_templates_create",
        request=InputSerializer,
        responses={
            201: TemplateSerializer,
            400: _BAD_INPUT,
            409: error_response("The firm has a review template of this name."),
        },
    )
    def post(self, request):
        payload = self.InputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        template = services.review_template_create(
            caller=Caller.from_request(request), **payload.validated_data
        )
        return Response(TemplateSerializer(template_body(template)).data, status=status.HTTP_201_CREATED)


class ReviewTemplateApi(TenantApiView):
    """DELETE: remove one of the firm's saved column sets (admin or above)."""

    required_role = {"DELETE": Role.ADMIN}

    @extend_schema(
        operation_id="rag_review_template_destroy",
        parameters=[_TEMPLATE_ID],
        responses={204: None, 404: error_response("No such review template here.")},
    )
    def delete(self, request, review_template_id: int):
        template = selectors.review_template_get(tenant=self.tenant, template_id=review_template_id)
        services.review_template_delete(template=template)
        return Response(status=status.HTTP_204_NO_CONTENT)


_CELL_ID = OpenApiParameter("cell_id", int, OpenApiParameter.PATH, description="The cell's id (its `id`).")
_NO_CELL = error_response(
    "No such review cell here (one of a document the caller may not read, of a walled-off case's "
    "table or of another tenant's is not found either)."
)


class ReviewCellApi(TenantApiView):
    """PUT: record the caller's review of one cell: their answer (it wins over the machine's in the
    table, its page and its exports) and a note (member or above). DELETE: take it back."""

    required_role = Role.MEMBER
    parser_classes = [StrictJSONParser]

    class InputSerializer(serializers.Serializer):
        answer = serializers.CharField(
            max_length=services.MAX_REVIEW_ANSWER, help_text='The right answer, e.g. "No" or "New York".'
        )
        note = serializers.CharField(
            max_length=services.MAX_REVIEW_NOTE, required=False, allow_blank=True, default=""
        )

    def _cell(self, request, cell_id):
        return selectors.review_cell_get(caller=Caller.from_request(request), cell_id=cell_id)

    @extend_schema(
        operation_id="rag_review_cell_review",
        parameters=[_CELL_ID],
        request=InputSerializer,
        responses={
            200: CellSerializer,
            400: error_response("No answer, or a field too long."),
            404: _NO_CELL,
        },
    )
    def put(self, request, cell_id: int):
        payload = self.InputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        cell = services.review_cell_review(
            caller=Caller.from_request(request),
            cell=self._cell(request, cell_id),
            answer=payload.validated_data["answer"],
            note=payload.validated_data["note"],
        )
        return Response(CellSerializer(cell_body(cell)).data)

    @extend_schema(
        operation_id="rag_review_cell_unreview",
        parameters=[_CELL_ID],
        responses={200: CellSerializer, 404: _NO_CELL},
    )
    def delete(self, request, cell_id: int):
        cell = services.review_cell_unreview(cell=self._cell(request, cell_id))
        return Response(CellSerializer(cell_body(cell)).data)


urlpatterns = [
    path("review-columns", ReviewColumnsApi.as_view(), name="rag-review-columns"),
    path("cases/<int:case_id>/review-tables", CaseReviewTablesApi.as_view(), name="rag-case-review-tables"),
    path("review-tables/<int:table_id>", ReviewTableApi.as_view(), name="rag-review-table"),
    path(
        "review-tables/<int:table_id>/status", ReviewTableStatusApi.as_view(), name="rag-review-table-status"
    ),
    path(
        "review-tables/<int:table_id>/cancel", ReviewTableCancelApi.as_view(), name="rag-review-table-cancel"
    ),
    path("review-tables/<int:table_id>/rerun", ReviewTableRerunApi.as_view(), name="rag-review-table-rerun"),
    path(
        "review-tables/<int:table_id>/export", ReviewTableExportApi.as_view(), name="rag-review-table-export"
    ),
    path("review-cells/<int:cell_id>", ReviewCellApi.as_view(), name="rag-review-cell"),
    path("review-templates", ReviewTemplatesApi.as_view(), name="rag-review-templates"),
    path(
        "review-templates/<int:review_template_id>", ReviewTemplateApi.as_view(), name="rag-review-template"
    ),
]
