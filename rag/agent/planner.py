"""The offline planner: decomposition, plan and review by rules, so agentic mode works in the
default install with no model (spec modes 1 and 2; mode 3, composing, is the pipeline's answer
stages with the `[doc_id]` citation style).

Every probe (routing, parties, buckets, overload counts) and every tool call keeps to the request's
scope (scope.py): the planner never learns of a document outside it.

- Decompose: the intent from the question's shape; the document the question names (by
  rag.retrieval.routing, which matches titles, parties and openings) becomes a `doc_id`
  constraint; years ("in 2023", "after 2020", "before 2019") become year or date constraints;
  parties found in the tenant's document metadata become `party` constraints; document types and
  case names become buckets; quoted phrases become keyword subqueries.
- Plan: quoted phrases are searched as keywords; other questions both semantically and by
  keyword ("hybrid"), every call carrying the constraints as `filters`.
- Review: run the planned calls; enough once evidence is in; with none, relax (drop the
  filters, then the bucket) and finally ask the user (no_results, with what was tried); a `list`
  question matching too many documents asks the user to narrow it (overload, with counts).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import date
from typing import Protocol

from django.conf import settings
from django.urls import reverse

from rag import selectors
from rag.models import DocType
from rag.retrieval.filters import SearchFilters
from rag.retrieval.routing import route
from ragsite.exceptions import ConfigurationError
from tenants.models import Tenant

from .schema import Clarification, Constraint, Decomposition, Plan, Review, ToolCall
from .scope import AgentScope
from .tools import ToolResult, doc_id_of, search_filters

MAX_ROUTED_DOCUMENTS = 3
MAX_PARTIES_SCANNED = 2000
_YEAR = re.compile(
    r"\b(?:(in|from|of|during|dated|for|since|after|before|prior to|until)\s+)?((?:19|20)\d{2})\b", re.I
)
_QUOTED = re.compile(r"[\"“]([^\"”]{3,200})[\"”]")
_COMPARE = re.compile(r"\b(compare|comparison|differ|difference|versus|vs\.?|contrast|both)\b", re.I)
_LIST = re.compile(r"^\s*(list|which|enumerate|find all|show all|name all)\b|\ball (?:the )?\w+s\b", re.I)
_SUMMARIZE = re.compile(r"\b(summari[sz]e|summary|overview|outline)\b", re.I)


@dataclass
class AgentState:
    """What the loop has done so far, for the reviewer."""

    calls: list[ToolResult] = field(default_factory=list)
    evidence: list = field(default_factory=list)
    relaxed: list[str] = field(default_factory=list)  # what the reviewer has dropped so far


class Planner(Protocol):
    name: str

    def decompose(self, question: str) -> Decomposition: ...
    def plan(self, question: str, decomposition: Decomposition) -> Plan: ...
    def review(self, question: str, plan: Plan, state: AgentState) -> Review: ...


def get_planner(
    *, tenant: Tenant, index_version: int, scope: SearchFilters | None = None, name: str | None = None
) -> Planner:
    """The planner `RAG_AGENT_PLANNER` names: "rule" (the default) or "llm" (Claude), planning
    within the request's `scope` (its filters; None: the whole tenant)."""
    name = (name or settings.RAG_AGENT_PLANNER or "").strip().lower()
    if name == "rule":
        return RulePlanner(tenant=tenant, index_version=index_version, scope=scope)
    if name == "llm":
        from .llm_planner import LLMPlanner  # imports this module

        return LLMPlanner(tenant=tenant, index_version=index_version, scope=scope)
    raise ConfigurationError(
        f"Unknown RAG_AGENT_PLANNER {name!r}.", details={"RAG_AGENT_PLANNER": "One of: rule, llm."}
    )


