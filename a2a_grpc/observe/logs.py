"""Log lines as text (the default) or JSON, one object a line, for log
collectors. Each JSON line carries the trace and span ids of the span
current when it was logged (when tracing is on and a span is), so a line
can be found from its trace and the other way round."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from typing import Any

from opentelemetry import trace

TEXT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
# LogRecord's own attributes: anything else on a record came from `extra=`.
_STANDARD = frozenset(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {"message",
                                                                             "asctime"}


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        span = trace.get_current_span().get_span_context()
        if span.is_valid:
            out["trace_id"] = format(span.trace_id, "032x")
            out["span_id"] = format(span.span_id, "016x")
        for key, value in vars(record).items():
            if key not in _STANDARD and not key.startswith("_"):
                out[key] = value if isinstance(value, (str, int, float, bool)) else repr(value)
        if record.exc_info:
            out["exception"] = self.formatException(record.exc_info)
        if record.stack_info:
            out["stack"] = self.formatStack(record.stack_info)
        return json.dumps(out, ensure_ascii=False)


def setup(level: str, fmt: str = "text", worker: int | None = None) -> None:
    """Log to stderr at `level` as `fmt` ("text" or "json"); `worker`: the
    worker of `serve --workers` this process is, named on each line."""
    handler = logging.StreamHandler()
    text = TEXT if worker is None else TEXT.replace("%(name)s", f"worker-{worker} %(name)s")
    handler.setFormatter(JsonFormatter() if fmt == "json" else logging.Formatter(text))
    if worker is not None:
        def named(record: logging.LogRecord) -> bool:
            record.worker = worker
            return True

        handler.addFilter(named)
    logging.basicConfig(level=level.upper(), handlers=[handler], force=True)
