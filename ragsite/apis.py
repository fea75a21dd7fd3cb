"""Site-level endpoints: health, and the operator's metrics."""

import hmac

from django.conf import settings
from django.http import Http404, HttpResponse
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from rag.pipeline import metrics
from ragsite.health import health_check


class HealthApi(APIView):
    """GET: dependency health. 200 when healthy or degraded, 503 when unhealthy. No auth, so load
    balancers and uptime monitors can call it; it reveals versions and states, no tenant data."""

    authentication_classes = []
    permission_classes = [AllowAny]

    @extend_schema(
        responses={
            200: OpenApiResponse(description="healthy or degraded; one object per dependency"),
            503: OpenApiResponse(description="unhealthy: the database or pgvector is unusable"),
        }
    )
    def get(self, request):
        report = health_check()
        return Response(report, status=503 if report["status"] == "unhealthy" else 200)


def platform_metrics(request):
    """GET /metrics: every Prometheus metric of the platform (all tenants), for the operator's
    scraper. Off (404) unless METRICS_TOKEN is set; then it needs `Authorization: Bearer <token>`.
    Tenants read their own series at /api/v1/rag/admin/metrics instead."""
    token = settings.METRICS_TOKEN
    if not token:
        raise Http404("metrics are not exposed")
    scheme, _, given = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not hmac.compare_digest(given.strip().encode(), token.encode()):
        return HttpResponse("a bearer token is required\n", status=401, content_type="text/plain")
    return HttpResponse(metrics.exposition(metrics.collect()), content_type=metrics.TEXT_CONTENT_TYPE)
