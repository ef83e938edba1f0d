"""Load (issue 21): many chats and uploaders at once against `make run`'s processes, on loopback only.

    python -m secondbrain.stack bench -- load                 50 chats, 10 uploaders, 120 s a phase
    python -m secondbrain.stack bench -- load --model local   … answered by the local llama.cpp server

A bench database; a Celery worker and the web server started as `make run` starts them
(`secondbrain.stack.worker_command`, `web_command`). Two phases, each with a web process of its own: the
baseline with CHAT_THREADS=1 (every answer's steps on one thread, as before issue 21), then the default.
In each, `--chats` websocket chats ask question after question, as the page does, and `--uploaders`
add a file (`POST /api/uploads`) then search (`GET /api/search`), over and over, for `--seconds`; then
nothing new starts, what is in flight finishes (at most `--drain` seconds), and every upload's job is
waited for until it is done or failed. Printed per phase: failed requests, jobs that never ended, and
p50/p95 of upload acceptance, search, the first stage event and the first token of an answer.

The chat model is by default a stand-in in this process that answers every request at once, as a
batching server (vLLM, OpenAI) does: the first token after `--prompt-ms`, then a token per word `--token-ms`
apart: the sentence of the first source it was shown, cited. It measures the web process, not the
model. `--model local` uses the server the launcher started (OPENAI_BASE_URL): llama.cpp answers one
request at a time, so there the model's queue is what is measured.
"""

import argparse
import contextlib
import json
import os
import re
import secrets
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from bench.common import bench_database, percentile, setup_django

BASE_DIR = Path(__file__).resolve().parent.parent
LOG_DIR = BASE_DIR / "var" / "log"
REQUEST_TIMEOUT = 120.0
_EVENT = re.compile(r'data-event="(\w+)"')

NOTES = {
    "Garden plan": "The tomatoes go into the raised bed on 12 May, after the last frost. The basil goes beside "
    "them. Water the bed every second evening; the rain barrel by the shed holds enough for a week.",
    "Bike repair": "The back tyre of the blue bike lost air twice in March. Mina at the shop on Elm Street "
    "fitted a new inner tube for 14 euros and said the rim tape was worn.",
    "Budget meeting": "We agreed on a budget of 40,000 euros for the kitchen. Paul asked for a second quote "
    "from the carpenter before we sign anything; the deadline for it is the end of June.",
    "Reading list": "Tom recommended Piranesi by Susanna Clarke. Anna lent me The Left Hand of Darkness, "
    "which I should give back to her before her birthday in September.",
}
QUESTIONS = [
    "When do the tomatoes go into the raised bed?",
    "How often should I water the garden bed?",
    "Who fitted the new inner tube on the blue bike?",
    "How much did the inner tube cost?",
    "What budget did we agree on for the kitchen?",
    "What did Paul ask for before we sign?",
    "Which book did Tom recommend?",
    "When should I give Anna's book back?",
]
CHAT_USERS = 10  # the chats share these people's notes, several chats to a person


@dataclass
class Answer:
    seconds: float
    first_stage: float | None = None
    first_token: float | None = None
    error: str = ""
    abstained: bool = False


@dataclass
class Phase:
    name: str
    env: dict[str, str]
    answers: list[Answer] = field(default_factory=list)
    uploads: list[float] = field(default_factory=list)
    searches: list[float] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)  # of uploads and searches, and of chats that broke
    job_ids: list[int] = field(default_factory=list)
    jobs: dict[str, int] = field(default_factory=dict)  # final status → count, "never ended" included
    silent_model: int = 0  # answers the model was asked for and wrote nothing to
    web_cores: list[float] = field(default_factory=list)  # the web process's CPU time per second of each run
    lock: threading.Lock = field(default_factory=threading.Lock)


# --- the processes ------------------------------------------------------------------------------


