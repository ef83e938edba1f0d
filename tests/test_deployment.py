"""Production settings: no start with a guessable SECRET_KEY, https and its headers behind the proxy,
a health check that still answers, and a Content-Security-Policy on every response."""

import os
import subprocess
import sys

import pytest
from django.conf import settings
from django.core.management.utils import get_random_secret_key
from django.test import Client, override_settings

from secondbrain.settings import DEVELOPMENT_SECRET_KEY
from tests.factories import PASSWORD, make_user

STRONG_KEY = get_random_secret_key()


# The settings a deployment turns on, printed by a process that imported them.
SECURE = [
    "SECURE_SSL_REDIRECT",
    "SESSION_COOKIE_SECURE",
    "CSRF_COOKIE_SECURE",
    "SECURE_HSTS_SECONDS",
    "SECURE_HSTS_INCLUDE_SUBDOMAINS",
    "SIGNUP_OPEN",
]
PRINT_SECURE = f"import secondbrain.settings as s; print([getattr(s, name) for name in {SECURE!r}])"


def start(**environment: str) -> subprocess.CompletedProcess[str]:
    """Import the settings in a fresh interpreter, as a process starting with this environment does,
    and print those of SECURE."""
    env = {key: value for key, value in os.environ.items() if key not in {"SECRET_KEY", "DEBUG", *SECURE}}
    return subprocess.run(
        [sys.executable, "-c", PRINT_SECURE],
        cwd=settings.BASE_DIR,
        env={**env, **environment},
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize(
    ("key", "reason"),
    [
        (None, "is not set"),
        ("", "is not set"),
        (DEVELOPMENT_SECRET_KEY, "is the public development key"),
        ("django-insecure-" + STRONG_KEY, "is a development key"),
        ("change-me", "is too weak"),
        (STRONG_KEY[:49], "is too weak"),
        ("abcd" * 20, "is too weak"),
    ],
    # Named by their reason, not the key: a random key would name the test differently in each
    # process of a parallel run, which then refuses to start.
    ids=["unset", "empty", "public", "django-insecure", "short", "49-characters", "repetitive"],
)
def test_without_debug_the_app_refuses_to_start_with_a_guessable_secret_key(key: str | None, reason: str) -> None:
    result = start(DEBUG="false", **({} if key is None else {"SECRET_KEY": key}))
    assert result.returncode != 0
    assert "ImproperlyConfigured: SECRET_KEY " + reason in result.stderr, result.stderr


def test_without_debug_it_starts_with_a_strong_key_and_everything_secure() -> None:
    production = start(DEBUG="false", SECRET_KEY=STRONG_KEY)
    assert production.returncode == 0, production.stderr
    assert production.stdout.strip() == "[True, True, True, 31536000, True, False]"  # sign-up closed
    # Each is a setting of its own.
    relaxed = start(DEBUG="false", SECRET_KEY=STRONG_KEY, SECURE_SSL_REDIRECT="false", SIGNUP_OPEN="true")
    assert relaxed.stdout.strip() == "[False, True, True, 31536000, True, True]"


def test_make_run_needs_no_key_and_works_over_plain_http() -> None:
    development = start()
    assert development.returncode == 0, development.stderr
    # Sign-up stays closed in the settings themselves: `make run` opens it (secondbrain/stack.py).
    assert development.stdout.strip() == "[False, False, False, 0, False, False]"


PRODUCTION = {
    "DEBUG": False,
    "ALLOWED_HOSTS": ["brain.example.org"],
    "SECURE_SSL_REDIRECT": True,
    "SECURE_PROXY_SSL_HEADER": ("HTTP_X_FORWARDED_PROTO", "https"),
    "SESSION_COOKIE_SECURE": True,
    "CSRF_COOKIE_SECURE": True,
    "SECURE_HSTS_SECONDS": 31_536_000,
    "SECURE_HSTS_INCLUDE_SUBDOMAINS": True,
}


@override_settings(**PRODUCTION)
def test_behind_the_proxy_pages_are_https_only_with_their_security_headers(db: None) -> None:
    client = Client()
    plain = client.get("/accounts/login/", HTTP_HOST="brain.example.org")
    assert plain.status_code == 301 and plain["Location"] == "https://brain.example.org/accounts/login/"

    page = client.get("/accounts/login/", HTTP_HOST="brain.example.org", HTTP_X_FORWARDED_PROTO="https")
    assert page.status_code == 200
    assert page["Strict-Transport-Security"] == "max-age=31536000; includeSubDomains"
    assert page["X-Content-Type-Options"] == "nosniff"
    assert page["Referrer-Policy"] == "same-origin"
    assert page["X-Frame-Options"] == "DENY"
    policy = dict(directive.split(" ", 1) for directive in page["Content-Security-Policy"].split("; "))
    assert policy["default-src"] == policy["script-src"] == policy["style-src"] == policy["connect-src"] == "'self'"
    assert policy["frame-ancestors"] == policy["object-src"] == "'none'"
    assert page.cookies["csrftoken"]["secure"]

    make_user("reader")
    login = {"username": "reader", "password": PASSWORD}
    signed_in = client.post("/accounts/login/", login, HTTP_HOST="brain.example.org", HTTP_X_FORWARDED_PROTO="https")
    assert signed_in.status_code == 302 and signed_in.cookies["sessionid"]["secure"]


@override_settings(**PRODUCTION)
def test_the_health_check_answers_over_plain_http_whatever_its_host(db: None) -> None:
    """The container's health check calls daphne directly: no https, and its own address as the host."""
    response = Client().get("/healthz", HTTP_HOST="127.0.0.1:8000")
    assert response.status_code == 200 and response.content == b"ok"
    assert Client().get("/healthz/", HTTP_HOST="127.0.0.1:8000").status_code == 400  # only that path


def test_api_responses_carry_the_policy_too(db: None) -> None:
    response = Client().get("/api/sources")
    assert response.status_code == 401
    assert "frame-ancestors 'none'" in response["Content-Security-Policy"]


@override_settings(DEBUG=False)
def test_a_refused_form_gets_our_page_not_djangos_inline_styled_one(db: None) -> None:
    response = Client(enforce_csrf_checks=True).post("/accounts/login/", {"username": "x", "password": "y"})
    assert response.status_code == 403
    assert b"Please try again" in response.content
    assert b"<style" not in response.content and b"style=" not in response.content


def test_with_debug_djangos_technical_error_pages_are_shown_whole(db: None) -> None:
    """They rely on inline style and script; `make run` (DEBUG) sends them without the policy."""
    with override_settings(DEBUG=True):
        assert "Content-Security-Policy" not in Client().get("/no-such-page/")
    with override_settings(DEBUG=False):
        assert "Content-Security-Policy" in Client().get("/no-such-page/")
