"""Second Brain settings: one module, configured by the environment only.

Every variable is listed with its default in `.env.example`. The helpers below fail loudly on
values they cannot parse, so a typo in production stops the start instead of silently falling
back to a default.
"""

import ipaddress
import os
import re
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlparse

from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = BASE_DIR / "var"


def env_str(name: str, default: str) -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    value = raw.strip().lower()
    if value in {"1", "true", "yes", "on"}:
        return True
    if value in {"0", "false", "no", "off"}:
        return False
    raise ImproperlyConfigured(f"{name} must be a boolean (true/false), not {raw!r}")


def env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be an integer, not {raw!r}") from None


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


def env_networks(name: str) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
    """IP networks from a comma-separated list of CIDRs (`127.0.0.0/8,::1`); none by default."""
    try:
        return tuple(ipaddress.ip_network(item, strict=False) for item in env_list(name, []))
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name} must be IP networks such as 127.0.0.0/8,::1 ({exc})") from None


RATE_UNITS = {"s": 1, "second": 1, "m": 60, "min": 60, "minute": 60, "h": 3600, "hour": 3600, "d": 86400, "day": 86400}


def env_rate(name: str, default: str) -> tuple[int, int]:
    """(count, seconds) from `20/minute`, `10/15min`, `200/hour`…; `off` or `0` is (0, 0): no limit."""
    raw = os.environ.get(name) or default
    value = raw.strip().lower()
    if value in {"off", "0"}:
        return 0, 0
    match = re.fullmatch(r"(\d+)\s*/\s*(\d*)\s*([a-z]+?)s?", value)
    if not match or match.group(3) not in RATE_UNITS or int(match.group(1)) < 1 or int(match.group(2) or 1) < 1:
        raise ImproperlyConfigured(f"{name} must be a rate such as 20/minute or 10/15min, or off; not {raw!r}")
    return int(match.group(1)), int(match.group(2) or 1) * RATE_UNITS[match.group(3)]


def job_time_limits(queue: str, soft_default: int, *, below: int) -> tuple[int, int]:
    """(soft, hard) from JOB_<queue>_SOFT_TIME_LIMIT and JOB_<queue>_TIME_LIMIT (default: soft + 5 min)."""
    soft = env_int(f"JOB_{queue}_SOFT_TIME_LIMIT", soft_default)
    hard = env_int(f"JOB_{queue}_TIME_LIMIT", soft + 300)
    if not 0 < soft < hard < below:
        raise ImproperlyConfigured(
            f"JOB_{queue}_SOFT_TIME_LIMIT ({soft}) must be above 0 and below JOB_{queue}_TIME_LIMIT ({hard}), "
            f"and both below JOB_VISIBILITY_TIMEOUT ({below})"
        )
    return soft, hard


def database_from_url(url: str, *, pool: dict[str, int] | None = None) -> dict[str, object]:
    """Turn `postgresql://user:pass@host:port/name?host=/socket/dir` into a Django DATABASES entry,
    with Django's psycopg connection pool when `pool` gives its sizes."""
    parsed = urlparse(url)
    if parsed.scheme not in {"postgres", "postgresql"}:
        raise ImproperlyConfigured(f"DATABASE_URL must be a postgresql:// URL, not {url!r}")
    query = {key: values[-1] for key, values in parse_qs(parsed.query).items()}
    host = query.pop("host", None) or unquote(parsed.hostname or "")
    return {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": unquote(parsed.path.lstrip("/")),
        "USER": unquote(parsed.username or ""),
        "PASSWORD": unquote(parsed.password or ""),
        "HOST": host,
        "PORT": str(parsed.port or ""),
        # Never kept per thread: daphne runs each request's database work on a thread of its own,
        # and connections kept by threads piled up until PostgreSQL refused new clients. A request
        # borrows a connection from the process's pool and returns it when the request ends.
        "CONN_MAX_AGE": 0,
        # With the pool, a connection is checked when it is borrowed: after a database restart the
        # first request gets a live connection instead of an error.
        "CONN_HEALTH_CHECKS": True,
        "OPTIONS": {
            # hnsw.iterative_scan keeps an owner- or date-filtered vector search from returning too
            # few rows: pgvector keeps walking the graph until the LIMIT is filled.
            "options": "-c hnsw.iterative_scan=relaxed_order -c hnsw.ef_search=100",
            **({"pool": pool} if pool else {}),
            **query,
        },
    }


