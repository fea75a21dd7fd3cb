"""The agent's tools, with exactly the spec's JSON schemas (agentic-rag-plan.md, section 2), and
the filter bridge that turns a tool call's `filters` into the search's SQL.

Every tool runs for one tenant and one reader: search goes through rag.retrieval (the tenant is
in the SQL, and so are the confidential documents and walled-off cases the reader may not read)
and metadata through the tenant-scoped selectors, so another tenant's document is "not found",
never a leak. Every tool
also runs within the request's scope (scope.py): a call's filters are intersected with the
request's, and a document outside them is "not found" too.

Buckets are the document types ("contracts", "judgment") and the cases in scope (by name); "all"
searches everything in scope. Filter keys the bridge knows:

    doc_id / document_id   "doc_42", 42 or a list      → the chunk's document
    case / case_id         a case name or id            → the chunk's case
    doc_type, jurisdiction, source_type                 → the chunk's own columns
    year                   2023 or [2022, 2023]         → document date in that year, or
                                                          Document.metadata["year"]
    date_from, date_to     "YYYY-MM-DD"                 → document date range
    party                  "ACME"                       → documents naming that party (title, file
                                                          name, metadata, opening text)
    any other key          a value or list of values    → Document.metadata[key] (JSONB @>)
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from django.db.models import Q
from django.db.models.functions import Left

from rag.models import DocType, DocumentStatus
from rag.retrieval import service as retrieval
from rag.retrieval.filters import SearchFilters
from rag.retrieval.service import Passage, Reader
from ragsite.exceptions import InvalidQuery
from tenants.models import Tenant

from .scope import AgentScope

SEARCH_TEXT = {
    "name": "search_text",
    "description": "Keyword search within a specific bucket. Supports metadata filtering.",
    "parameters": {
        "type": "object",
        "properties": {
            "bucket": {"type": "string", "description": "Target bucket (e.g., invoices, contracts)."},
            "query": {"type": "string", "description": "Keyword string."},
            "filters": {
                "type": "object",
                "description": "Key-value pairs for metadata filtering (e.g., {'year': 2023, 'party': 'ACME'}).",  # noqa: E501 - the spec's text
                "additionalProperties": True,
                "nullable": True,
            },
            "top_k": {"type": "integer", "default": 10, "description": "Number of snippets to return."},
            "context_chars": {"type": "integer", "default": 400},
            "doc_id": {
                "type": "string",
                "description": "Scope search to a specific document.",
                "nullable": True,
            },
        },
        "required": ["bucket", "query"],
    },
}
SEARCH_SEMANTIC = {
    "name": "search_semantic",
    "description": "Semantic/Vector search within a specific bucket. Supports metadata filtering.",
    "parameters": {
        "type": "object",
        "properties": {
            "bucket": {"type": "string"},
            "query": {"type": "string", "description": "Natural language query for embedding."},
            "filters": {
                "type": "object",
                "description": "Metadata filters (e.g., {'device_type': 'NPN'}).",
                "nullable": True,
            },
            "top_k": {"type": "integer", "default": 10},
            "context_chars": {"type": "integer", "default": 500},
            "doc_id": {"type": "string", "nullable": True},
        },
        "required": ["bucket", "query"],
    },
}
GET_DOCUMENT_METADATA = {
    "name": "get_document_metadata",
    "parameters": {
        "type": "object",
        "properties": {"doc_id": {"type": "string"}},
        "required": ["doc_id"],
    },
}
TOOLS = (SEARCH_TEXT, SEARCH_SEMANTIC, GET_DOCUMENT_METADATA)
TOOL_NAMES = tuple(tool["name"] for tool in TOOLS)

HIGH_RECALL_POOL = 100  # fetched per search leg before ranking cuts to top_k (spec: "fetch 100 hits")
MAX_TOOL_TOP_K = 20
CONTEXT_CHARS_RANGE = (50, 2000)
MAX_QUERY_CHARS = 500
PARTY_PROFILE_CHARS = 2000  # contracts name their parties in their opening
OUTSIDE_SCOPE = "The filters fall outside the request's scope: nothing to search."
_DOC_ID = re.compile(r"^(?:doc_)?([0-9]{1,18})$")
_TYPES = {"string": str, "integer": int, "object": dict}


class ToolError(Exception):
    """A tool call the agent got wrong (unknown tool or bucket, bad arguments): reported back to
    the planner as the call's result, never a failure of the request."""


