"""Shared API pieces: pagination and the error body's OpenAPI description."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse
from rest_framework import serializers
from rest_framework.pagination import PageNumberPagination


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


class ErrorBodySerializer(serializers.Serializer):
    """The one error body every failure under /api/ has."""

    error_type = serializers.CharField(help_text='e.g. "InvalidQuery", "NotFound", "Throttled"')
    message = serializers.CharField()
    request_id = serializers.CharField(allow_null=True)
    details = serializers.JSONField(help_text="Per-field problems or other specifics; {} when none.")


def error_response(description: str) -> OpenApiResponse:
    return OpenApiResponse(ErrorBodySerializer, description=description)


def page_of(serializer_class: type[serializers.Serializer]) -> type[serializers.Serializer]:
    """The OpenAPI shape of a `paginated` response of `serializer_class` rows."""
    name = serializer_class.__name__.removesuffix("Serializer")
    return type(
        f"{name}PageSerializer",
        (serializers.Serializer,),
        {
            "count": serializers.IntegerField(),
            "next": serializers.URLField(allow_null=True),
            "previous": serializers.URLField(allow_null=True),
            "results": serializer_class(many=True),
        },
    )
