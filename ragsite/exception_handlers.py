"""Render every API failure as `{"error_type", "message", "request_id", "details"}`.

DRF calls `api_exception_handler` for exceptions raised in API views; `json_404`/`json_500` cover
URLs under /api/ that never reach a view, so /api/ never answers with an HTML page.
"""

from __future__ import annotations

import logging

from django.core import exceptions as django_exceptions
from django.db import DataError, InterfaceError, OperationalError
from django.http import Http404, JsonResponse
from django.views import csrf
from django.views.decorators.csrf import csrf_exempt
from django.views.defaults import page_not_found, server_error
from rest_framework import exceptions as drf_exceptions
from rest_framework.response import Response

from ragsite.exceptions import ApplicationError, InvalidInput, PayloadTooLarge, VectorStoreUnavailable
from ragsite.request_id import get_request_id

logger = logging.getLogger(__name__)


def error_body(error_type: str, message: str, details: dict | list | None = None) -> dict:
    return {
        "error_type": error_type,
        "message": message,
        "request_id": get_request_id(),
        "details": details or {},
    }


def _from_drf(exc: drf_exceptions.APIException) -> tuple[int, dict, dict]:
    headers = {}
    if isinstance(exc, drf_exceptions.Throttled) and exc.wait is not None:
        headers["Retry-After"] = str(int(exc.wait + 0.999))
    if getattr(exc, "auth_header", None):
        headers["WWW-Authenticate"] = exc.auth_header
    if isinstance(exc, drf_exceptions.ValidationError):
        body = error_body("ValidationError", "The request is not valid.", exc.detail)
    else:
        body = error_body(type(exc).__name__, str(exc.detail))
    return exc.status_code, body, headers


def api_exception_handler(exc: Exception, context: dict) -> Response:
    """DRF EXCEPTION_HANDLER: map application, DRF and Django errors to the one error body."""
    headers: dict = {}
    if isinstance(exc, django_exceptions.RequestDataTooBig | django_exceptions.TooManyFilesSent):
        # Django's own request limits (DATA_UPLOAD_MAX_MEMORY_SIZE, DATA_UPLOAD_MAX_NUMBER_FILES).
        exc = PayloadTooLarge(str(exc) or None)
    elif isinstance(exc, django_exceptions.TooManyFieldsSent):
        exc = InvalidInput(str(exc) or None)
    if isinstance(exc, ApplicationError):
        status, body = exc.status_code, error_body(exc.error_type, exc.message, exc.details)
    elif isinstance(exc, drf_exceptions.APIException):
        status, body, headers = _from_drf(exc)
    elif isinstance(exc, Http404):
        status, body = 404, error_body("NotFound", "Not found.")
    elif isinstance(exc, django_exceptions.PermissionDenied):
        status, body = 403, error_body("PermissionDenied", "You do not have permission to do this.")
    elif isinstance(exc, django_exceptions.ValidationError):
        details = exc.message_dict if hasattr(exc, "error_dict") else {"non_field_errors": exc.messages}
        status, body = 400, error_body("ValidationError", "The request is not valid.", details)
    elif isinstance(exc, DataError):
        # A value the database refuses (a NUL character in text, a number out of its column's
        # range) that no validation caught: the request's fault, so a 400 rather than a 500.
        logger.warning("database refused a request value: %s", exc, exc_info=True)
        invalid = InvalidInput(
            "The request holds a value that cannot be stored or searched (e.g. a NUL character)."
        )
        status, body = invalid.status_code, error_body(invalid.error_type, invalid.message)
    elif isinstance(exc, OperationalError | InterfaceError):
        logger.error("database unavailable: %s", exc)
        unavailable = VectorStoreUnavailable()
        status, body = unavailable.status_code, error_body(unavailable.error_type, unavailable.message)
    else:
        logger.exception("unhandled error in %s", context.get("view").__class__.__name__)
        status, body = 500, error_body("InternalError", "An unexpected error occurred.")
    if status >= 500 and isinstance(exc, ApplicationError):
        logger.warning("%s: %s", exc.error_type, exc.message)
    response = Response(body, status=status)
    for name, value in headers.items():
        response[name] = value
    return response


# Exempt: an unknown URL does nothing, and its JSON 404 must not become CsrfViewMiddleware's HTML 403
# when an unsafe method arrives with a session cookie.
@csrf_exempt
def json_404(request, exception=None):
    if request.path.startswith("/api/"):
        return JsonResponse(error_body("NotFound", "No such endpoint."), status=404)
    return page_not_found(request, exception)


def csrf_failure(request, reason=""):
    """CSRF_FAILURE_VIEW: the JSON error body under /api/, Django's page elsewhere."""
    if request.path.startswith("/api/"):
        body = error_body("PermissionDenied", f"CSRF Failed: {reason}")
        return JsonResponse(body, status=403)
    return csrf.csrf_failure(request, reason=reason)


def json_500(request):
    if request.path.startswith("/api/"):
        return JsonResponse(error_body("InternalError", "An unexpected error occurred."), status=500)
    return server_error(request)
