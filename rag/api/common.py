"""Shared API pieces: pagination and the error body's OpenAPI description, the admin views' base."""

from __future__ import annotations

from rest_framework import serializers
from rest_framework.pagination import PageNumberPagination

from ragsite.schema import error_response  # noqa: F401  (the API modules import it from here)
from tenants.api_base import StrictJSONParser, TenantApiView
from tenants.models import Role


class Pagination(PageNumberPagination):
    """`?page=N&page_size=M` (default 50, at most 200) → {count, next, previous, results}."""

    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 200


class PageParameters(serializers.Serializer):
    """The pagination query parameters, for `extend_schema(parameters=[..., PageParameters])`."""

    page = serializers.IntegerField(min_value=1, required=False)
    page_size = serializers.IntegerField(min_value=1, max_value=200, required=False)


def paginated(view, queryset, serializer_class):
    """The paginated response of `queryset` rendered with `serializer_class` for `view`."""
    paginator = Pagination()
    page = paginator.paginate_queryset(queryset, view.request, view=view)
    return paginator.get_paginated_response(serializer_class(page, many=True).data)


def page_serializer(row_serializer: type[serializers.Serializer]) -> type[serializers.Serializer]:
    """The envelope `paginated` answers with, for OpenAPI: {count, next, previous, results}.

    Named after the rows' view (`AuditListApi.OutputSerializer` → component `AuditListApiPage`)."""
    owner = row_serializer.__qualname__.rpartition(".")[0] or row_serializer.__qualname__
    attrs = {
        "__module__": row_serializer.__module__,
        "__qualname__": f"{owner}.PageSerializer",
        "__doc__": "One page of results.",
        "count": serializers.IntegerField(help_text="Rows in all pages."),
        "next": serializers.CharField(allow_null=True, help_text="URL of the next page, if any."),
        "previous": serializers.CharField(allow_null=True, help_text="URL of the previous page, if any."),
        "results": row_serializer(many=True),
    }
    return type("PageSerializer", (serializers.Serializer,), attrs)


class AdminApiView(TenantApiView):
    """An admin-only view (viewer and member: 403) taking JSON bodies only."""

    required_role = Role.ADMIN
    parser_classes = [StrictJSONParser]


def acting_user(request):
    """The user to record as author (`updated_by`, `created_by`); None for an API key."""
    return request.user if request.user.pk else None
