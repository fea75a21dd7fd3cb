"""Content-Security-Policy on every HTML page: scripts, styles, images and connections from this
origin only, no plugins, no framing, forms posting back here. The staff UI has no inline script or
style. The Django admin and Swagger UI put inline styles in their pages, so below `CSP_INLINE_STYLE_PATHS`
styles may also be inline (scripts never)."""

from __future__ import annotations

from django.conf import settings

_BASE = {
    "default-src": "'self'",
    "script-src": "'self'",
    "style-src": "'self'",
    "img-src": "'self' data:",
    "font-src": "'self'",
    "connect-src": "'self'",
    "object-src": "'none'",
    "base-uri": "'self'",
    "form-action": "'self'",
    "frame-ancestors": "'none'",
}


def policy(path: str) -> str:
    """The policy for a page at `path`."""
    directives = dict(_BASE)
    if any(path.startswith(prefix) for prefix in settings.CSP_INLINE_STYLE_PATHS):
        directives["style-src"] = "'self' 'unsafe-inline'"
    return "; ".join(f"{name} {value}" for name, value in directives.items())


class ContentSecurityPolicyMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        is_page = response.get("Content-Type", "").startswith("text/html")
        if is_page and "Content-Security-Policy" not in response:
            response["Content-Security-Policy"] = policy(request.path)
        return response