@dataclass(frozen=True)
class Evidence:
    """One passage a tool returned, with the id the answer must cite it by."""

    passage: Passage
    step: int
    tool: str

    @property
    def doc_id(self) -> str:
        return doc_id_of(self.passage.document_id)

    def as_dict(self) -> dict:
        p = self.passage
        return {
            "doc_id": self.doc_id,
            "title": p.title,
            "page": p.page_start,
            "snippet": p.snippet,
            "score": round(p.rank_score, 4),
        }


@dataclass
class ToolResult:
    tool: str
    args: dict
    evidence: list[Evidence] = field(default_factory=list)
    matched_document_ids: list[int] = field(default_factory=list)  # among the high-recall candidates
    metadata: dict | None = None  # get_document_metadata's answer
    error: str | None = None
    note: str | None = None
    where: str = ""  # what was searched, in words ("“Distributor Agreement”", "the contracts")

    @property
    def summary(self) -> str:
        """The step in a sentence, as the staff UI shows it: "Searched “Distributor Agreement”
        for “governing law” (keywords): 8 passages."."""
        if self.error:
            return f"A {self.tool} call was refused: {self.error}"
        if self.tool == "get_document_metadata":
            title = (self.metadata or {}).get("title", "a document")
            return f"Read the details of “{title}”."
        how = "keywords" if self.tool == "search_text" else "meaning and keywords"
        count = len(self.evidence)
        found = f"{count} passage{'' if count == 1 else 's'}"
        query = self.args.get("query", "")
        sentence = f"Searched {self.where or 'the documents'} for “{query}” ({how}): {found}."
        return f"{sentence} {self.note}" if self.note else sentence

    def as_dict(self) -> dict:
        return {
            "tool": self.tool,
            "summary": self.summary,
            "args": self.args,
            "results": len(self.evidence),
            "documents_matched": len(self.matched_document_ids),
            "hits": [item.as_dict() for item in self.evidence],
            "metadata": self.metadata,
            "error": self.error,
            "note": self.note,
        }


def doc_id_of(document_id: int) -> str:
    return f"doc_{document_id}"


def document_pk(value) -> int | None:
    """42 for "doc_42", "42" or 42; None for anything else."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value if value > 0 else None
    match = _DOC_ID.match(str(value).strip()) if isinstance(value, str) else None
    return int(match[1]) if match else None


class AgentTools:
    """The three tools for one tenant and reader, within the request's `scope` (its filters;
    None: the whole tenant)."""

    def __init__(self, *, tenant: Tenant, reader: Reader | None = None, scope: SearchFilters | None = None):
        self.tenant = tenant
        self.reader = reader or Reader()
        self.scope = AgentScope.of(tenant, scope)

    def run(self, tool: str, args: dict, *, step: int = 0) -> ToolResult:
        """Run one tool call; bad calls come back as a result with `error` set."""
        result = ToolResult(tool=tool, args=dict(args) if isinstance(args, dict) else {})
        try:
            schema = _schema(tool)
            values = validate_args(schema, args)
            if tool == "get_document_metadata":
                result.metadata = self.document_metadata(values["doc_id"])
            else:
                self._search(result, values, step=step, mode=SEARCH_MODES[tool])
        except ToolError as exc:
            result.error = str(exc)
        return result

    def document_metadata(self, doc_id: str) -> dict:
        """get_document_metadata: the document's fields; ToolError when it is not in scope."""
        pk = document_pk(doc_id)
        document = self.scope.documents().select_related("case").filter(pk=pk).first() if pk else None
        if document is None:
            raise ToolError(f"No document {doc_id!r}.")
        return {
            "doc_id": doc_id_of(document.pk),
            "title": document.title,
            "file_name": document.original_filename,
            "case": document.case.name,
            "doc_type": document.doc_type,
            "source_type": document.source_type,
            "jurisdiction": document.jurisdiction,
            "date": document.document_date.isoformat() if document.document_date else None,
            "sensitivity": document.sensitivity,
            "pages": document.page_count,
            "status": document.status,
            "metadata": document.metadata,
        }

    def _search(self, result: ToolResult, values: dict, *, step: int, mode: str) -> None:
        asked, result.note = search_filters(
            self.scope, bucket=values["bucket"], filters=values.get("filters"), doc_id=values.get("doc_id")
        )
        result.where = self._where(asked, values["bucket"])
        if asked is None:  # a filter no document meets: nothing to search
            return
        filters = self.scope.narrow(asked)
        if filters is None:  # a call contradicting the request's scope never widens it
            result.note = OUTSIDE_SCOPE
            return
        found = retrieval.search(
            tenant=self.tenant,
            query=values["query"],
            mode=mode,
            filters=filters,
            candidate_pool=HIGH_RECALL_POOL,
        )
        result.matched_document_ids = list(dict.fromkeys(c.hit.document_id for c in found.candidates))
        # Within documents the agent has chosen, their best passages are the evidence, however
        # loosely they match the words; the threshold is for telling documents apart.
        threshold = 0.0 if asked.document_ids else None
        ranked = retrieval.rerank(
            retrieval.rank(found, top_k=values["top_k"], similarity_threshold=threshold)
        )
        passages = retrieval.passages(ranked, reader=self.reader, snippet_size=values["context_chars"])
        result.evidence = [Evidence(p, step, result.tool) for p in passages.passages]

    def _where(self, asked: SearchFilters | None, bucket: str) -> str:
        """What a search covers, in words: the documents' titles when it names up to two of the
        scope's documents, else its bucket."""
        ids = list(asked.document_ids or []) if asked is not None else []
        if ids and len(ids) <= 2:
            titles = list(self.scope.documents().filter(pk__in=ids).values_list("title", flat=True))
            if titles:
                return " and ".join(f"“{title}”" for title in titles)
        name = " ".join(str(bucket or "").split())
        if name.lower() in ("", "all", "*", "everything", "documents"):
            return "all the documents"
        doc_type = _doc_type_or_none(name.lower())
        if doc_type:
            return f"the {DocType(doc_type).label.lower()} documents"
        return f"the case “{name}”"


