"""/ask/<request_id>/: a stored answer at its own address, with the conversation it belongs to, so
Back, reload, bookmarks and citations opened in a new tab all come back to it."""

from __future__ import annotations

from django.shortcuts import render
from django.views.decorators.http import require_GET

from rag.queries import selectors as query_selectors
from ragsite.exceptions import NotFound

from .views import _lookup_text, _not_found, ask_context, tenant_page


def turn_data(row, *, viewer_id: int | None) -> dict:
    """One turn of a thread as the ask page's script renders it."""
    return {
        "request_id": row.request_id,
        "query": row.query,
        "options": row.options or {},
        "status": row.status,
        "error_type": row.error_type,
        "asked_at": row.created_at.isoformat(),
        "result": row.result,
        "asked_by": None if row.user_id == viewer_id else str(row.user or f"key {row.api_key_prefix}"),
    }


@tenant_page
@require_GET
def answer(request, request_id: str):
    """The ask page showing a stored answer and the turns of its conversation before it: the
    user's own, or for the firm's admins anyone's in the firm. The user continues the
    conversation from here when it is theirs."""
    caller = request.caller
    request_id = _lookup_text(request_id)
    try:
        if request_id is None:
            raise NotFound("Query not found.")
        row = query_selectors.answer_get(tenant=caller.tenant, caller=caller, request_id=request_id)
    except NotFound:
        return _not_found(request)
    thread = query_selectors.answer_thread(tenant=caller.tenant, caller=caller, row=row)
    own = caller.owns(row)
    context = ask_context(
        request,
        rerun=None,
        thread={
            "conversation_id": row.conversation_id if own else "",
            "own": own,
            "turns": [turn_data(turn, viewer_id=request.user.pk) for turn in thread],
        },
    )
    return render(request, "web/ask.html", context)
