"""docker-compose.yml cannot run here (no Docker engine), so its agreement with the code is checked."""

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import yaml
from django.conf import settings
from django.core.management.utils import get_random_secret_key
from django.urls import reverse

from secondbrain.api import api
from secondbrain.limits import ENVELOPE_BYTES
from secondbrain.stack import web_command

BASE = Path(settings.BASE_DIR)
COMPOSE = yaml.safe_load((BASE / "docker-compose.yml").read_text())
ENV_EXAMPLE = (BASE / ".env.example").read_text()
CADDYFILE = (BASE / "proxy" / "Caddyfile").read_text()
# Our image: built from the Dockerfile by the app services, used as it is by the model server.
APP_IMAGE = "secondbrain:latest"


def _env(service: str) -> dict[str, str]:
    environment = COMPOSE["services"][service].get("environment", {})
    if isinstance(environment, list):
        return dict(item.split("=", 1) for item in environment)
    return {key: str(value) for key, value in environment.items()}


def test_it_has_the_production_services() -> None:
    assert set(COMPOSE["services"]) >= {"db", "redis", "web", "worker", "llm"}
    assert COMPOSE["services"]["db"]["image"].startswith("pgvector/pgvector:")
    assert COMPOSE["services"]["redis"]["image"].startswith("redis:")


def _default(value: str) -> str:
    """`${NAME:-default}` → its default, as compose resolves it when NAME is unset; anything else as it is."""
    match = re.fullmatch(r"\$\{\w+:-([^}]*)\}", value)
    return match.group(1) if match else value


def _resolved(environment: dict[str, str], given: dict[str, str]) -> dict[str, str]:
    """The environment compose gives a service when `.env` holds `given` and nothing else."""

    def one(match: re.Match[str]) -> str:
        name, operator, fallback = match.groups()
        if name in given:
            return given[name]
        assert operator == ":-", f"{name} must be set ({fallback})"
        return fallback

    return {key: re.sub(r"\$\{(\w+)(:[-?])?([^}]*)\}", one, value) for key, value in environment.items()}


def test_web_runs_the_server_make_run_starts_and_each_queue_has_its_workers() -> None:
    app = settings.ASGI_APPLICATION.replace(".application", ":application")
    web = COMPOSE["services"]["web"]["command"]
    # Behind the proxy, daphne takes the client's address from X-Forwarded-For (log-in throttling by address).
    assert web == [*web_command("0.0.0.0", 8000, python="python")[:-1], "--proxy-headers", app]
    for service, queue in [("worker", "ingest"), ("transcriber", "transcribe")]:
        command = COMPOSE["services"][service]["command"]
        assert " ".join(command[:4]) == "celery -A secondbrain worker"
        assert command[command.index("-Q") + 1] == queue
    assert " ".join(COMPOSE["services"]["beat"]["command"][:4]) == "celery -A secondbrain beat"
    assert "requeue-stuck-jobs" in settings.CELERY_BEAT_SCHEDULE


def test_app_services_get_every_setting_they_need() -> None:
    for service in ("web", "worker", "transcriber"):
        env = _env(service)
        assert env["DATABASE_URL"].startswith("postgresql://") and "@db:5432/" in env["DATABASE_URL"]
        assert env["REDIS_URL"].startswith("redis://redis:6379")
        assert env["OPENAI_BASE_URL"] == "http://llm:8080/v1"
        assert env["DEBUG"] == "false"
        assert "SECRET_KEY" in env
        assert env["MEDIA_ROOT"] == "/data/media"
        assert "/data/media" in " ".join(COMPOSE["services"][service]["volumes"])


def test_the_chat_model_server_serves_the_configured_model() -> None:
    llm = " ".join(COMPOSE["services"]["llm"]["command"])
    assert "llama_cpp.server" in llm
    assert Path(settings.CHAT_MODEL_PATH).name in llm
    assert f"--model_alias {settings.CHAT_MODEL}" in llm
    assert "--interrupt_requests False" in llm  # a second question waits; it does not cut the first answer
    assert "--logits_all False" in llm  # as `make run` starts it: the first token sooner


def test_sign_up_stays_closed_unless_the_environment_opens_it() -> None:
    for service in ("web", "worker", "transcriber"):
        assert _env(service)["SIGNUP_OPEN"] == "${SIGNUP_OPEN:-false}"
    assert re.search(r"^SIGNUP_OPEN=false\b", ENV_EXAMPLE, re.MULTILINE)


