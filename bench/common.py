"""Shared set-up for benchmarks: Django against a throw-away database of its own."""

import os
import statistics
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any


def setup_django() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "secondbrain.settings")
    # A benchmark is one person asking and adding far faster than anyone would, on a fresh database
    # whose ids repeat those of the last run: the per-person rates would measure themselves. The web
    # servers benchmarks start inherit this environment.
    for rule in ("ASK", "UPLOAD", "TOKEN", "SIGNUP_ADDRESS"):
        os.environ.setdefault(f"RATE_LIMIT_{rule}", "off")
    os.environ.setdefault("SIGNUP_OPEN", "true")
    import django

    django.setup()


@contextmanager
def bench_database() -> Iterator[None]:
    """A fresh database `bench_<name>_<pid>` for the run, dropped afterwards (like pytest-django's): two
    benchmarks may run at once."""
    from django.db import connection

    connection.settings_dict["TEST"]["NAME"] = f"bench_{connection.settings_dict['NAME']}_{os.getpid()}"
    original = connection.settings_dict["NAME"]
    connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False)
    try:
        yield
    finally:
        connection.creation.destroy_test_db(original, verbosity=0)


def timed(function: Callable[[], Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    result = function()
    return time.perf_counter() - started, result


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(share * (len(ordered) - 1))))]


def summary(values: list[float]) -> str:
    return f"p50 {statistics.median(values) * 1000:.1f} ms, p95 {percentile(values, 0.95) * 1000:.1f} ms"