@contextlib.contextmanager
def process(name: str, argv: list[str], env: dict[str, str]) -> Iterator[subprocess.Popen[bytes]]:
    """`argv` in a session of its own, logging to var/log/bench-load-<name>.log; its group stopped afterwards."""
    LOG_DIR.mkdir(parents=True, exist_ok=True)
    with (LOG_DIR / f"bench-load-{name}.log").open("ab") as log:
        child = subprocess.Popen(argv, cwd=BASE_DIR, env=env, stdout=log, stderr=subprocess.STDOUT,
                                 start_new_session=True)  # fmt: skip
    try:
        yield child
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(child.pid, signal.SIGTERM)
        try:
            child.wait(timeout=30)
        except subprocess.TimeoutExpired:
            pass
        with contextlib.suppress(ProcessLookupError):
            os.killpg(child.pid, signal.SIGKILL)
        child.wait()


def cpu_seconds(pid: int) -> float:
    """The CPU time a process (all its threads) has used so far, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@contextlib.contextmanager
def web(env: dict[str, str]) -> Iterator[tuple[str, int]]:
    from secondbrain.stack import free_port, http_answers, web_command

    port = free_port()
    with process("web", web_command("127.0.0.1", port), env) as server:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 90
        while not http_answers(f"{url}/healthz"):
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the web server did not start: see {LOG_DIR / 'bench-load-web.log'}")
            time.sleep(0.2)
        yield url, server.pid


class _StandIn(BaseHTTPRequestHandler):
    """An OpenAI-compatible chat server answering the first source's first sentence, cited."""

    protocol_version = "HTTP/1.1"
    prompt_seconds = 0.3
    token_seconds = 0.03

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 — the base class's name
        pass

    def do_POST(self) -> None:  # noqa: N802 — http.server's naming
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        system = next((m["content"] for m in body.get("messages", []) if m.get("role") == "system"), "")
        first = system.split("\n[1] ", 1)[-1].split("\n", 2)
        sentence = (first[1] if len(first) > 1 else "I couldn't find that in your notes.").split(". ")[0]
        tokens = [f"{word} " for word in f"{sentence.rstrip('.')} [1].".split(" ")]
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        try:
            time.sleep(self.prompt_seconds)
            for token in tokens:
                self._chunk({"content": token}, None)
                time.sleep(self.token_seconds)
            self._chunk({}, "stop")
            self._write(b"data: [DONE]\n\n")
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass

    def _chunk(self, delta: dict[str, str], finish: str | None) -> None:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        data = {"id": "stand-in", "object": "chat.completion.chunk", "created": 0, "model": "stand-in",
                "choices": [choice]}  # fmt: skip
        self._write(f"data: {json.dumps(data)}\n\n".encode())

    def _write(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024


@contextlib.contextmanager
def stand_in_model(prompt_ms: int, token_ms: int) -> Iterator[str]:
    handler = type("Handler", (_StandIn,), {"prompt_seconds": prompt_ms / 1000, "token_seconds": token_ms / 1000})
    server = _Server(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


# --- the clients --------------------------------------------------------------------------------


def http(url: str, *, token: str, data: bytes | None = None, content_type: str = "") -> tuple[int, Any]:
    headers = {"Authorization": f"Bearer {token}"} | ({"Content-Type": content_type} if content_type else {})
    request = urllib.request.Request(url, data=data, headers=headers, method="POST" if data is not None else "GET")
    try:
        with urllib.request.urlopen(request, timeout=REQUEST_TIMEOUT) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, error.read()[:200]
    except OSError as error:
        return 0, repr(error)


def upload(url: str, token: str, name: str, text: str) -> tuple[int, Any]:
    boundary = secrets.token_hex(16)
    data = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n'
        f"Content-Type: text/markdown\r\n\r\n{text}\r\n--{boundary}--\r\n"
    ).encode()
    return http(f"{url}/api/uploads", token=token, data=data, content_type=f"multipart/form-data; boundary={boundary}")


def uploader(phase: Phase, url: str, token: str, number: int, until: float) -> None:
    count = 0
    while time.monotonic() < until:
        count += 1
        text = (
            f"# Errand {count}\n\nUploader {number} noted errand {count}: call the plumber about the leak by the shed."
        )
        started = time.perf_counter()
        status, body = upload(url, token, f"errand-{number}-{count}.md", text)
        took = time.perf_counter() - started
        with phase.lock:
            if status == 202:
                phase.uploads.append(took)
                phase.job_ids.append(int(body["job_id"]))
            else:
                phase.failures.append(f"upload {status}: {body}")
        query = urllib.parse.urlencode({"q": f"when do I call the plumber about errand {count}", "k": 8})
        started = time.perf_counter()
        status, body = http(f"{url}/api/search?{query}", token=token)
        took = time.perf_counter() - started
        with phase.lock:
            if status == 200:
                phase.searches.append(took)
            else:
                phase.failures.append(f"search {status}: {body}")


def chat(phase: Phase, url: str, cookie: str, number: int, until: float, drain_until: float) -> None:
    from websockets.sync.client import connect

    headers = {"Cookie": f"sessionid={cookie}", "Origin": url}
    try:
        with connect(url.replace("http://", "ws://") + "/ws/chat/", additional_headers=headers, open_timeout=60,
                     close_timeout=5, max_size=None) as socket:  # fmt: skip
            asked = 0
            while time.monotonic() < until:
                question = QUESTIONS[(number + asked) % len(QUESTIONS)]
                asked += 1
                answer = ask(socket, question, drain_until)
                with phase.lock:
                    phase.answers.append(answer)
    except Exception as exc:  # noqa: BLE001 — a chat that broke is a failure to count, not a crash of the run
        with phase.lock:
            phase.failures.append(f"chat {number}: {exc!r}")


def ask(socket: Any, question: str, drain_until: float) -> Answer:
    """Ask as the page does; the times from sending to the first stage event, the first token and the end."""
    started = time.perf_counter()
    socket.send(json.dumps({"question": question, "conversation_id": ""}))
    answer = Answer(seconds=0.0)
    while True:
        try:
            message = str(socket.recv(timeout=max(0.1, drain_until - time.monotonic())))
        except TimeoutError:
            answer.error = "unfinished"
            break
        now = time.perf_counter() - started
        match = _EVENT.search(message)
        event = match.group(1) if match else ""
        if event == "stage" and answer.first_stage is None:
            answer.first_stage = now
        elif event == "token" and answer.first_token is None:
            answer.first_token = now
        elif event == "error":
            code = re.search(r'data-code="(\w+)"', message)
            answer.error = code.group(1) if code else "error"
            break
        elif event == "done":
            answer.abstained = 'class="answer abstained' in message
            break
    answer.seconds = time.perf_counter() - started
    return answer


# --- a phase ------------------------------------------------------------------------------------


def run_phase(
    phase: Phase, run: int, *, base_env: dict[str, str], args: argparse.Namespace, cookies: list[str]
) -> None:
    """Drive a web process of the phase's settings for `args.seconds`, adding what was measured to `phase`."""
    from accounts.models import User
    from accounts.services import token_create

    tokens = [token_create(user=User.objects.create_user(f"run{run}-up{i}")) for i in range(args.uploaders)]
    job_ids_before = len(phase.job_ids)
    silent_before = silent_model_answers()
    with web({**base_env, **phase.env}) as (url, pid):
        for cookie in cookies[:1]:  # the embedding model and the first connections load before the clock starts
            _warm(url, cookie, tokens[0])
        load = " / ".join(f"{value:.1f}" for value in os.getloadavg())
        print(f"  run {run}, {phase.name}: {args.seconds} s, the machine's load average before {load} …", flush=True)
        started, cpu_before = time.monotonic(), cpu_seconds(pid)
        until, drain_until = started + args.seconds, started + args.seconds + args.drain
        threads = [
            threading.Thread(target=chat, args=(phase, url, cookies[i % len(cookies)], i, until, drain_until))
            for i in range(args.chats)
        ] + [threading.Thread(target=uploader, args=(phase, url, tokens[i], i, until)) for i in range(args.uploaders)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        phase.web_cores.append((cpu_seconds(pid) - cpu_before) / (time.monotonic() - started))
        print(f"  run {run}: in flight ended after {time.monotonic() - started:.0f} s", flush=True)
    for status, count in wait_for_jobs(phase.job_ids[job_ids_before:], timeout=args.drain).items():
        phase.jobs[status] = phase.jobs.get(status, 0) + count
    phase.silent_model += silent_model_answers() - silent_before


def _warm(url: str, cookie: str, token: str) -> None:
    from websockets.sync.client import connect

    http(f"{url}/api/search?q=warm", token=token)
    headers = {"Cookie": f"sessionid={cookie}", "Origin": url}
    with connect(url.replace("http://", "ws://") + "/ws/chat/", additional_headers=headers, open_timeout=60) as socket:
        ask(socket, QUESTIONS[0], time.monotonic() + REQUEST_TIMEOUT)


def wait_for_jobs(job_ids: list[int], *, timeout: float) -> dict[str, int]:
    """Each job's final status once all are done or failed, or after `timeout`: then "never ended"."""
    from django.db.models import Count

    from ingestion.models import Job

    final = [Job.Status.DONE, Job.Status.FAILED]
    deadline = time.monotonic() + timeout
    while Job.objects.filter(pk__in=job_ids).exclude(status__in=final).exists() and time.monotonic() < deadline:
        time.sleep(1)
    rows = Job.objects.filter(pk__in=job_ids).values("status").annotate(n=Count("id"))
    counts = {str(row["status"]): int(row["n"]) for row in rows}
    ended = counts.get(Job.Status.DONE, 0) + counts.get(Job.Status.FAILED, 0)
    counts["never ended"] = len(job_ids) - ended  # still queued or running, or missing
    return counts


def silent_model_answers() -> int:
    """Answers of this run so far for which the model was asked and wrote nothing (so no token was sent)."""
    from chat.models import Message

    asked = Message.objects.filter(role=Message.Role.ASSISTANT, trace__timings__has_key="model_called")
    return asked.exclude(trace__timings__has_key="first_token").count()


# --- the report ---------------------------------------------------------------------------------


def ms(values: list[float]) -> str:
    if not values:
        return "—"
    p50, p95 = statistics.median(values), percentile(values, 0.95)
    return f"{_t(p50)} / {_t(p95)}"


def _t(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms" if seconds < 10 else f"{seconds:.1f} s"


def report(phase: Phase) -> None:
    answered = [a for a in phase.answers if not a.error]
    errors: dict[str, int] = {}
    for answer in phase.answers:
        if answer.error:
            errors[answer.error] = errors.get(answer.error, 0) + 1
    tokens = [a.first_token for a in answered if a.first_token is not None]
    stages = [a.first_stage for a in answered if a.first_stage is not None]
    failed = len(phase.failures) + sum(errors.values())
    print(f"  {phase.name}")
    print(f"    failed requests {failed}" + (f" ({errors}; {phase.failures[:3]})" if failed else ""))
    print(
        f"    answers {len(answered)} ({sum(a.abstained for a in answered)} abstained; with a token {len(tokens)}, "
        f"the model asked and silent {phase.silent_model}) · uploads {len(phase.uploads)} · "
        f"searches {len(phase.searches)} · jobs {phase.jobs} · the web process used "
        + " and ".join(f"{cores:.2f}" for cores in phase.web_cores)
        + " cores"
    )
    print(
        f"    p50 / p95: upload acceptance {ms(phase.uploads)} · search {ms(phase.searches)} · "
        f"first stage {ms(stages)} · first token {ms(tokens)} · whole answer {ms([a.seconds for a in answered])}"
    )


def compare(baseline: Phase, pool: Phase) -> None:
    """The pool's p50 and p95 as a share of the baseline's, same run."""

    def ratio(of: Callable[[Phase], list[float]]) -> str:
        mine, theirs = of(pool), of(baseline)
        if not mine or not theirs:
            return "—"
        p50 = statistics.median(mine) / statistics.median(theirs)
        return f"{p50:.2f}× / {percentile(mine, 0.95) / percentile(theirs, 0.95):.2f}×"

    def done(phase: Phase) -> list[Answer]:
        return [a for a in phase.answers if not a.error]

    print(f"  pool against baseline, p50 / p95: answers {len(done(pool)) / max(1, len(done(baseline))):.2f}× as many · "
          f"first stage {ratio(lambda p: [a.first_stage for a in done(p) if a.first_stage is not None])} · "
          f"first token {ratio(lambda p: [a.first_token for a in done(p) if a.first_token is not None])} · "
          f"whole answer {ratio(lambda p: [a.seconds for a in done(p)])} · uploads {len(pool.uploads) / max(1, len(baseline.uploads)):.2f}× as many, "
          f"acceptance {ratio(lambda p: p.uploads)} · search {ratio(lambda p: p.searches)}")  # fmt: skip


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench load", description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=int, default=120, help="how long each phase drives the app")
    parser.add_argument("--chats", type=int, default=50, help="websocket chats asking at once")
    parser.add_argument("--uploaders", type=int, default=10, help="clients adding files and searching at once")
    parser.add_argument("--drain", type=int, default=600, help="at most this long for what is in flight, and for jobs")
    parser.add_argument("--model", choices=["stand-in", "local"], default="stand-in")
    parser.add_argument("--prompt-ms", type=int, default=300, help="the stand-in's time to its first token")
    parser.add_argument("--token-ms", type=int, default=30, help="the stand-in's time between tokens")
    parser.add_argument("--threads", type=int, help="CHAT_THREADS of the second phase (default: the setting's)")
    parser.add_argument("--only", choices=["baseline", "default"], help="run one phase only")
    parser.add_argument(
        "--rounds", type=int, default=1, help="baseline then pool, and each further round the other way round"
    )
    args = parser.parse_args(argv)

    setup_django()
    from django.conf import settings
    from django.db import connection

    from bench.connections import database_url
    from secondbrain.stack import worker_command

    default = {"CHAT_THREADS": str(args.threads)} if args.threads else {}
    phases = [
        Phase("baseline: CHAT_THREADS=1 (one thread for every answer's steps, as before)", {"CHAT_THREADS": "1"}),
        Phase(f"pool: CHAT_THREADS={args.threads or settings.CHAT_THREADS}", default),
    ]
    phases = [p for p, name in zip(phases, ["baseline", "default"], strict=True) if args.only in (None, name)]
    with contextlib.ExitStack() as stack, bench_database():
        model_url = os.environ.get("OPENAI_BASE_URL", "")
        if args.model == "stand-in":
            model_url = stack.enter_context(stand_in_model(args.prompt_ms, args.token_ms))
        media = stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-load-media-"))
        base_env = {**os.environ, "DATABASE_URL": database_url(connection.settings_dict), "MEDIA_ROOT": media,
                    "OPENAI_BASE_URL": model_url}  # fmt: skip
        stack.enter_context(process("worker", worker_command("ingest", f"bench-load-{os.getpid()}@%h"), base_env))
        cookies = _chat_people(base_env)
        print(
            f"load: {args.chats} chats and {args.uploaders} uploaders for {args.seconds} s a phase, "
            f"chat model: {'stand-in' if args.model == 'stand-in' else model_url} "
            + (
                f"({args.prompt_ms} ms to the first token, a word every {args.token_ms} ms)"
                if args.model == "stand-in"
                else ""
            )
        )
        run = 0
        for round_ in range(args.rounds):
            for phase in phases if round_ % 2 == 0 else phases[::-1]:
                run += 1
                run_phase(phase, run, base_env=base_env, args=args, cookies=cookies)
        for phase in phases:
            report(phase)
        if len(phases) == 2:
            compare(*phases)
        connection.close()


def _chat_people(env: dict[str, str]) -> list[str]:
    """CHAT_USERS people, each with the notes, processed: their session cookies."""
    from django.test import Client

    from accounts.models import User
    from accounts.services import token_create
    from ingestion import services

    cookies, jobs = [], []
    for i in range(CHAT_USERS):
        user = User.objects.create_user(f"chat{i}")
        token_create(user=user)
        jobs += [services.note_create(owner=user, text=text, title=title).pk for title, text in NOTES.items()]
        client = Client()
        client.force_login(user)
        cookies.append(client.cookies["sessionid"].value)
    counts = wait_for_jobs(jobs, timeout=600)
    if counts.get("done") != len(jobs):
        raise RuntimeError(f"the chat people's notes were not processed: {counts}")
    return cookies


if __name__ == "__main__":
    main(sys.argv[1:])