def test_env_example_lists_every_setting_read_from_the_environment() -> None:
    source = (Path(settings.BASE_DIR) / "secondbrain" / "settings.py").read_text()
    names = set(re.findall(r'env_(?:str|bool|int|list|rate|networks)\("([A-Z_]+)"', source))
    names |= set(re.findall(r'os\.environ\.get\("([A-Z_]+)"', source))
    listed = set(re.findall(r"^#?\s*([A-Z_]+)=", ENV_EXAMPLE, re.MULTILINE))
    assert names <= listed, names - listed


def test_the_image_installs_what_the_makefile_sets_up() -> None:
    """The image is built by the Dockerfile, not the Makefile: audio and OCR need the same parts."""
    base = Path(settings.BASE_DIR)
    dockerfile, makefile = (base / "Dockerfile").read_text(), (base / "Makefile").read_text()
    debian = re.search(r"^SYSTEM_PACKAGES := (.+)$", makefile, re.MULTILINE)
    assert debian and set(debian.group(1).split()) <= set(re.findall(r"[\w.+-]+", dockerfile))
    whisper = re.search(r"--no-deps (openai-whisper==\S+)", makefile)
    assert whisper and f"--no-deps {whisper.group(1)}" in dockerfile
    llama = re.search(r"^LLAMA_CMAKE_ARGS := (.+)$", makefile, re.MULTILINE)
    assert llama and f'CMAKE_ARGS="{llama.group(1)}"' in dockerfile


def test_every_process_together_stays_within_postgres_connections() -> None:
    """Each process keeps at most DB_POOL_MAX_SIZE connections; all of them must fit PostgreSQL's 100
    (less the 3 it keeps for superusers), or a busy day ends in "too many clients"."""
    default = re.fullmatch(r"\$\{DB_POOL_MAX_SIZE:-(\d+)\}", _env("web")["DB_POOL_MAX_SIZE"])
    assert default is not None
    pool = int(default.group(1))
    assert pool == settings.DB_POOL_MAX_SIZE
    processes = 1  # web
    for service in ("worker", "transcriber"):
        command = COMPOSE["services"][service]["command"]
        processes += int(command[command.index("--concurrency") + 1])
    processes += 1  # beat
    assert processes * pool <= 100 - 3
    for service in ("web", "worker", "transcriber", "beat"):
        assert _env(service)["DB_POOL_MAX_SIZE"] == f"${{DB_POOL_MAX_SIZE:-{pool}}}"


def test_only_the_proxy_publishes_ports_and_daphne_is_reached_through_it() -> None:
    published = {name for name, service in COMPOSE["services"].items() if service.get("ports")}
    assert published == {"proxy"}
    assert {str(port).split(":")[0] for port in COMPOSE["services"]["proxy"]["ports"]} == {"80", "443"}
    assert COMPOSE["services"]["proxy"]["image"].startswith("caddy:")
    assert "./proxy/Caddyfile:/etc/caddy/Caddyfile:ro" in COMPOSE["services"]["proxy"]["volumes"]
    web_port = re.search(r"tcp:port=(\d+)", " ".join(COMPOSE["services"]["web"]["command"]))
    assert web_port and COMPOSE["services"]["web"]["expose"] == [web_port.group(1)]
    upstreams = re.findall(r"^\s*reverse_proxy\s+(\S+)", CADDYFILE, re.MULTILINE)
    assert upstreams and set(upstreams) == {f"web:{web_port.group(1)}"}
    # The proxy waits for the web process's health check, which /healthz answers over plain http.
    assert COMPOSE["services"]["proxy"]["depends_on"]["web"] == {"condition": "service_healthy"}
    assert "http://127.0.0.1:8000/healthz" in " ".join(COMPOSE["services"]["web"]["healthcheck"]["test"])


def test_the_proxy_serves_the_host_the_app_allows_and_the_app_trusts_its_https_header() -> None:
    site = re.search(r"^(\S+) \{", CADDYFILE, re.MULTILINE)
    assert site and site.group(1) == "{$DOMAIN}"
    proxy = _env("proxy")
    for service in ("web", "worker", "transcriber"):
        assert _env(service)["ALLOWED_HOSTS"] == proxy["DOMAIN"] == "${DOMAIN:-localhost}"
        assert _env(service)["TRUST_X_FORWARDED_PROTO"] == "true"


def _size(value: str) -> int:
    """A size as Caddy reads it (go-humanize: "10MB" is 10**7 bytes, "1.5MiB" 1.5 * 2**20)."""
    match = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([KMG]i?B)", value)
    assert match, value
    number, unit = match.groups()
    power = "KMG".index(unit[0]) + 1
    return int(float(number) * (1024 if "i" in unit else 1000) ** power)


