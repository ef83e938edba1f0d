"""Search through HTTP, and the database connections it takes, for each way of holding connections.

    python -m bench connections                      the pool against a connection per request
    python -m bench connections --before e52429d     … and the code of that commit (connections kept
                                                       per thread for 60 s), from a git worktree

One bench database and one Celery worker thread; for each variant a daphne of its own on that
database (started as `make run` starts it), in rounds so that drift on a shared machine hits every
variant alike. Each round asks LoCoMo questions one after another (search p50/p95), then a burst of
them at once (p50/p95, failures), while pg_stat_activity is sampled for the variant's connections.
"""

import argparse
import contextlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from bench.common import percentile

BASE_DIR = Path(__file__).resolve().parent.parent
ROUNDS = 2


@dataclass
class Variant:
    name: str
    env: dict[str, str]
    code_dir: Path = BASE_DIR
    sequential: list[float] = field(default_factory=list)
    burst: list[float] = field(default_factory=list)
    failures: int = 0
    peak_connections: int = 0


@contextlib.contextmanager
def checkout(revision: str) -> Iterator[Path]:
    """The tree of `revision` in a temporary git worktree, removed afterwards."""
    folder = Path(tempfile.mkdtemp(prefix="bench-before-"))
    subprocess.run(["git", "worktree", "add", "--detach", str(folder), revision], cwd=BASE_DIR, check=True,
                   capture_output=True)  # fmt: skip
    try:
        yield folder
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(folder)], cwd=BASE_DIR, check=False)
        shutil.rmtree(folder, ignore_errors=True)


@contextlib.contextmanager
def web(variant: Variant, database_url: str) -> Iterator[str]:
    from secondbrain.stack import free_port, http_answers, web_command

    port = free_port()
    # The models of this checkout, also for the code of another commit checked out elsewhere.
    models = str(BASE_DIR / "var" / "models")
    env = {**os.environ, "MODELS_DIR": models, **variant.env, "DATABASE_URL": database_url, "PGAPPNAME": "bench-web"}
    with tempfile.TemporaryFile("w+") as log:
        server = subprocess.Popen(
            web_command("127.0.0.1", port),
            cwd=variant.code_dir, env=env, stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 60
            while not http_answers(f"{url}/accounts/login/", any_status=True):
                if server.poll() is not None or time.monotonic() > deadline:
                    log.seek(0)
                    raise RuntimeError(f"{variant.name}: daphne did not start\n{log.read()[-3000:]}")
                time.sleep(0.2)
            yield url
        finally:
            server.kill()
            server.wait(timeout=20)


@contextlib.contextmanager
def in_process() -> Iterator[str]:
    """A bench database, a Celery worker thread and daphne as `make run` starts it: the app's URL."""
    from celery.contrib.testing.worker import start_worker
    from django.db import connection

    from bench.common import bench_database, setup_django

    setup_django()
    with bench_database():
        from secondbrain.celery import app

        with (
            start_worker(app, pool="solo", perform_ping_check=False, queues=["ingest"], loglevel="WARNING"),
            web(Variant("app", {}), database_url(connection.settings_dict)) as url,
        ):
            yield url


def database_url(db: dict[str, object]) -> str:
    """The URL of the database Django is connected to (`connection.settings_dict`), for a daphne of its own."""
    return f"postgresql://{db['USER']}@/{db['NAME']}?host={db['HOST']}"


class Peak:
    """The most connections named `bench-web` seen while the block runs (sampled every 50 ms)."""

    def __init__(self, database: str, conninfo: dict[str, object]) -> None:
        self.database, self.conninfo, self.value = database, conninfo, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        import psycopg

        with psycopg.connect(autocommit=True, **self.conninfo) as conn:  # type: ignore[arg-type]
            while not self._stop.is_set():
                row = conn.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND application_name = 'bench-web'",
                    [self.database],
                ).fetchone()
                self.value = max(self.value, row[0] if row else 0)
                self._stop.wait(0.05)

    def __enter__(self) -> "Peak":
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join(timeout=10)