class RulePlanner:
    name = "rule"

    def __init__(self, *, tenant: Tenant, index_version: int, scope: SearchFilters | None = None):
        self.tenant = tenant
        self.index_version = index_version
        self.scope = AgentScope.of(tenant, scope)
        self.decomposition: Decomposition | None = None

    # --- Mode 0: decomposition ------------------------------------------------------------------

    def decompose(self, question: str) -> Decomposition:
        routing = route(
            tenant=self.tenant, query=question, index_version=self.index_version, filters=self.scope.filters
        )
        constraints: list[Constraint] = []
        if routing.documents:
            ids = [doc_id_of(d.document_id) for d in routing.documents[:MAX_ROUTED_DOCUMENTS]]
            constraints.append(Constraint("doc_id", "in", ids))
        titles = " ".join(d.title for d in routing.documents)
        years = []
        for lead, year in _YEAR.findall(question):
            if year in titles:  # part of the named document's title, not a constraint
                continue
            lead = lead.lower()
            after, before = lead in ("since", "after"), lead in ("before", "prior to", "until")
            operator = ">=" if after else "<" if before else "="
            years.append(Constraint("year", operator, int(year)))
        if routing.documents and years:
            # A year that would leave none of the documents the question names is about what they
            # say ("Can the Glumetza agreement be renewed after 2011?"), not which one is meant
            # ("the Hooli supply contract of 2023" among those of other years).
            years = [c for c in years if self._leaves_any(c, ids)]
        constraints += years
        constraints += [Constraint("party", "=", party) for party in self._parties_named(question)]
        proper = (routing.question or question).strip()
        quoted = _QUOTED.findall(question)
        decomposition = Decomposition(
            intent=_intent(question),
            primary_buckets=self._buckets_named(question),
            constraints=constraints,
            subqueries=[*quoted, proper] if quoted else [proper],
        )
        self.decomposition = decomposition
        return decomposition

    def _leaves_any(self, constraint: Constraint, doc_ids: list[str]) -> bool:
        """Whether the year `constraint`, applied as the tools apply it (a date's year or a metadata
        "year" for `=`, the document's date for a range), leaves any of `doc_ids` in scope."""
        asked = filters_from([constraint])
        filters, _ = search_filters(self.scope, bucket="all", filters=asked, doc_id=doc_ids)
        filters = self.scope.narrow(filters) if filters is not None else None
        if filters is None:
            return False
        return selectors.document_ids_within(tenant=self.tenant, filters=filters).exists()

    def _parties_named(self, question: str) -> list[str]:
        lowered = question.lower()
        values = (
            self.scope.documents()
            .filter(metadata__has_key="party")
            .values_list("metadata__party", flat=True)[:MAX_PARTIES_SCANNED]
        )
        found = []
        for value in values:
            for party in value if isinstance(value, list) else [value]:
                if not isinstance(party, str) or len(party) <= 2:
                    continue
                if re.search(rf"\b{re.escape(party.lower())}\b", lowered):
                    found.append(party)
        return list(dict.fromkeys(found))

    def _buckets_named(self, question: str) -> list[str]:
        lowered = question.lower()
        buckets = [
            name
            for name in self.scope.cases().values_list("name", flat=True)
            if len(name) > 2 and name.lower() in lowered
        ]
        for value, label in DocType.choices:
            if value == DocType.OTHER:
                continue
            plural = rf"\b{re.escape(str(label).lower())}s\b"  # "contracts", "judgments": the kind wanted
            if re.search(plural, lowered):
                buckets.append(value)
        return list(dict.fromkeys(buckets))

    # --- Mode 1: plan ---------------------------------------------------------------------------

    def plan(self, question: str, decomposition: Decomposition) -> Plan:
        quoted = _QUOTED.findall(question)
        return Plan(
            target_buckets=decomposition.primary_buckets or ["all"],
            strategy="keyword" if quoted else "hybrid",
            initial_queries=list(decomposition.subqueries),
            filters_hint=filters_from(decomposition.constraints),
            max_tool_calls=settings.RAG_AGENT_MAX_TOOL_CALLS,
        )

    # --- Mode 2: review -------------------------------------------------------------------------

    def review(self, question: str, plan: Plan, state: AgentState) -> Review:
        last = state.calls[-1] if state.calls else None
        if "probe" in state.relaxed:  # the question's own restrictions found nothing: ask
            return Review(
                "clarify", "Nothing matches the question's restrictions.", None, self._no_results(plan, state)
            )
        if last is not None and self._overloaded(last):
            return Review(
                "clarify", "Too many documents match to answer one by one.", None, self._overload(last)
            )
        planned = [call for call in planned_calls(plan) if not _made(call, state)]
        if planned:
            return Review("more", "Running the planned searches.", planned[0])
        if state.evidence:
            return Review("enough", f"{len(state.evidence)} relevant passage(s) found.")
        other = self._other_tool_call(plan, state)
        if other is not None:
            return Review("more", "Nothing found by keyword; searching by meaning too.", other)
        if _restricted(plan):
            # Never answer from documents the question excluded; look whether dropping its
            # restrictions would find anything, to tell the user what to relax.
            state.relaxed.append("probe")
            query = plan.initial_queries[-1]
            return Review(
                "more",
                "Nothing found within the restrictions; checking what exists without them.",
                ToolCall("search_semantic", {"bucket": "all", "query": query}),
            )
        return Review("clarify", "Nothing relevant in the documents.", None, self._no_results(plan, state))

    def _other_tool_call(self, plan: Plan, state: AgentState) -> ToolCall | None:
        if plan.strategy != "keyword" or "semantic" in state.relaxed:
            return None
        state.relaxed.append("semantic")
        call = planned_calls(plan)[-1]
        return ToolCall("search_semantic", call.args)

    def _overloaded(self, result: ToolResult) -> bool:
        intent = self.decomposition.intent if self.decomposition else "qa"
        return intent == "list" and len(result.matched_document_ids) >= settings.RAG_AGENT_OVERLOAD_DOCUMENTS

    def _overload(self, result: ToolResult) -> Clarification:
        ids = result.matched_document_ids
        documents = self.scope.documents().filter(pk__in=ids).select_related("case")
        by_type, by_year, by_case = Counter(), Counter(), Counter()
        cases = {}
        for document in documents:
            by_type[document.doc_type] += 1
            by_case[document.case.name] += 1
            cases[document.case_id] = document.case.name
            year = document.document_date.year if document.document_date else document.metadata.get("year")
            if year:
                by_year[str(year)] += 1
        counts = {
            "documents": len(ids),
            "by_doc_type": dict(by_type),
            "by_year": dict(by_year),
            "by_case": dict(by_case),
        }
        narrowing = [
            name
            for name, counter in (("document type", by_type), ("year", by_year), ("case", by_case))
            if len(counter) > 1
        ]
        how = ", ".join(narrowing) or "a party, a date or a case"
        tables = [
            {"case_id": pk, "case": name, "url": reverse("web:review", args=[pk])}
            for pk, name in sorted(cases.items(), key=lambda item: item[1])
        ]
        return Clarification(
            type="overload",
            missing_info=f"Narrow the question by {how}, or build a review table.",
            message=(
                f"I found {len(ids)} matching documents, too many to answer one by one here. Build a "
                "review table of them instead (every document against the clauses you pick, with "
                f"each quote; CSV or XLSX export) from the case's Review page, or narrow your search "
                f"by {how}."
            ),
            tried=[_tried(result)],
            counts=counts,
            review_tables=tables,
        )

    def _no_results(self, plan: Plan, state: AgentState) -> Clarification:
        tried = [_tried(call) for call in state.calls]
        restrictions = _restrictions(plan)
        probe = state.calls[-1] if "probe" in state.relaxed and state.calls else None
        if probe is None or not restrictions:
            return Clarification(
                type="no_results",
                missing_info="Check the names and terms in the question, or ask more broadly.",
                message=(
                    "I searched the documents by keyword and by meaning but found nothing relevant. "
                    "Check the names and terms in the question, or ask more broadly."
                ),
                tried=tried,
            )
        found = list(dict.fromkeys(item.passage.title for item in probe.evidence))
        restricted = " and ".join(restrictions)
        if found:
            titles = ", ".join(f"“{title}”" for title in found[:3]) + (
                " and others" if len(found) > 3 else ""
            )
            after = (
                f"Without those restrictions, {len(found)} document(s) match, such as {titles}. "
                "Would you like to search without them?"
            )
        else:
            after = "Nothing matches without them either; check the names and terms in the question."
        return Clarification(
            type="no_results",
            missing_info=f"Relax {restricted}, or check them.",
            message=f"I looked for documents with {restricted} but found none. {after}",
            tried=tried,
            counts={"documents_without_restrictions": len(found)},
        )


