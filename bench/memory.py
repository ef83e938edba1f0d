"""The worker's peak memory on one large note (issue 21): `python -m bench memory [--mb 50] [--model]`.

The job runs in a process of its own (`python -m bench memory --child …`), which reports its peak
resident size (VmHWM in /proc/self/status) once the embedder is loaded and again after the job, so the
difference is what the job itself needed. By default the passages are embedded by a stand-in
OpenAI-compatible server in this process that answers each text with one of 1,024 random unit
vectors: a 50 MB note is ~220,000 passages, which the local model takes well over an hour to embed on
two cores, and what the worker holds per vector is the same either way. `--model` uses the configured
embedder instead (keep `--mb` small then).
"""

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np

from bench.common import bench_database, setup_django

DIMENSIONS = 384


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench memory")
    parser.add_argument("--mb", type=float, default=50.0, help="size of the note in MB")
    parser.add_argument("--model", action="store_true", help="embed with the configured model, not a stand-in")
    parser.add_argument("--child", nargs=2, metavar=("DATABASE", "JOB_ID"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        _child(args.child[0], int(args.child[1]))
        return
    setup_django()
    with bench_database(), _embedding_server(enabled=not args.model) as env:
        from django.db import connection

        from accounts.models import User
        from ingestion import services

        user = User.objects.create_user("bench", password="bench-password-123")
        text = _note_text(int(args.mb * 2**20))
        job = services.note_create(owner=user, text=text, title="Depot log")
        del text
        database = str(connection.settings_dict["NAME"])
        connection.close()
        started = time.monotonic()
        child = subprocess.run(
            [sys.executable, "-m", "bench", "memory", "--child", database, str(job.pk)],
            env={**os.environ, **env},
            capture_output=True,
            text=True,
            check=False,
        )
        seconds = time.monotonic() - started
        if child.returncode:
            sys.exit(f"the job's process failed ({child.returncode}):\n{child.stderr[-3000:]}")
        report = json.loads(child.stdout.strip().splitlines()[-1])
        embedder = "the configured model" if args.model else "a stand-in embedding server"
        print(
            f"memory: a {args.mb:g} MB note → {report['chunks']:,} passages ({report['status']}, {seconds:.0f} s, "
            f"{embedder}): worker peak {report['peak_mb']:,.0f} MB (VmHWM), {report['rest_mb']:,.0f} MB with the "
            f"embedder loaded before the job → the job added {report['peak_mb'] - report['rest_mb']:,.0f} MB"
        )


def _child(database: str, job_id: int) -> None:
    setup_django()
    from django.db import connection

    from ingestion.embeddings import embed_texts
    from ingestion.models import Chunk, Job
    from ingestion.pipeline import job_process

    connection.settings_dict["NAME"] = database
    embed_texts(["warm the embedder up"])
    Job.objects.filter(pk=job_id).exists()
    rest = _vm_hwm_mb()
    job_process(job_id=job_id)
    peak = _vm_hwm_mb()
    job = Job.objects.get(pk=job_id)
    chunks = Chunk.objects.filter(source_id=job.source_id).count()
    print(json.dumps({"rest_mb": rest, "peak_mb": peak, "status": job.status, "chunks": chunks}))


def _vm_hwm_mb() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmHWM in /proc/self/status")


def _note_text(size: int) -> str:
    entries: list[str] = []
    total = i = 0
    while total < size:
        entry = (
            f"## Entry {i}\n\nOn day {i} the team reviewed item {i * 7} near the depot and logged {i * 3} findings; "
            f"the follow-up for case {i} was assigned to desk {i % 17} with a deadline in week {i % 52}."
        )
        entries.append(entry)
        total += len(entry) + 2
        i += 1
    return "\n\n".join(entries)


@contextmanager
def _embedding_server(*, enabled: bool) -> Iterator[dict[str, str]]:
    """A stand-in for an OpenAI-compatible `/v1/embeddings`, answering each text with one of 1,024 vectors."""
    if not enabled:
        yield {}
        return
    rng = np.random.default_rng(21)
    pool = rng.standard_normal((1024, DIMENSIONS)).astype(np.float32)
    pool /= np.linalg.norm(pool, axis=1, keepdims=True)
    rows = [json.dumps([round(float(x), 6) for x in row]) for row in pool]

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            texts = json.loads(self.rfile.read(int(self.headers["content-length"])))["input"]
            items = ",".join(
                f'{{"object":"embedding","index":{i},"embedding":{rows[hash(text) % len(rows)]}}}'
                for i, text in enumerate(texts)
            )
            body = f'{{"object":"list","model":"stand-in","data":[{items}],"usage":{{"prompt_tokens":0,"total_tokens":0}}}}'
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body.encode())

        def log_message(self, *_: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield {
            "EMBEDDING_PROVIDER": "openai",
            "EMBEDDING_MODEL": "stand-in",
            "OPENAI_BASE_URL": f"http://127.0.0.1:{server.server_address[1]}/v1",
        }
    finally:
        server.shutdown()