def search(url: str, token: str, question: str) -> tuple[float, bool]:
    from bench.locomo import HttpApi

    query = urllib.parse.urlencode({"q": question, "k": 10})
    started = time.perf_counter()
    try:
        status, _ = HttpApi(url).request("GET", f"/api/search?{query}", token=token)
    except (OSError, ValueError):
        status = 0
    return time.perf_counter() - started, status == 200


def measure(variant: Variant, url: str, token: str, questions: list[str], *, burst: int, peak: Peak) -> None:
    with peak:
        for question in questions:
            seconds, ok = search(url, token, question)
            variant.sequential.append(seconds)
            variant.failures += not ok
        with ThreadPoolExecutor(burst) as pool:
            results = list(pool.map(lambda q: search(url, token, q), (questions * burst)[:burst]))
    variant.burst.extend(seconds for seconds, _ in results)
    variant.failures += sum(not ok for _, ok in results)
    variant.peak_connections = max(variant.peak_connections, peak.value)


def line(variant: Variant, baseline: Variant | None) -> str:
    seq_p50, seq_p95 = statistics.median(variant.sequential), percentile(variant.sequential, 0.95)
    text = (
        f"  {variant.name:<44} sequential p50 {seq_p50 * 1000:6.1f} ms, p95 {seq_p95 * 1000:6.1f} ms · "
        f"burst of {len(variant.burst) // max(1, ROUNDS)} p50 {statistics.median(variant.burst):5.2f} s, "
        f"p95 {percentile(variant.burst, 0.95):5.2f} s · failed {variant.failures} · "
        f"peak connections {variant.peak_connections}"
    )
    if baseline is not None and baseline is not variant:
        ratio = seq_p50 / statistics.median(baseline.sequential)
        text += f" · p50 {ratio:.2f}× {baseline.name.split(':')[0]}"
    return text


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench connections", description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", metavar="REV", help="also measure the code of this commit (from a git worktree)")
    parser.add_argument("--questions", type=int, default=150, help="asked one after another, per round")
    parser.add_argument("--burst", type=int, default=200, help="asked at once, per round")
    args = parser.parse_args(argv or [])

    from celery.contrib.testing.worker import start_worker
    from django.db import connection

    from bench.common import bench_database, setup_django
    from bench.locomo import HttpApi, conversations, ingest

    setup_django()
    variants = [
        Variant("pool (DB_POOL_MAX_SIZE=10, the default)", {}),
        Variant("no pool (a connection per request)", {"DB_POOL_MAX_SIZE": "0"}),
    ]
    with contextlib.ExitStack() as stack, bench_database():
        if args.before:
            folder = stack.enter_context(checkout(args.before))
            variants.append(Variant(f"before: {args.before}, kept per thread 60 s", {"DB_CONN_MAX_AGE": "60"}, folder))
        from secondbrain.celery import app

        stack.enter_context(start_worker(app, pool="solo", perform_ping_check=False, queues=["ingest"],
                                         loglevel="WARNING"))  # fmt: skip
        db = connection.settings_dict
        url_of_db = database_url(db)
        conninfo = {"dbname": "postgres", "host": db["HOST"], "user": db["USER"]}
        conversation = conversations()[0]
        questions = [question.text for question in conversation.questions][: args.questions]
        with web(variants[0], url_of_db) as url:
            token = ingest(HttpApi(url), conversation)
        print(f"{len(conversation.sessions)} notes of LoCoMo {conversation.sample_id}; "
              f"{len(questions)} questions one after another, then {args.burst} at once; {ROUNDS} rounds")  # fmt: skip
        for _ in range(ROUNDS):
            for variant in variants:
                with web(variant, url_of_db) as url:
                    search(url, token, questions[0])  # the embedding model loads
                    measure(variant, url, token, questions, burst=args.burst, peak=Peak(str(db["NAME"]), conninfo))
    baseline = variants[-1] if args.before else variants[1]
    print("search through HTTP (GET /api/search, k 10):")
    for variant in variants:
        print(line(variant, baseline))


if __name__ == "__main__":
    main(sys.argv[1:])