def test_the_proxy_body_limit_for_uploads_is_the_apps_and_every_other_body_is_small() -> None:
    """Uploads and notes pass the proxy up to exactly the app's own limit (the same MAX_UPLOAD_MB and
    envelope), whether the body declares its length or not; anything else is refused past 1 MiB.
    The routes named are the views that take a file or a note."""
    uploads = re.search(r"^\s*@uploads path (.+)$", CADDYFILE, re.MULTILINE)
    assert uploads
    schema = api.get_openapi_schema()["paths"]
    api_paths = {
        path
        for path, operations in schema.items()
        for operation in operations.values()
        if operation.get("operationId") in {"ingestion_api_note_create", "ingestion_api_upload_create"}
    }
    assert len(api_paths) == 2
    assert set(uploads.group(1).split()) == {reverse("upload_create"), reverse("note_create"), *api_paths}

    # The same variable, with the same default, reaches the app and the proxy, and the app's default is it.
    variable = f"${{MAX_UPLOAD_MB:-{settings.MAX_UPLOAD_MB}}}"
    assert _env("proxy")["MAX_UPLOAD_MB"] == _env("web")["MAX_UPLOAD_MB"] == variable
    streamed = re.findall(r"max_size (\S+)", CADDYFILE)
    declared = re.findall(r"int\(\{http\.request\.header\.Content-Length\}\) > ([^`]+)`", CADDYFILE)
    assert len(streamed) == len(declared) == 2
    for mb in (settings.MAX_UPLOAD_MB, 1, 2048):
        app_limit = mb * 1024 * 1024 + ENVELOPE_BYTES  # what secondbrain.limits.BodySizeLimit lets through
        assert _size(streamed[0].replace("{$MAX_UPLOAD_MB}", str(mb))) == app_limit
        assert _product_sum(declared[0].replace("{$MAX_UPLOAD_MB}", str(mb))) == app_limit
    assert _size(streamed[1]) == _product_sum(declared[1]) == 1024 * 1024 < settings.MAX_UPLOAD_BYTES


def _product_sum(expression: str) -> int:
    """`200 * 1048576 + 65536` (the Caddyfile's arithmetic) → its value."""
    return sum(_product(term) for term in expression.split("+"))


def _product(term: str) -> int:
    product = 1
    for factor in term.split("*"):
        product *= int(factor)
    return product


def _dockerfile_user(path: Path) -> str:
    users = re.findall(r"^USER\s+(\S+)", path.read_text(), re.MULTILINE)
    return users[-1] if users else "root"


def test_every_container_runs_as_a_user_not_root() -> None:
    assert _dockerfile_user(BASE / "Dockerfile") == "app"
    for name, service in COMPOSE["services"].items():
        if "user" in service:
            user = str(service["user"])
        elif service.get("build") == "." or service.get("image") == APP_IMAGE:
            user = _dockerfile_user(BASE / "Dockerfile")
        else:
            raise AssertionError(f"{name} runs as its image's default user, which may be root: set `user`")
        assert user.split(":")[0] not in {"root", "0"}, (name, user)


def test_sign_up_is_closed_unless_the_operator_opens_it() -> None:
    for service in ("web", "worker", "transcriber", "migrate"):
        assert _env(service)["SIGNUP_OPEN"] == "${SIGNUP_OPEN:-false}"


def test_check_deploy_finds_nothing_under_the_compose_settings() -> None:
    """`manage.py check --deploy`, in the environment the image and compose give the web service,
    warns of nothing."""
    given = {"SECRET_KEY": get_random_secret_key(), "POSTGRES_PASSWORD": "not-used-by-check"}
    compose_env = _resolved(_env("web"), given)
    assert compose_env["DEBUG"] == "false"
    image_env = dict(
        pair.split("=", 1)
        for line in re.findall(r"^ENV (.+)$", (BASE / "Dockerfile").read_text(), re.MULTILINE)
        for pair in shlex.split(line)
    )
    assert image_env["STATIC_ROOT"]
    # The machine's own settings must not leak in: only what Python needs, the image and compose set.
    env = {key: value for key, value in os.environ.items() if key in {"PATH", "HOME", "LANG", "VIRTUAL_ENV"}}
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=BASE,
        env={**env, **image_env, **compose_env},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues" in result.stdout, result.stdout + result.stderr
    assert "WARNINGS" not in result.stderr, result.stderr
