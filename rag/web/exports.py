"""The staff UI's exports of answers: a DOCX memo of one answer or a whole conversation, and the
text "Copy with citations" puts on the clipboard. The user's own answers only, each recorded."""

from __future__ import annotations

from django.http import HttpResponse
from django.views.decorators.http import require_GET

from rag.exports.services import answers_export
from ragsite.exceptions import NotFound

from .views import _not_found, tenant_page


def _download(file, *, attachment: bool = True) -> HttpResponse:
    response = HttpResponse(file.content, content_type=file.content_type)
    if attachment:
        response["Content-Disposition"] = f'attachment; filename="{file.filename}"'
    response["Cache-Control"] = "no-store"  # privileged text: no shared or browser cache
    return response


def _export(request, *, fmt: str, attachment: bool = True, **which):
    if any("\x00" in value for value in which.values()):
        return _not_found(request)
    try:
        file = answers_export(caller=request.caller, fmt=fmt, **which)
    except NotFound:
        return _not_found(request)
    return _download(file, attachment=attachment)


@tenant_page
@require_GET
def answer_docx(request, request_id: str):
    """One of the user's answers as a DOCX memo, its citations as footnotes."""
    return _export(request, fmt="docx", request_id=request_id)


@tenant_page
@require_GET
def answer_text(request, request_id: str):
    """One of the user's answers as text with numbered citations (for "Copy with citations")."""
    return _export(request, fmt="text", attachment=False, request_id=request_id)


@tenant_page
@require_GET
def conversation_docx(request, conversation_id: str):
    """Every answer of one of the user's conversations, in order, as one DOCX memo."""
    return _export(request, fmt="docx", conversation_id=conversation_id)