def _restricted(plan: Plan) -> bool:
    return bool(plan.filters_hint) or plan.target_buckets != ["all"]


def _restrictions(plan: Plan) -> list[str]:
    """The plan's restrictions in words: "year 2023", "party 'ACME'", "bucket contract"."""
    words = []
    for key, value in plan.filters_hint.items():
        shown = ", ".join(map(str, value)) if isinstance(value, list) else str(value)
        words.append(f"{key.replace('_', ' ')} {shown}")
    words += [f"bucket {bucket}" for bucket in plan.target_buckets if bucket != "all"]
    return words


def _intent(question: str) -> str:
    if _COMPARE.search(question):
        return "compare"
    if _SUMMARIZE.search(question):
        return "summarize"
    if _LIST.search(question):
        return "list"
    return "qa"


def filters_from(constraints: list[Constraint]) -> dict:
    """The decomposition's constraints as tool `filters` (the spec's filter bridge)."""
    filters: dict = {}
    for c in constraints:
        if c.field == "year" and c.operator == "=":
            filters.setdefault("year", []).append(c.value)
        elif c.field == "year" and c.operator in (">=", ">"):
            filters["date_from"] = date(c.value + (c.operator == ">"), 1, 1).isoformat()
        elif c.field == "year" and c.operator in ("<", "<="):
            filters["date_to"] = date(c.value - (c.operator == "<"), 12, 31).isoformat()
        elif c.field == "party":
            filters.setdefault("party", []).append(c.value)
        else:
            filters[c.field] = c.value
    for key in ("year", "party"):
        if key in filters and len(filters[key]) == 1:
            filters[key] = filters[key][0]
    return filters


def planned_calls(plan: Plan) -> list[ToolCall]:
    """Every query in every target bucket, with each tool of the strategy, carrying the filters."""
    tools = {
        "keyword": ["search_text"],
        "semantic": ["search_semantic"],
        "hybrid": ["search_semantic", "search_text"],
    }
    calls = []
    for query in plan.initial_queries:
        for bucket in plan.target_buckets:
            for tool in tools[plan.strategy]:
                args = {"bucket": bucket, "query": query}
                if plan.filters_hint:
                    args["filters"] = dict(plan.filters_hint)
                calls.append(ToolCall(tool, args))
    return calls


def _made(call: ToolCall, state: AgentState) -> bool:
    return any(result.tool == call.tool and result.args == call.args for result in state.calls)


def _tried(result: ToolResult) -> dict:
    return {"tool": result.tool, "args": result.args, "results": len(result.evidence)}