# search_text is keyword search. search_semantic is the spec's "high-recall fetch, rerank to
# top_k": the fetch takes vector candidates and keyword ones, and the rerank scores them with the
# plain pipeline's blended relevance (cosine and keyword), because cosine alone ranks the right
# clause of a named contract first far less often (LegalBench-RAG dev, agentic mode: P@1 16.7 %
# with cosine only, 21.6 % blended; R@8 80.3 % and 84.7 %).
SEARCH_MODES = {"search_text": "keyword", "search_semantic": "hybrid"}


def _schema(tool: str) -> dict:
    for schema in TOOLS:
        if schema["name"] == tool:
            return schema
    raise ToolError(f"Unknown tool {tool!r}; the tools are {', '.join(TOOL_NAMES)}.")


def validate_args(schema: dict, args) -> dict:
    """The call's arguments checked against the tool's JSON schema (types, required, no unknown
    names), defaults filled in and bounds applied; ToolError says what is wrong."""
    if not isinstance(args, dict):
        raise ToolError("Arguments must be an object.")
    properties = schema["parameters"]["properties"]
    unknown = sorted(set(args) - set(properties))
    if unknown:
        raise ToolError(f"Unknown argument(s) {', '.join(unknown)} for {schema['name']}.")
    values: dict[str, Any] = {}
    for name, spec in properties.items():
        value = args.get(name)
        if value is None:
            if name in schema["parameters"]["required"]:
                raise ToolError(f"{schema['name']} needs {name!r}.")
            values[name] = spec.get("default")
            continue
        expected = _TYPES[spec["type"]]
        if isinstance(value, bool) or not isinstance(value, expected):
            raise ToolError(f"{name!r} must be of type {spec['type']}.")
        values[name] = value
    if "query" in values:
        values["query"] = " ".join(values["query"].split())[:MAX_QUERY_CHARS]
        if not values["query"]:
            raise ToolError("'query' must not be empty.")
    if "top_k" in values:
        values["top_k"] = max(1, min(values["top_k"], MAX_TOOL_TOP_K))
    if "context_chars" in values:
        values["context_chars"] = max(
            CONTEXT_CHARS_RANGE[0], min(values["context_chars"], CONTEXT_CHARS_RANGE[1])
        )
    return values


# --- The filter bridge --------------------------------------------------------------------------


