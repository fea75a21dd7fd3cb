"""Agentic mode (spec: agentic-rag-plan.md): decompose the question, plan the searches, run tools
in a review loop that decides "enough", "more" or "clarify", then hand the gathered evidence to
the ordinary answer stages (template, context, model, citation verification, audit).

    schema.py   the spec's JSON shapes (decomposition, plan, review, tool calls) as dataclasses
    tools.py    search_text, search_semantic, get_document_metadata (the spec's schemas) and the
                filter bridge from tool `filters` to the search SQL; every tool is tenant-scoped
    scope.py    the request's filters, which bound every tool call and every planner probe
    planner.py  the offline rule-based planner (no model needed)
    loop.py     the orchestrator loop: budgets, pruning, clarification
"""
