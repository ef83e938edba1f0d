"""Counters and histograms that every process adds to, kept in Redis and served at /metrics in
Prometheus's text format (when METRICS_ENABLED).

    metrics.observe("search_duration_seconds", 0.042)
    metrics.count("model_tokens", 812, model="qwen", direction="in")

Why Redis and not prometheus_client's multiprocess mode: the web server, each Celery worker child
and beat are separate processes, and under docker compose separate containers, each with its own
/tmp and its own pid 1. Multiprocess mode needs one directory shared by all of them, files named by
pid (two containers' pid 1 would write the same file) and a wipe at every start; Redis is already
the one thing all of them share (the broker, the rate counters), in `make run` and in compose alike.
A sample costs one pipelined round trip (HINCRBY on its bucket, its count and its sum). Counts live
as long as Redis does; a Redis restart resets them, which Prometheus reads as a counter reset.
prometheus_client writes the exposition (its escaping, cumulative buckets, `_total` and `_count`).
"""

import functools
import json
import logging
import secrets
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

import redis
from django.conf import settings
from django.http import HttpRequest
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily, Metric
from redis.exceptions import RedisError

logger = logging.getLogger(__name__)

KEY = "secondbrain:metrics"
NAMESPACE = "secondbrain"
FAST = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
SLOW = (0.1, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0, 900.0, 1800.0, 3600.0, 3 * 3600.0)


@dataclass(frozen=True)
class Definition:
    type: Literal["counter", "histogram"]
    help: str
    labels: tuple[str, ...] = ()
    buckets: tuple[float, ...] = FAST


DEFINITIONS = {
    "http_request_duration_seconds": Definition(
        "histogram", "Requests answered by Django, by route template, method and status.", ("route", "method", "status")
    ),
    "job_duration_seconds": Definition(
        "histogram", "Ingestion job runs (one attempt each) by source kind and outcome.", ("kind", "outcome"), SLOW
    ),
    "job_stage_duration_seconds": Definition(
        "histogram", "Stages of ingestion jobs by source kind, stage and outcome.", ("kind", "stage", "outcome"), SLOW
    ),
    "search_duration_seconds": Definition("histogram", "Retrievals of passages for a query or a question."),
    "model_first_token_seconds": Definition(
        "histogram", "Time from asking the chat model to its first token.", ("model",)
    ),
    "model_answer_seconds": Definition(
        "histogram", "Time from asking the chat model to its whole answer, by outcome.", ("model", "outcome")
    ),
    "model_tokens": Definition(
        "counter",
        "Tokens sent to and received from the chat model; `counted` says whether the server reported them.",
        ("model", "direction", "counted"),
    ),
}


@functools.cache
def _client(url: str) -> redis.Redis:
    # Short timeouts: a sample is never worth holding a request up for.
    return redis.Redis.from_url(url, socket_timeout=1, socket_connect_timeout=1, decode_responses=True)


def _field(name: str, labels: dict[str, str], part: str) -> str:
    definition = DEFINITIONS[name]
    return json.dumps([name, [str(labels[label]) for label in definition.labels], part])


def count(name: str, amount: float = 1, **labels: str) -> None:
    """Add `amount` to a counter (nothing when METRICS_ENABLED is off)."""
    if settings.METRICS_ENABLED:
        _write({_field(name, labels, "value"): amount})


def observe(name: str, seconds: float, **labels: str) -> None:
    """Add one sample to a histogram (nothing when METRICS_ENABLED is off)."""
    if not settings.METRICS_ENABLED:
        return
    buckets = DEFINITIONS[name].buckets
    bucket = next((str(bound) for bound in buckets if seconds <= bound), "+Inf")
    _write({_field(name, labels, bucket): 1, _field(name, labels, "count"): 1, _field(name, labels, "sum"): seconds})


def _write(increments: dict[str, float]) -> None:
    try:
        pipeline = _client(settings.REDIS_URL).pipeline(transaction=False)
        for field, amount in increments.items():
            pipeline.hincrbyfloat(KEY, field, amount)
        pipeline.execute()
    except RedisError as exc:  # the app goes on; the sample is lost
        logger.warning("metrics: a sample was not recorded: %r", exc)


def scrape_allowed(request: HttpRequest) -> bool:
    """With METRICS_TOKEN set, only a request bearing it; without, only one from this machine (loopback)."""
    if settings.METRICS_TOKEN:
        sent = request.headers.get("Authorization", "").removeprefix("Bearer ").strip()
        return secrets.compare_digest(sent.encode(), settings.METRICS_TOKEN.encode())
    return request.META.get("REMOTE_ADDR") in {"127.0.0.1", "::1"}


def exposition() -> bytes:
    """Every counter and histogram, in Prometheus's text format."""
    stored = _client(settings.REDIS_URL).hgetall(KEY)
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Stored({str(key): float(value) for key, value in stored.items()}))
    return generate_latest(registry)


class _Stored:
    """A prometheus_client collector over the values read from Redis."""

    def __init__(self, values: dict[str, float]) -> None:
        self.values = values

    def collect(self) -> Iterator[Metric]:
        series: dict[str, dict[tuple[str, ...], dict[str, float]]] = defaultdict(lambda: defaultdict(dict))
        for field, value in self.values.items():
            name, label_values, part = json.loads(field)
            if name in DEFINITIONS:
                series[name][tuple(label_values)][part] = value
        for name, definition in DEFINITIONS.items():
            full = f"{NAMESPACE}_{name}"
            if definition.type == "counter":
                counter = CounterMetricFamily(full, definition.help, labels=definition.labels)
                for labels, parts in series[name].items():
                    counter.add_metric(list(labels), parts.get("value", 0.0))
                yield counter
                continue
            histogram = HistogramMetricFamily(full, definition.help, labels=definition.labels)
            for labels, parts in series[name].items():
                histogram.add_metric(list(labels), _cumulative(definition.buckets, parts), parts.get("sum", 0.0))
            yield histogram


def _cumulative(buckets: tuple[float, ...], parts: dict[str, float]) -> list[tuple[str, float]]:
    running, cumulative = 0.0, []
    for bound in [*map(str, buckets), "+Inf"]:
        running += parts.get(bound, 0.0)
        cumulative.append((bound, running))
    return cumulative
