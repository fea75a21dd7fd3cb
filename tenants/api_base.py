"""Base class for tenant-scoped API views, and the JSON parser every API view uses."""

from __future__ import annotations

import re

from rest_framework.exceptions import ParseError
from rest_framework.parsers import FormParser, JSONParser, MultiPartParser
from rest_framework.views import APIView

from ragsite.exceptions import PermissionDenied

from .models import Tenant
from .services import TenantCredential

_BODY_METHODS = {"POST", "PUT", "PATCH"}

# No request body of this API nests deeper than a few levels (a query's filters.metadata is the
# deepest); anything far deeper is an attack on the parser or on code that walks the body.
MAX_JSON_DEPTH = 32
_SURROGATE = re.compile("[\ud800-\udfff]")


class StrictJSONParser(JSONParser):
    """DRF's JSONParser, refusing (400 ParseError) what it would hand on but the rest cannot take:

    - nesting deeper than MAX_JSON_DEPTH (Python's decoder raises RecursionError, a 500, at about
      a thousand levels, and code walking a body recursively fails long before its end);
    - unpaired UTF-16 surrogates ("\\ud800" escapes), which decode to a `str` that UTF-8 cannot
      encode: the tokenizer, the database and the JSON renderer would all fail on it.
    """

    def parse(self, stream, media_type=None, parser_context=None):
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError(f"JSON parse error - nested deeper than {MAX_JSON_DEPTH} levels.") from None
        problem = json_problem(data)
        if problem:
            raise ParseError(f"JSON parse error - {problem}")
        return data


def json_problem(data, *, allow_nul: bool = True) -> str | None:
    """Why parsed JSON is refused (see StrictJSONParser), or None. With `allow_nul` False, a NUL
    character in a string is refused too (for values stored as they are: PostgreSQL's text and
    jsonb cannot hold one). Iterative: never recurses, whatever the depth."""
    stack = [(data, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict | list):
            if depth > MAX_JSON_DEPTH:
                return f"nested deeper than {MAX_JSON_DEPTH} levels."
            items = node.items() if isinstance(node, dict) else enumerate(node)
            for key, value in items:
                if isinstance(key, str):
                    stack.append((key, depth))
                stack.append((value, depth + 1))
        elif isinstance(node, str):
            if _SURROGATE.search(node):
                return "a string holds an unpaired UTF-16 surrogate (not valid Unicode text)."
            if not allow_nul and "\x00" in node:
                return "a string holds a NUL character."
    return None


# The parsers of every API view that takes a body (DRF's defaults, with the strict JSON parser).
API_PARSERS = [StrictJSONParser, FormParser, MultiPartParser]


class TenantApiView(APIView):
    """An APIView acting for the credential's tenant (`self.tenant`, `self.credential`).

    A body may name `tenant_id` (as the spec's requests do); it must be the caller's own tenant.
    """

    parser_classes = API_PARSERS

    @property
    def credential(self) -> TenantCredential:
        return self.request.auth

    @property
    def tenant(self) -> Tenant:
        return self.request.auth.tenant

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)
        if request.method in _BODY_METHODS and isinstance(request.data, dict):
            claimed = request.data.get("tenant_id")
            if claimed not in (None, "") and str(claimed) not in {self.tenant.slug, str(self.tenant.pk)}:
                raise PermissionDenied("tenant_id does not match the tenant of your credentials.")
