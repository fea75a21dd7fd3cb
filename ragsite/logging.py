"""Structured logging: one JSON object per line, always carrying the current request id."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime

from ragsite.request_id import get_request_id

# Attributes every LogRecord has, plus Django's `request`; anything else came through `extra=`
# and is emitted as-is.
_STANDARD_ATTRS = set(vars(logging.makeLogRecord({}))) | {"message", "asctime", "request_id", "request"}


class RequestIdFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if not getattr(record, "request_id", None):
            # django.request logs after the middleware has unbound the id; take it from the request.
            from_request = getattr(getattr(record, "request", None), "request_id", None)
            record.request_id = from_request or get_request_id() or "-"
        return True


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "timestamp": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            "request_id": getattr(record, "request_id", None) or get_request_id(),
        }
        for key, value in vars(record).items():
            if key not in _STANDARD_ATTRS and not key.startswith("_"):
                entry[key] = value
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str)