# Public (it is in this file): anything signed with it can be forged. `make run` and the tests only.
DEVELOPMENT_SECRET_KEY = "insecure-development-key-set-SECRET_KEY-in-production"


def secret_key_weakness(key: str) -> str | None:
    """Why `key` must not sign sessions and password-reset links, or None when it may.

    The thresholds are those of Django's `check --deploy` (security.W009), so a key the app starts
    with never draws that warning.
    """
    if not key:
        return "is not set"
    if key == DEVELOPMENT_SECRET_KEY:
        return "is the public development key"
    if key.startswith("django-insecure-"):
        return "is a development key (django-insecure-…)"
    if len(key) < 50 or len(set(key)) < 5:
        return "is too weak (fewer than 50 characters, or fewer than 5 different ones)"
    return None


DEBUG = env_bool("DEBUG", True)
SECRET_KEY = os.environ.get("SECRET_KEY", "")
if not DEBUG and (weakness := secret_key_weakness(SECRET_KEY)):
    raise ImproperlyConfigured(
        f"SECRET_KEY {weakness}; with DEBUG=false it must be a long random secret, "
        "e.g. the output of: python -c 'import secrets; print(secrets.token_urlsafe(50))'"
    )
SECRET_KEY = SECRET_KEY or DEVELOPMENT_SECRET_KEY
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

# HTTPS. Production sits behind a TLS proxy (docker-compose.yml: Caddy) and everything defaults to
# secure there; `make run` (DEBUG) serves plain http on loopback and keeps working without it.
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", not DEBUG)
# The proxy tells the app that the browser's connection was https. Trust it only behind a proxy that
# sets X-Forwarded-Proto itself, overwriting any a client sent (Caddy does), or a client could claim it.
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https") if env_bool("TRUST_X_FORWARDED_PROTO", False) else None
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", not DEBUG)
CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", not DEBUG)
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0 if DEBUG else 365 * 24 * 3600)
# Covers the app's own host and the hosts below it (not its parent domain's other sites).
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", not DEBUG)
# Preloading puts the whole registrable domain into the browsers' HTTPS-only list, which takes months
# to leave: the operator's decision for their domain, not a default of ours. So `check --deploy`'s
# reminder of it (security.W021) is silenced unless it is chosen.
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", False)
SILENCED_SYSTEM_CHECKS = [] if SECURE_HSTS_PRELOAD else ["security.W021"]
# SecurityMiddleware's defaults already send X-Content-Type-Options: nosniff, Referrer-Policy:
# same-origin and Cross-Origin-Opener-Policy: same-origin; XFrameOptionsMiddleware sends DENY.
# The Content-Security-Policy every response gets (secondbrain.middleware.ContentSecurityPolicyMiddleware),
# in the shape of Django 6's setting of the same name. No inline script or style anywhere: htmx's
# indicator styles are off (base.html's htmx-config). 'self' in connect-src covers the websockets
# (ws: and wss: to the same host).
SECURE_CSP = {
    "default-src": ["'self'"],
    "script-src": ["'self'"],
    "style-src": ["'self'"],
    "img-src": ["'self'"],
    "connect-src": ["'self'"],
    "object-src": ["'none'"],
    "base-uri": ["'none'"],
    "form-action": ["'self'"],
    "frame-ancestors": ["'none'"],
}

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "template_partials",
    "django_htmx",
    "ninja",
    "accounts",
    "ingestion",
    "chat",
    "mcp_server",
]

