"""docker-compose.yml cannot run here (no Docker engine), so its agreement with the code is checked."""

import re
from pathlib import Path

import yaml
from django.conf import settings

from secondbrain.stack import web_command

COMPOSE = yaml.safe_load((Path(settings.BASE_DIR) / "docker-compose.yml").read_text())
ENV_EXAMPLE = (Path(settings.BASE_DIR) / ".env.example").read_text()


def _env(service: str) -> dict[str, str]:
    environment = COMPOSE["services"][service].get("environment", {})
    if isinstance(environment, list):
        return dict(item.split("=", 1) for item in environment)
    return {key: str(value) for key, value in environment.items()}


def test_it_has_the_production_services() -> None:
    assert set(COMPOSE["services"]) >= {"db", "redis", "web", "worker", "llm"}
    assert COMPOSE["services"]["db"]["image"].startswith("pgvector/pgvector:")
    assert COMPOSE["services"]["redis"]["image"].startswith("redis:")


def test_web_runs_the_server_make_run_starts_and_each_queue_has_its_workers() -> None:
    app = settings.ASGI_APPLICATION.replace(".application", ":application")
    assert COMPOSE["services"]["web"]["command"] == web_command("0.0.0.0", 8000, python="python")
    assert COMPOSE["services"]["web"]["command"][-1] == app
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


def test_sign_up_stays_closed_unless_the_environment_opens_it() -> None:
    for service in ("web", "worker", "transcriber"):
        assert _env(service)["SIGNUP_OPEN"] == "${SIGNUP_OPEN:-false}"
    assert re.search(r"^SIGNUP_OPEN=false\b", ENV_EXAMPLE, re.MULTILINE)


def test_env_example_lists_every_setting_read_from_the_environment() -> None:
    source = (Path(settings.BASE_DIR) / "secondbrain" / "settings.py").read_text()
    names = set(re.findall(r'env_(?:str|bool|int|list|rate)\("([A-Z_]+)"', source))
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
