"""Cases (matters): list, create, read, rename/describe and delete them.

Viewers read; members and above write. A name the tenant already uses is 409 Conflict.
"""

from __future__ import annotations

from django.urls import path
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response

from tenants.api_base import TenantApiView
from tenants.models import Role

from .. import access, selectors, services
from ..queries.caller import Caller
from .common import Pagination, error_response, paginated

_CASE_ID = OpenApiParameter("case_id", int, OpenApiParameter.PATH, description="The case's id.")
_NOT_FOUND = error_response("No such case in this tenant (another tenant's case is not found either).")
_NAME_TAKEN = error_response("The tenant already has a case with this name.")
_CASE_EXAMPLE = OpenApiExample(
    "A case",
    value={"name": "Acme v. Globex", "client": "Acme Corp", "description": "Supply contract dispute."},
    request_only=True,
)


class CaseOutputSerializer(serializers.Serializer):
    """A case as every case endpoint returns it."""

    id = serializers.IntegerField()
    name = serializers.CharField()
    client = serializers.CharField()
    description = serializers.CharField()
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()
    document_count = serializers.IntegerField(help_text="Documents in the case, whatever their status.")


class CaseListCreateApi(TenantApiView):
    """GET: the tenant's cases, by name. POST: a new case (member or above)."""

    required_role = {"POST": Role.MEMBER}
    pagination_class = Pagination  # for the schema; `paginated` pages the list

    class FilterSerializer(serializers.Serializer):
        q = serializers.CharField(required=False, allow_blank=True, max_length=200)

    class InputSerializer(serializers.Serializer):
        name = serializers.CharField(max_length=200)
        client = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")
        description = serializers.CharField(required=False, allow_blank=True, default="")

    @extend_schema(
        operation_id="rag_cases_list",
        parameters=[
            FilterSerializer,
            OpenApiParameter("page", int, description="Page number (from 1)."),
            OpenApiParameter("page_size", int, description="Cases per page (default 50, at most 200)."),
        ],
        responses={200: CaseOutputSerializer(many=True), 404: error_response("No such page.")},
    )
    def get(self, request):
        filters = self.FilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        cases = selectors.case_search(
            tenant=self.tenant,
            q=filters.validated_data.get("q", ""),
            hidden_cases=Caller.from_request(request).hidden_cases,
        )
        return paginated(self, cases, CaseOutputSerializer)

    @extend_schema(
        operation_id="rag_cases_create",
        request=InputSerializer,
        responses={201: CaseOutputSerializer, 409: _NAME_TAKEN},
        examples=[_CASE_EXAMPLE],
    )
    def post(self, request):
        payload = self.InputSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        creator = request.user if request.user.pk else None
        case = services.case_create(tenant=self.tenant, created_by=creator, **payload.validated_data)
        case.document_count = 0
        return Response(CaseOutputSerializer(case).data, status=status.HTTP_201_CREATED)


class CaseDetailApi(TenantApiView):
    """GET: one case. PATCH/PUT: change its name, client or description. DELETE: remove it with
    all its documents (member or above)."""

    required_role = {"PATCH": Role.MEMBER, "PUT": Role.MEMBER, "DELETE": Role.MEMBER}

    class InputSerializer(serializers.Serializer):
        # PUT replaces: a client or description left out becomes empty. PATCH changes what is sent.
        name = serializers.CharField(max_length=200)
        client = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")
        description = serializers.CharField(required=False, allow_blank=True, default="")

    @extend_schema(
        operation_id="rag_cases_retrieve",
        parameters=[_CASE_ID],
        responses={200: CaseOutputSerializer, 404: _NOT_FOUND},
    )
    def get(self, request, case_id: int):
        hidden = Caller.from_request(request).hidden_cases
        case = selectors.case_get_with_document_count(
            tenant=self.tenant, case_id=case_id, hidden_cases=hidden
        )
        return Response(CaseOutputSerializer(case).data)

    @extend_schema(
        operation_id="rag_cases_partial_update",
        parameters=[_CASE_ID],
        request=InputSerializer(partial=True),
        responses={200: CaseOutputSerializer, 404: _NOT_FOUND, 409: _NAME_TAKEN},
        examples=[OpenApiExample("Rename", value={"name": "Acme v. Globex (appeal)"}, request_only=True)],
    )
    def patch(self, request, case_id: int):
        return self._update(request, case_id, partial=True)

    @extend_schema(
        operation_id="rag_cases_update",
        parameters=[_CASE_ID],
        request=InputSerializer,
        responses={200: CaseOutputSerializer, 404: _NOT_FOUND, 409: _NAME_TAKEN},
        examples=[_CASE_EXAMPLE],
    )
    def put(self, request, case_id: int):
        return self._update(request, case_id, partial=False)

    def _update(self, request, case_id: int, *, partial: bool) -> Response:
        payload = self.InputSerializer(data=request.data, partial=partial)
        payload.is_valid(raise_exception=True)
        access.case_for_change(caller=Caller.from_request(request), case_id=case_id)
        services.case_update(tenant=self.tenant, case_id=case_id, data=payload.validated_data)
        case = selectors.case_get_with_document_count(tenant=self.tenant, case_id=case_id)
        return Response(CaseOutputSerializer(case).data)

    @extend_schema(
        operation_id="rag_cases_destroy",
        parameters=[_CASE_ID],
        responses={204: None, 404: _NOT_FOUND},
        description="Deletes the case, its documents, their passages and stored files. Cached answers "
        "are invalidated.",
    )
    def delete(self, request, case_id: int):
        access.case_for_deletion(caller=Caller.from_request(request), case_id=case_id)
        services.case_delete(tenant=self.tenant, case_id=case_id)
        return Response(status=status.HTTP_204_NO_CONTENT)


urlpatterns = [
    path("cases", CaseListCreateApi.as_view(), name="rag-cases"),
    path("cases/<int:case_id>", CaseDetailApi.as_view(), name="rag-case"),
]