MIDDLEWARE = [
    "secondbrain.timing.ServerTimingMiddleware",
    "secondbrain.middleware.HealthCheckMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "secondbrain.middleware.ContentSecurityPolicyMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "ingestion.uploads.UploadLimitMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "secondbrain.middleware.DatabaseUnavailableMiddleware",
    # Inside the one above: the user it loads, when the database is away, is that one's 503.
    "secondbrain.rls.RowLevelSecurityMiddleware",
    "secondbrain.limits.RateLimitedPage",
    "accounts.middleware.UserTimeZoneMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

ROOT_URLCONF = "secondbrain.urls"
ASGI_APPLICATION = "secondbrain.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# Each process (web, worker, beat) keeps at most DB_POOL_MAX_SIZE connections in Django's psycopg
# pool; DB_POOL_MAX_SIZE=0 turns the pool off (a connection per request, for a server behind
# PgBouncer). A request that waits DB_POOL_TIMEOUT seconds for a connection (the database is down,
# or every connection is busy) fails with OperationalError, which the app answers with a 503.
DB_POOL_MAX_SIZE = env_int("DB_POOL_MAX_SIZE", 10)
DB_POOL_MIN_SIZE = env_int("DB_POOL_MIN_SIZE", 2)
DB_POOL_TIMEOUT = env_int("DB_POOL_TIMEOUT", 10)


if DB_POOL_MAX_SIZE < 0 or (DB_POOL_MAX_SIZE and not 0 <= DB_POOL_MIN_SIZE <= DB_POOL_MAX_SIZE):
    raise ImproperlyConfigured("DB_POOL_MAX_SIZE must be 0 (no pool) or more, and DB_POOL_MIN_SIZE 0 to it")
DATABASES = {
    "default": database_from_url(
        env_str("DATABASE_URL", f"postgresql://postgres@/secondbrain?host={VAR_DIR / 'pgdata'}"),
        pool={"min_size": DB_POOL_MIN_SIZE, "max_size": DB_POOL_MAX_SIZE, "timeout": DB_POOL_TIMEOUT}
        if DB_POOL_MAX_SIZE
        else None,
    )
}
# Threads of a web process that run the blocking steps of answers (chat.services: the turn's rows,
# the search, the answer's check and storage), each step borrowing a pooled connection only while it
# runs. On Channels' one shared thread, as before, every answer of the process waited for every
# other's steps: four answers at once took four times as long.
CHAT_THREADS = env_int("CHAT_THREADS", min(3, max(DB_POOL_MAX_SIZE - 2, 1)) if DB_POOL_MAX_SIZE else 3)
if CHAT_THREADS < 1 or (DB_POOL_MAX_SIZE and CHAT_THREADS > max(DB_POOL_MAX_SIZE - 2, 1)):
    raise ImproperlyConfigured(
        "CHAT_THREADS must be 1 or more, and at most DB_POOL_MAX_SIZE - 2 (a connection for requests and "
        f"one for the websockets besides one per thread), not {CHAT_THREADS} with DB_POOL_MAX_SIZE {DB_POOL_MAX_SIZE}"
    )
# Requests inside Django at once per web process (secondbrain.limits.ConcurrencyLimit): what the
# pool holds beyond the answers' threads and one more, so a request let in never waits for a
# connection and the websockets keep one of their own (Channels runs every consumer's other
# database work, and the session lookup of each websocket that opens, on one shared thread:
# starved of a connection, sockets failed to open).
WEB_CONCURRENT_REQUESTS = env_int(
    "WEB_CONCURRENT_REQUESTS", max(DB_POOL_MAX_SIZE - CHAT_THREADS - 1, 1) if DB_POOL_MAX_SIZE else 10
)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_USER_MODEL = "accounts.User"
# The throttle first: it refuses a log-in over its rate before ModelBackend checks the password.
AUTHENTICATION_BACKENDS = ["secondbrain.limits.LoginThrottle", "django.contrib.auth.backends.ModelBackend"]
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"
# Closed unless the environment opens it: a server reachable by others must not let anyone in by
# default. `make run` (secondbrain/stack.py) opens it for the machine's own user.
SIGNUP_OPEN = env_bool("SIGNUP_OPEN", False)

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
# Only production images collect static files (the Dockerfile sets it); elsewhere the finders serve them.
STATIC_ROOT = os.environ.get("STATIC_ROOT") or None
STATICFILES_DIRS = [BASE_DIR / "static"]
# Serving straight from the finders keeps `make run` free of a collectstatic step; the production
# image runs collectstatic anyway, and then the finders are simply not consulted.
WHITENOISE_USE_FINDERS = True
MEDIA_ROOT = Path(env_str("MEDIA_ROOT", str(VAR_DIR / "media")))
MEDIA_URL = "media/"

MAX_UPLOAD_MB = env_int("MAX_UPLOAD_MB", 200)
MAX_UPLOAD_BYTES = MAX_UPLOAD_MB * 1024 * 1024
# What one person's sources (files and notes, as added) may take in all; 0: no quota.
STORAGE_QUOTA_MB = env_int("STORAGE_QUOTA_MB", 5 * 1024)
STORAGE_QUOTA_BYTES = STORAGE_QUOTA_MB * 1024 * 1024
# Every other request body (log-in, tokens, JSON API calls) is refused past this, by the web server
# while it reads the headers (secondbrain/server.py), before the body is read.
MAX_REQUEST_KB = env_int("MAX_REQUEST_KB", 1024)
MAX_REQUEST_BYTES = MAX_REQUEST_KB * 1024
if MAX_REQUEST_KB < 1 or MAX_UPLOAD_MB < 1 or STORAGE_QUOTA_MB < 0:
    raise ImproperlyConfigured("MAX_REQUEST_KB and MAX_UPLOAD_MB must be 1 or more, STORAGE_QUOTA_MB 0 or more")
# A JSON note body is read into memory; allow the upload limit plus room for the JSON envelope so
# the service, not Django, decides (and explains) what is too large.
DATA_UPLOAD_MAX_MEMORY_SIZE = MAX_UPLOAD_BYTES + 64 * 1024

REDIS_URL = env_str("REDIS_URL", "redis://127.0.0.1:6379/0")
CHANNEL_LAYERS = {
    "default": {
        "BACKEND": "channels_redis.core.RedisChannelLayer",
        "CONFIG": {
            # redis-py 8 times out socket reads after 5 s by default, the same 5 s channels_redis
            # blocks on BZPOPMIN while a socket is idle: the race killed idle websockets.
            "hosts": [{"address": REDIS_URL, "socket_timeout": 30, "socket_connect_timeout": 5}],
            "capacity": 1500,
            "expiry": 30,
        },
    }
}

# Rate counters (secondbrain/limits.py) live in Redis, so that every web process counts the same uses.
CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": REDIS_URL,
        "KEY_PREFIX": "secondbrain",
        "OPTIONS": {"socket_timeout": 5, "socket_connect_timeout": 5},
    }
}
# Per person (asking: POST /api/ask and the chat; adding sources: uploads and notes, page and API;
# creating API tokens), for log-ins (failed ones per account, every attempt per client address) and
# for sign-ups (per client address):
# `count/period` (20/minute, 10/15min, 200/hour), or `off`. Past it: 429 with Retry-After.
RATE_LIMITS = {
    "ask": env_rate("RATE_LIMIT_ASK", "20/minute"),
    "upload": env_rate("RATE_LIMIT_UPLOAD", "300/hour"),
    "token": env_rate("RATE_LIMIT_TOKEN", "20/hour"),
    "login_account": env_rate("RATE_LIMIT_LOGIN_ACCOUNT", "10/15min"),
    "login_address": env_rate("RATE_LIMIT_LOGIN_ADDRESS", "30/minute"),
    # Accounts created from one client address: with sign-up open, each new account would otherwise
    # bring a fresh set of the per-person rates and storage quota.
    "signup_address": env_rate("RATE_LIMIT_SIGNUP_ADDRESS", "10/hour"),
}

