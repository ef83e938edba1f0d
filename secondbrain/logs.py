"""Log lines machines can parse: LOG_FORMAT=json writes one JSON object a line, `text` (the default,
what `make run` shows) the usual line with the event's fields after it as logfmt (`key=value`).

    logs.event(logger, "request", method="GET", route="api/sources", status=200, duration_ms=12.5)

An event's fields are facts about the work (ids, routes, durations, outcomes), never a person's content.
"""

import json
import logging
from datetime import UTC, datetime
from typing import Any


def event(logger: logging.Logger, name: str, **fields: Any) -> None:
    logger.info(name, extra={"fields": fields}, stacklevel=2)  # the caller's file and line, not this one's


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            **getattr(record, "fields", {}),
        }
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str)


class TextFormatter(logging.Formatter):
    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s: %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        line = super().format(record)
        fields = getattr(record, "fields", None)
        if not fields:
            return line
        head, newline, rest = line.partition("\n")  # a traceback stays below the fields
        return head + "".join(f" {key}={_logfmt(value)}" for key, value in fields.items()) + newline + rest


def _logfmt(value: Any) -> str:
    if value is None:
        return ""
    text = str(value)
    if text and not any(character in text for character in ' "=\\\n'):
        return text
    return json.dumps(text)
