"""Where time goes: named spans of a request's work, sent back as a `Server-Timing` header; the
request's own line in the log and its sample in the metrics; the stages of a longer piece of work.

    with timing.span("embed"):
        vector = embed_texts([query])

`ServerTimingMiddleware` (first in MIDDLEWARE) collects the spans of one request and adds
`Server-Timing: embed;dur=6.1, sql;dur=9.8, app;dur=21.4` to its response — `app` is the time from
the outermost middleware in to the response out. A browser's developer tools show the header, and
`bench/connections.py` reads it to split a search's time seen by the client into its parts. A span
outside a request (a Celery task, a benchmark calling the selectors) is not recorded in a header;
a span given a `metric` is observed in that histogram wherever it runs (secondbrain/metrics.py).
`span` works as a decorator too. The same middleware writes one log line per request (method,
route template, status, milliseconds, user id) and observes it in the request histogram.

`stages` times consecutive stages (an ingestion job's extracting, embedding, storing): `stage(name)`
ends the one before, from wherever the work is when it moves on.
"""

import logging
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from django.conf import settings
from django.contrib.auth.base_user import AbstractBaseUser
from django.http import HttpRequest, HttpResponse

from secondbrain import logs, metrics
from secondbrain.middleware import HEALTH_PATH

request_logger = logging.getLogger("secondbrain.request")

_spans: ContextVar[list[tuple[str, float]] | None] = ContextVar("server_timing_spans", default=None)


@contextmanager
def span(name: str, *, metric: str | None = None) -> Iterator[None]:
    spans = _spans.get()
    started = time.perf_counter()
    try:
        yield
    finally:
        seconds = time.perf_counter() - started
        if spans is not None:
            spans.append((name, seconds))
        if metric is not None:
            metrics.observe(metric, seconds)


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
        seconds = time.perf_counter() - started
        spans.append(("app", seconds))
        response["Server-Timing"] = ", ".join(f"{name};dur={seconds * 1000:.1f}" for name, seconds in spans)
        request_record(request, response, seconds)
        return response


METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})


def request_record(request: HttpRequest, response: HttpResponse, seconds: float) -> None:
    """The request's sample and log line. A streamed answer's time is until its first byte is ready.

    Labelled by route template, never by path: paths carry ids (and a query string a person's words)."""
    health = request.path == HEALTH_PATH
    record(
        route=request_route(request),
        method=request.method or "",
        status=response.status_code,
        seconds=seconds,
        user=None if health else _user_id(request),
        logged=not health,  # a container's health check every 10 s would drown the log
    )


def record(*, route: str, method: str, status: int, seconds: float, user: int | None, logged: bool = True) -> None:
    """One request's sample and log line, for Django's requests and the apps mounted beside it (/mcp)."""
    method = method if method in METHODS else "other"
    metrics.observe("http_request_duration_seconds", seconds, route=route, method=method, status=str(status))
    if not logged:
        return
    logs.event(
        request_logger,
        "request",
        method=method,
        route=route,
        status=status,
        duration_ms=round(seconds * 1000, 1),
        user=user,
    )


def request_route(request: HttpRequest) -> str:
    match = getattr(request, "resolver_match", None)
    if match is not None:
        return "/" + match.route
    if request.path == HEALTH_PATH:
        return HEALTH_PATH
    if request.path.startswith("/" + settings.STATIC_URL):
        return "/" + settings.STATIC_URL
    return "unmatched"


def _user_id(request: HttpRequest) -> int | None:
    """The signed-in user's id, if the request already loaded them: never a query of its own here (after
    a database outage's 503 the lazy user would ask the database again)."""
    for user in (request.__dict__.get("user"), getattr(request, "_cached_user", None)):
        # type(), not isinstance(): isinstance would load a lazy user to ask its class.
        if issubclass(type(user), AbstractBaseUser):
            return user.pk  # type: ignore[union-attr]
    return None


class Stages:
    """Consecutive stages of one piece of work: `enter` ends the stage before it (outcome "ok"), `end`
    the last one with the work's outcome; each ended stage goes to `ended(stage, seconds, outcome)`."""

    def __init__(self, ended: Callable[[str, float, str], None]) -> None:
        self.ended = ended
        self.started = time.perf_counter()
        self.current: tuple[str, float] | None = None

    def enter(self, name: str) -> None:
        if self.current is not None and self.current[0] == name:
            return
        self._close("ok")
        self.current = (name, time.perf_counter())

    def end(self, outcome: str) -> float:
        """End the last stage; the seconds since the work began."""
        self._close(outcome)
        return time.perf_counter() - self.started

    def _close(self, outcome: str) -> None:
        if self.current is not None:
            name, started = self.current
            self.current = None
            self.ended(name, time.perf_counter() - started, outcome)


_stages: ContextVar[Stages | None] = ContextVar("timing_stages", default=None)


@contextmanager
def stages(ended: Callable[[str, float, str], None]) -> Iterator[Stages]:
    clock = Stages(ended)
    token = _stages.set(clock)
    try:
        yield clock
    finally:
        _stages.reset(token)


def stage(name: str) -> None:
    """Move the work being timed (if any) on to stage `name`."""
    clock = _stages.get()
    if clock is not None:
        clock.enter(name)