CELERY_BROKER_URL = REDIS_URL
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_DEFAULT_QUEUE = "ingest"
CELERY_TASK_ROUTES = {"ingestion.tasks.requeue_stuck_jobs": {"queue": "ingest"}}
# A job that runs longer than this is redelivered: it must exceed the longest real job.
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": env_int("JOB_VISIBILITY_TIMEOUT", 6 * 3600)}
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
# A running job's heartbeat is refreshed every JOB_HEARTBEAT_SECONDS by a thread beside its work,
# whatever the work is doing (a long transcription piece included); one silent for
# JOB_STUCK_AFTER_SECONDS lost its worker (killed, out of memory) and the sweeper sends it again,
# JOB_MAX_ATTEMPTS times at most: then it fails as too_many_attempts.
JOB_HEARTBEAT_SECONDS = env_int("JOB_HEARTBEAT_SECONDS", 30)
JOB_STUCK_AFTER_SECONDS = env_int("JOB_STUCK_AFTER_SECONDS", 600)
JOB_MAX_ATTEMPTS = env_int("JOB_MAX_ATTEMPTS", 3)
if not 0 < JOB_HEARTBEAT_SECONDS * 3 <= JOB_STUCK_AFTER_SECONDS:
    raise ImproperlyConfigured("JOB_STUCK_AFTER_SECONDS must be at least three JOB_HEARTBEAT_SECONDS (both above 0)")
if JOB_MAX_ATTEMPTS < 1:
    raise ImproperlyConfigured("JOB_MAX_ATTEMPTS must be 1 or more")
