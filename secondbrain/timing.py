"""Where a request's time goes: named spans of the work, sent back as a `Server-Timing` header.

    with timing.span("embed"):
        vector = embed_texts([query])

`ServerTimingMiddleware` (first in MIDDLEWARE) collects the spans of one request and adds
`Server-Timing: embed;dur=6.1, sql;dur=9.8, app;dur=21.4` to its response — `app` is the time from
the outermost middleware in to the response out. A browser's developer tools show the header, and
`bench/connections.py` reads it to split a search's time seen by the client into its parts. A span
outside a request (a Celery task, a benchmark calling the selectors) is not recorded.
"""

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from django.http import HttpRequest, HttpResponse

_spans: ContextVar[list[tuple[str, float]] | None] = ContextVar("server_timing_spans", default=None)


@contextmanager
def span(name: str) -> Iterator[None]:
    spans = _spans.get()
    started = time.perf_counter()
    try:
        yield
    finally:
        if spans is not None:
            spans.append((name, time.perf_counter() - started))


class ServerTimingMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        spans: list[tuple[str, float]] = []
        token = _spans.set(spans)
        started = time.perf_counter()
        try:
            response = self.get_response(request)
        finally:
            _spans.reset(token)
        spans.append(("app", time.perf_counter() - started))
        response["Server-Timing"] = ", ".join(f"{name};dur={seconds * 1000:.1f}" for name, seconds in spans)
        return response
