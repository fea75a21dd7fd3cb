"""Site-level API: health."""

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

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