# Time limits of one job, per queue, (soft, hard) in seconds: at the soft limit the job fails as
# time_limit and keeps nothing; at the hard limit its process is killed (the sweeper then counts an
# attempt). Both end before Redis would redeliver the message (JOB_VISIBILITY_TIMEOUT).
JOB_TIME_LIMITS = {
    "ingest": job_time_limits("INGEST", 3 * 3600, below=CELERY_BROKER_TRANSPORT_OPTIONS["visibility_timeout"]),
    "transcribe": job_time_limits("TRANSCRIBE", 5 * 3600, below=CELERY_BROKER_TRANSPORT_OPTIONS["visibility_timeout"]),
}
CELERY_BEAT_SCHEDULE = {
    "requeue-stuck-jobs": {"task": "ingestion.tasks.requeue_stuck_jobs", "schedule": 60.0},
}
CELERY_BEAT_SCHEDULE_FILENAME = str(VAR_DIR / "celerybeat-schedule")

MODELS_DIR = Path(env_str("MODELS_DIR", str(VAR_DIR / "models")))
EMBEDDING_PROVIDER = env_str("EMBEDDING_PROVIDER", "local")
if EMBEDDING_PROVIDER not in {"local", "openai"}:
    raise ImproperlyConfigured(f"EMBEDDING_PROVIDER must be 'local' or 'openai', not {EMBEDDING_PROVIDER!r}")
# A directory of a sentence-transformers model (local) or a model name (openai).
EMBEDDING_MODEL = env_str("EMBEDDING_MODEL", str(MODELS_DIR / "all-MiniLM-L6-v2"))
# Fixed by the Chunk.embedding column; a model of another size needs a migration.
EMBEDDING_DIMENSIONS = 384
EMBEDDING_BATCH_SIZE = env_int("EMBEDDING_BATCH_SIZE", 32)
EMBEDDING_TIMEOUT_SECONDS = env_int("EMBEDDING_TIMEOUT_SECONDS", 60)  # per request to an OpenAI-compatible server
# A local model runs on ONNX Runtime when its directory holds the export `prepare_models` writes;
# false runs it through sentence-transformers and torch (same vectors, ~3x slower per question).
EMBEDDING_ONNX = env_bool("EMBEDDING_ONNX", True)
TRANSCRIBE_MODEL = env_str("TRANSCRIBE_MODEL", "base")
MAX_AUDIO_MINUTES = env_int("MAX_AUDIO_MINUTES", 600)
PDF_MAX_PAGES = env_int("PDF_MAX_PAGES", 5000)
# A hostile PDF can make one page's text take minutes; past this the job fails as pdf_too_complex.
PDF_MAX_SECONDS = env_int("PDF_MAX_SECONDS", 1800)
OCR_LANGUAGES = env_str("OCR_LANGUAGES", "eng+deu")
# An image larger than this is refused as image_too_large before its pixels are decoded (a 48 MP
# phone photo is within it; a "decompression bomb" is not).
IMAGE_MAX_PIXELS = env_int("IMAGE_MAX_PIXELS", 100_000_000)
# Web pages added by their address are fetched by the worker (ingestion/extract/web.py): the whole
# fetch, redirects included, within this many seconds, and at most this much HTML (decompressed).
WEB_FETCH_TIMEOUT_SECONDS = env_int("WEB_FETCH_TIMEOUT_SECONDS", 20)
WEB_PAGE_MAX_MB = env_int("WEB_PAGE_MAX_MB", 10)
if WEB_FETCH_TIMEOUT_SECONDS < 1 or WEB_PAGE_MAX_MB < 1:
    raise ImproperlyConfigured("WEB_FETCH_TIMEOUT_SECONDS and WEB_PAGE_MAX_MB must be 1 or more")
# Only public addresses are fetched: not this machine, its LAN or anything else a person's typed
# address could reach inside the server's network. These networks (CIDR, comma-separated) are
# fetched all the same — `127.0.0.0/8,::1` for pages served on this machine, `192.168.1.0/24` for a
# wiki at home. Link-local addresses (169.254.0.0/16, fe80::/10: cloud metadata services) never are.
WEB_FETCH_ALLOWED_NETWORKS = env_networks("WEB_FETCH_ALLOWED_NETWORKS")
# A calendar's events are read from this many days before its upload to this many after: a weekly
# event with no end would otherwise never stop. Reprocessing reads the same window (it is the upload's).
CALENDAR_DAYS_BEFORE = env_int("CALENDAR_DAYS_BEFORE", 365)
CALENDAR_DAYS_AFTER = env_int("CALENDAR_DAYS_AFTER", 365)
if CALENDAR_DAYS_BEFORE < 0 or CALENDAR_DAYS_AFTER < 0:
    raise ImproperlyConfigured("CALENDAR_DAYS_BEFORE and CALENDAR_DAYS_AFTER must be 0 or more")