def search_filters(
    scope: AgentScope, *, bucket: str, filters: dict | None, doc_id=None
) -> tuple[SearchFilters | None, str | None]:
    """The SearchFilters a tool call asks for (a party among the documents in `scope`), and a note
    for the trace. None instead of filters when a filter matches no document at all (an unknown
    party): the search would find nothing. Raises ToolError for an unknown bucket or a malformed
    filter. The caller still intersects the filters with the scope (`AgentScope.narrow`)."""
    request: dict[str, Any] = {}
    _bucket_filters(scope, bucket, request)
    filters = dict(filters or {})
    if doc_id is not None:
        filters["doc_id"] = doc_id
    note = None
    metadata: dict[str, Any] = {}
    for key, value in filters.items():
        name = str(key).strip().lower()
        if name in ("doc_id", "document_id", "doc_ids", "document_ids"):
            ids = [document_pk(v) for v in _listed(value)]
            if None in ids:
                raise ToolError(f"{key!r}: document ids look like 'doc_42'.")
            request["document_ids"] = _intersect(request.get("document_ids"), ids)
        elif name in ("case", "case_id", "cases"):
            request["case_ids"] = _intersect(
                request.get("case_ids"), [_case_id(scope, v) for v in _listed(value)]
            )
        elif name in ("doc_type", "doc_types"):
            request["doc_types"] = [_doc_type(v) for v in _listed(value)]
        elif name in ("jurisdiction", "jurisdictions"):
            request["jurisdictions"] = [str(v) for v in _listed(value)]
        elif name in ("source_type", "source_types"):
            request["source_types"] = [str(v) for v in _listed(value)]
        elif name in ("year", "years"):
            request["years"] = _listed(value)
        elif name in ("date_from", "date_range_start", "after"):
            request["date_range_start"] = value
        elif name in ("date_to", "date_range_end", "before"):
            request["date_range_end"] = value
        elif name in ("party", "parties"):
            named = set()
            for party in _listed(value):
                named |= set(documents_naming(scope, str(party)))
            request["document_ids"] = _intersect(request.get("document_ids"), sorted(named))
            if not named:
                note = f"No document names the party {value!r}."
        else:
            metadata[str(key)] = value
    if metadata:
        request["metadata"] = metadata
    if request.get("document_ids") == [] or request.get("case_ids") == []:
        return None, note or "The filters leave no document to search."
    try:
        return SearchFilters.from_request(request), note
    except InvalidQuery as exc:
        raise ToolError(f"Bad filters: {exc.details}") from exc


def documents_naming(scope: AgentScope, party: str) -> list[int]:
    """Ids of the ready documents in scope whose title, file name, metadata or opening text
    names `party` (case-insensitive)."""
    party = " ".join(party.split())
    if len(party) < 2:
        return []
    return list(
        scope.documents()
        .filter(status=DocumentStatus.READY)
        .annotate(opening=Left("text", PARTY_PROFILE_CHARS))
        .filter(
            Q(title__icontains=party)
            | Q(original_filename__icontains=party)
            | Q(metadata__party__icontains=party)
            | Q(metadata__parties__icontains=party)
            | Q(opening__icontains=party)
        )
        .values_list("pk", flat=True)
    )


def bucket_names(scope: AgentScope) -> list[str]:
    """The buckets a planner may name: "all", the document types the scope allows, the names of
    the cases in scope."""
    allowed = scope.filters.doc_types
    types = [value for value in DocType.values if not allowed or value in allowed]
    return ["all", *types, *scope.cases().values_list("name", flat=True)]


def _bucket_filters(scope: AgentScope, bucket, request: dict) -> None:
    name = " ".join(str(bucket or "").split()).lower()
    if name in ("", "all", "*", "everything", "documents"):
        return
    doc_type = _doc_type_or_none(name)
    if doc_type:
        request["doc_types"] = [doc_type]
        return
    cases = scope.known_cases()  # a case walled off from the reader is as unknown as a missing one
    case = cases.filter(name__iexact=name).values_list("pk", flat=True).first()
    if case is None:
        raise ToolError(f"Unknown bucket {bucket!r}; use one of: {', '.join(bucket_names(scope))}.")
    request["case_ids"] = [case]


def _doc_type_or_none(name: str) -> str | None:
    name = name.strip().lower()
    for value, label in DocType.choices:
        forms = {value, value + "s", str(label).lower(), str(label).lower() + "s"}
        if name in forms:
            return value
    return None


def _doc_type(value) -> str:
    found = _doc_type_or_none(str(value))
    if found is None:
        raise ToolError(f"Unknown document type {value!r}; one of {', '.join(DocType.values)}.")
    return found


def _case_id(scope: AgentScope, value) -> int:
    cases = scope.known_cases()
    pk = value if isinstance(value, int) and not isinstance(value, bool) else None
    found = (
        (cases.filter(pk=pk) if pk else cases.filter(name__iexact=str(value).strip()))
        .values_list("pk", flat=True)
        .first()
    )
    if found is None:
        raise ToolError(f"Unknown case {value!r}.")
    return found


def _listed(value) -> list:
    return list(value) if isinstance(value, list | tuple) else [value]


def _intersect(current: list[int] | None, ids: list[int]) -> list[int]:
    return list(ids) if current is None else [pk for pk in current if pk in set(ids)]
