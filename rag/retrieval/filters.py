"""Search filters: validated from a request, applied as one `Q` inside the search SQL."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from datetime import date, datetime
from types import MappingProxyType
from typing import Any

from django.db.models import Q

from rag.models import DocType, Sensitivity, SourceType
from ragsite.exceptions import InvalidQuery

MAX_VALUES = 500  # per list filter; a bound on the size of the SQL a request can make
MAX_METADATA_KEY_LENGTH = 100
_INTEGER = re.compile(r"-?[0-9]{1,18}")
MAX_ID = 2**63 - 1  # bigint
_SCALARS = (str, int, float, bool)


@dataclass(frozen=True)
class Visibility:
    """What one reader may see, applied inside the search SQL with the request's filters, so text
    they may not read is never searched, scored, routed to or counted (no side channel).

    `readable_confidential`: the confidential documents they may read (None: every one, as for
    admins); the chunks of any other confidential document are left out. `withheld`: the
    confidential documents they may not read when they asked (what `redactions_applied` reports,
    whatever the question). `walled_case_ids`: cases behind an ethical wall they are not on; every
    chunk of those is left out."""

    readable_confidential: frozenset[int] | None = None
    withheld: frozenset[int] = frozenset()
    walled_case_ids: frozenset[int] = frozenset()

    def __post_init__(self):
        if self.readable_confidential is not None:
            object.__setattr__(self, "readable_confidential", frozenset(self.readable_confidential))
        object.__setattr__(self, "withheld", frozenset(self.withheld))
        object.__setattr__(self, "walled_case_ids", frozenset(self.walled_case_ids))

    def restricts(self) -> bool:
        return self.readable_confidential is not None or bool(self.walled_case_ids)

    def joined(self, other: Visibility | None) -> Visibility:
        """What both allow (a narrowing never widens what a reader sees)."""
        if other is None:
            return self
        mine, theirs = self.readable_confidential, other.readable_confidential
        readable = theirs if mine is None else mine if theirs is None else mine & theirs
        return Visibility(
            readable, self.withheld | other.withheld, self.walled_case_ids | other.walled_case_ids
        )

    def digest(self) -> str:
        """A stable text naming what this reader sees (the answer cache's key includes it)."""
        readable = "all" if self.readable_confidential is None else sorted(self.readable_confidential)
        return f"readable={readable};walled={sorted(self.walled_case_ids)}"

    def as_q(self) -> Q:
        """The visible chunks as one `Q` over `Chunk` (its copied `sensitivity` and `case_id`)."""
        return self._visible("document_id")

    def as_document_q(self) -> Q:
        """The visible documents as one `Q` over `Document` (as `as_q` is over their chunks)."""
        return self._visible("pk")

    def _visible(self, document_field: str) -> Q:
        q = Q()
        if self.readable_confidential is not None:
            readable = sorted(self.readable_confidential)
            q &= ~Q(sensitivity=Sensitivity.CONFIDENTIAL) | Q(**{f"{document_field}__in": readable})
        if self.walled_case_ids:
            q &= ~Q(case_id__in=sorted(self.walled_case_ids))
        return q


@dataclass(frozen=True)
class SearchFilters:
    """Restrictions on which chunks a search may return; empty fields do not restrict.

    Within a field the values are alternatives (OR); different fields must all hold (AND).
    `metadata` maps a key of `Document.metadata` to a value or a list of accepted values; a
    document matches when its value equals one of them or, if its value is a list, contains one.
    Integers and integer strings are interchangeable ({"year": 2023} matches 2023 and "2023").
    A date range excludes documents without a date; jurisdictions compare case-insensitively.
    """

    date_range_start: date | None = None
    date_range_end: date | None = None
    jurisdictions: tuple[str, ...] = ()
    doc_types: tuple[str, ...] = ()
    source_types: tuple[str, ...] = ()
    case_ids: tuple[int, ...] = ()
    document_ids: tuple[int, ...] = ()
    years: tuple[int, ...] = ()  # the document's date in one of these years, or its metadata "year"
    metadata: Mapping[str, Any] = field(default_factory=dict, hash=False)
    # Set by the server from the caller (rag.pipeline.scope), never from a request.
    visibility: Visibility | None = field(default=None, repr=False)

    def __post_init__(self):
        # Frozen means frozen: lists become tuples and the metadata mapping read-only.
        for name in ("jurisdictions", "doc_types", "source_types", "case_ids", "document_ids", "years"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
        object.__setattr__(self, "metadata", MappingProxyType(dict(self.metadata)))

    @classmethod
    def from_request(cls, data: Mapping | None) -> SearchFilters:
        """Validate request input (JSON-like) into filters; `InvalidQuery` lists every bad field."""
        if data is None:
            return cls()
        if not isinstance(data, Mapping):
            raise InvalidQuery("Filters must be an object.", details={"filters": "Must be an object."})
        errors: dict[str, str] = {}
        known = {f.name for f in fields(cls)} - {"visibility"}
        for key in data:
            if key not in known:
                errors[str(key)] = "Unknown filter."
        values = {
            "date_range_start": _date(data.get("date_range_start"), "date_range_start", errors),
            "date_range_end": _date(data.get("date_range_end"), "date_range_end", errors),
            "jurisdictions": _strings(data.get("jurisdictions"), "jurisdictions", errors),
            "doc_types": _strings(data.get("doc_types"), "doc_types", errors, choices=DocType.values),
            "source_types": _strings(
                data.get("source_types"), "source_types", errors, choices=SourceType.values
            ),
            "case_ids": _ids(data.get("case_ids"), "case_ids", errors),
            "document_ids": _ids(data.get("document_ids"), "document_ids", errors),
            "years": _years(data.get("years"), errors),
            "metadata": _metadata(data.get("metadata"), errors),
        }
        start, end = values["date_range_start"], values["date_range_end"]
        if start and end and start > end:
            errors["date_range_start"] = "Must not be after date_range_end."
        if errors:
            raise InvalidQuery("Some filters are not valid.", details=errors)
        return cls(**values)

    def is_empty(self) -> bool:
        """Whether nothing restricts the search: no filter, and the reader sees everything."""
        hidden = self.visibility is not None and self.visibility.restricts()
        return not hidden and dataclasses.replace(self, visibility=None) == SearchFilters()

    def seen_by(self, visibility: Visibility | None) -> SearchFilters:
        """These filters for a reader who sees `visibility` (joined with any visibility they hold)."""
        if visibility is None:
            return self
        joined = visibility.joined(self.visibility)
        return dataclasses.replace(self, visibility=joined)

    def narrowed(self, other: SearchFilters) -> SearchFilters | None:
        """The filters `self` and `other` both impose: `other` can narrow `self`, never widen it.

        Date ranges overlap, list fields and each metadata key keep the values both accept (a field
        one side leaves empty takes the other's). None when they contradict, so that no document
        can meet both (disjoint ids, types, years or values, or a range ending before it starts).
        Intersecting accepted values errs narrow in one corner: a document meeting each side with
        a different value (two values in a metadata list, or a date's year and a metadata "year")
        meets both filters but not their intersection."""
        start = max(filter(None, (self.date_range_start, other.date_range_start)), default=None)
        end = min(filter(None, (self.date_range_end, other.date_range_end)), default=None)
        if start and end and start > end:
            return None
        values: dict[str, Any] = {
            name: _common(getattr(self, name), getattr(other, name))
            for name in ("doc_types", "source_types", "case_ids", "document_ids", "years")
        }
        values["jurisdictions"] = _common(self.jurisdictions, other.jurisdictions, key=str.casefold)
        metadata = {**self.metadata, **other.metadata}
        for key in self.metadata.keys() & other.metadata.keys():
            metadata[key] = _common(
                _variants(self.metadata[key]), _variants(other.metadata[key]), key=lambda v: (type(v), v)
            )
        if any(value is None for value in (*values.values(), *metadata.values())):
            return None
        visibility = self.visibility.joined(other.visibility) if self.visibility else other.visibility
        return SearchFilters(
            date_range_start=start, date_range_end=end, metadata=metadata, visibility=visibility, **values
        )

    def as_q(self) -> Q:
        """The filters as one `Q` over `Chunk`: copied fields are the chunk's own columns, metadata
        joins the chunk's document in the same query (JSONB containment, `@>`)."""
        q = Q()
        if self.date_range_start:
            q &= Q(document_date__gte=self.date_range_start)
        if self.date_range_end:
            q &= Q(document_date__lte=self.date_range_end)
        if self.jurisdictions:
            # Free text typed by people: "Colorado" and "colorado" are the same jurisdiction.
            q &= _any(Q(jurisdiction__iexact=value) for value in self.jurisdictions)
        if self.doc_types:
            q &= Q(doc_type__in=self.doc_types)
        if self.source_types:
            q &= Q(source_type__in=self.source_types)
        if self.case_ids:
            q &= Q(case_id__in=self.case_ids)
        if self.document_ids:
            q &= Q(document_id__in=self.document_ids)
        if self.years:
            # A year is a date's or, for documents filed without one, a metadata field's.
            q &= _any(
                Q(document_date__year=year) | _metadata_q("year", year) | _metadata_q("year", str(year))
                for year in self.years
            )
        for key, accepted in self.metadata.items():
            q &= _any(_metadata_q(key, value) for value in _variants(accepted))
        if self.visibility is not None:
            q &= self.visibility.as_q()
        return q


def _common(mine, theirs, *, key=None):
    """The values of `mine` that `theirs` accepts too (compared by `key`); either side when the other
    is empty (no restriction); None when both restrict and share nothing."""
    if not mine or not theirs:
        return tuple(mine or theirs)
    key = key or (lambda value: value)
    accepted = {key(value) for value in theirs}
    common = tuple(value for value in mine if key(value) in accepted)
    return common or None


def _any(qs) -> Q:
    result = Q()
    for q in qs:
        result |= q
    return result


def _metadata_q(key: str, value) -> Q:
    # `{"k": v}` is contained in {"k": v}; `{"k": [v]}` in {"k": [..., v, ...]}. The key is never
    # part of a lookup path, so "a__b" or "a.b" are plain keys.
    return Q(document__metadata__contains={key: value}) | Q(document__metadata__contains={key: [value]})


def _variants(accepted) -> list:
    values = list(accepted) if isinstance(accepted, list | tuple) else [accepted]
    result = []
    for value in values:
        result.append(value)
        if isinstance(value, int) and not isinstance(value, bool):
            result.append(str(value))
        elif isinstance(value, str) and _INTEGER.fullmatch(value.strip()):
            result.append(int(value))
    # 1 == True in Python, but not in JSON: deduplicate by type and value.
    return list({(type(v), v): v for v in result}.values())


def _date(value, name: str, errors: dict) -> date | None:
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    if isinstance(value, str):
        try:
            return date.fromisoformat(value.strip())
        except ValueError:
            pass
    errors[name] = "Must be a date in the form YYYY-MM-DD."
    return None


def _listed(value, name: str, errors: dict) -> list | None:
    """A list of values from a list/tuple or a single value; None when absent or invalid."""
    if value is None:
        return []
    items = list(value) if isinstance(value, list | tuple) else [value]
    if len(items) > MAX_VALUES:
        errors[name] = f"At most {MAX_VALUES} values."
        return None
    return items


def _strings(value, name: str, errors: dict, *, choices=None) -> tuple[str, ...]:
    items = _listed(value, name, errors)
    if items is None:
        return ()
    if not all(isinstance(item, str) and item.strip() for item in items):
        errors[name] = "Must be a list of non-empty strings."
        return ()
    if any("\x00" in item for item in items):
        errors[name] = "Must not contain NUL characters."
        return ()
    items = [item.strip() for item in items]
    if choices is not None:
        unknown = [item for item in items if item not in choices]
        if unknown:
            errors[name] = f"Unknown value(s) {', '.join(map(repr, unknown))}; allowed: {', '.join(choices)}."
            return ()
    return tuple(dict.fromkeys(items))


def _ids(value, name: str, errors: dict) -> tuple[int, ...]:
    return _integers(value, name, errors, 1, MAX_ID, "Must be a list of positive integer ids.")


def _years(value, errors: dict) -> tuple[int, ...]:
    return _integers(value, "years", errors, 1000, 9999, "Must be a list of four-digit years.")


def _integers(value, name: str, errors: dict, low: int, high: int, message: str) -> tuple[int, ...]:
    """A list of integers in low..high (integer strings accepted), without repeats."""
    items = _listed(value, name, errors)
    if items is None:
        return ()
    numbers = []
    for item in items:
        if isinstance(item, str) and _INTEGER.fullmatch(item.strip()):
            item = int(item)
        if isinstance(item, bool) or not isinstance(item, int) or not low <= item <= high:
            errors[name] = message
            return ()
        numbers.append(item)
    return tuple(dict.fromkeys(numbers))


def _metadata(value, errors: dict) -> dict:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        errors["metadata"] = "Must be an object of key → value or list of values."
        return {}
    result = {}
    for key, accepted in value.items():
        if not isinstance(key, str) or not key or len(key) > MAX_METADATA_KEY_LENGTH:
            errors["metadata"] = (
                f"Keys must be non-empty strings of at most {MAX_METADATA_KEY_LENGTH} characters."
            )
            return {}
        values = list(accepted) if isinstance(accepted, list | tuple) else [accepted]
        if not values or len(values) > MAX_VALUES:
            errors["metadata"] = f"{key!r}: give 1 to {MAX_VALUES} values."
            return {}
        if not all(isinstance(v, _SCALARS) for v in values):
            errors["metadata"] = f"{key!r}: values must be strings, numbers or booleans (a flat object)."
            return {}
        result[key] = accepted if isinstance(accepted, _SCALARS) else values
    return result