OPENAI_BASE_URL = env_str("OPENAI_BASE_URL", "http://127.0.0.1:8081/v1")
OPENAI_API_KEY = env_str("OPENAI_API_KEY", "local")
CHAT_MODEL = env_str("CHAT_MODEL", "qwen2.5-coder-1.5b-instruct")
CHAT_MODEL_PATH = Path(env_str("CHAT_MODEL_PATH", str(MODELS_DIR / "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf")))
CHAT_TIMEOUT_SECONDS = env_int("CHAT_TIMEOUT_SECONDS", 120)
CHAT_MAX_TOKENS = env_int("CHAT_MAX_TOKENS", 300)
# The model's context window (llama.cpp's server is started with this n_ctx) and the most of it that
# earlier turns of a conversation may take; tokens are counted with the model's own vocabulary
# when CHAT_MODEL_PATH is a local GGUF, else estimated.
CHAT_CONTEXT_TOKENS = env_int("CHAT_CONTEXT_TOKENS", 4096)
CHAT_HISTORY_TOKENS = env_int("CHAT_HISTORY_TOKENS", 1024)

SEARCH_DEFAULT_K = 8
SEARCH_MAX_K = 50
# Cosine similarity (MiniLM) below which a passage is not shown to the model; with none left the chat
# says "not in your notes" without asking it. Measured with `python -m bench context` and end to end
# (bench/RESULTS.md, 2026-11-26): 0.2 keeps more answering passages on every yardstick, but with the
# 0.5B model the first week's confirming half fell (18 of 62 right against 23 at 0.3: the extra weak
# passages led it to answer absent facts and false premises), so 0.3 stays.
RELEVANCE_MIN_SIMILARITY = float(env_str("RELEVANCE_MIN_SIMILARITY", "0.3"))
# A passage under that is kept still when its sentence nearest to the question reaches this: a short
# note of mixed lines ("booked back in for 14 Oct" among the repair's costs) reads 0.27 as a whole.
# `python -m bench context` (2026-12-02): at 0.4 the first week's tuning half keeps 97 % of its answering
# passages (91 % without), no unanswerable or off-topic question is let through on any yardstick, and
# the confirming halves hold (97 %, SQuAD 95 %, LoCoMo 84 %).
RELEVANCE_MIN_SENTENCE_SIMILARITY = float(env_str("RELEVANCE_MIN_SENTENCE_SIMILARITY", "0.4"))
ANSWER_CONTEXT_PASSAGES = 6
# A fact question is shown only the passages within this of the best one's similarity (the question's or
# its nearest sentence's); a list or a summary reads them all. `python -m bench context` (2026-12-07): at
# 0.15 the first week keeps 97 % / 97 % of its answering passages (as with none) in 134 / 132 words
# shown against 171 / 163; SQuAD 88 % / 95 % (the same) in 263 / 297 words against 309 / 319; LoCoMo
# 66 % / 83 % against 67 % / 84 %.
RELEVANCE_MARGIN = float(env_str("RELEVANCE_MARGIN", "0.15"))

# `text` (what `make run` shows): the usual line, an event's fields after it as key=value (logfmt);
# `json`: one JSON object a line, for a log collector. Either way each request (secondbrain.request)
# and each ingestion job's stage and end (ingestion.pipeline) is one line with its fields (logs.py).
LOG_FORMAT = env_str("LOG_FORMAT", "text")
if LOG_FORMAT not in {"text", "json"}:
    raise ImproperlyConfigured(f"LOG_FORMAT must be 'text' or 'json', not {LOG_FORMAT!r}")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "text": {"()": "secondbrain.logs.TextFormatter"},
        "json": {"()": "secondbrain.logs.JsonFormatter"},
    },
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": LOG_FORMAT}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    "loggers": {"httpx": {"level": "WARNING"}, "httpx2": {"level": "WARNING"}},
}

# GET /metrics in Prometheus's text format (secondbrain/metrics.py): off (404) unless enabled. On, it
# answers a request bearing METRICS_TOKEN (`Authorization: Bearer …`) from anywhere when the token is
# set, and without one only a request from this machine (loopback). Samples are counted in Redis, so
# the web, worker and beat processes add to the same counts; off, nothing is written.
METRICS_ENABLED = env_bool("METRICS_ENABLED", False)
METRICS_TOKEN = env_str("METRICS_TOKEN", "")
