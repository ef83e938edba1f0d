"""Rates of use (secondbrain/limits.py), counted in the real Redis: asking, adding sources, creating
API tokens and log-ins, answered with 429 and Retry-After. Each test sets a low rate of its own."""

import re
import time
from typing import Any

import pytest
from channels.testing import WebsocketCommunicator
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from accounts.models import ApiToken, User
from ingestion.models import Source
from secondbrain import limits
from secondbrain.asgi import application
from tests.chat.test_consumers import session_headers
from tests.factories import PASSWORD, ApiClient, assert_error, make_user
from tests.processes import free_port

pytestmark = pytest.mark.django_db


@pytest.fixture
def rates(settings: Any) -> dict[str, tuple[int, int]]:
    """The rates, to lower in a test: {rule: (count, seconds)}."""
    settings.RATE_LIMITS = dict(settings.RATE_LIMITS)
    return settings.RATE_LIMITS


def assert_rate_limited(response: Any, period: int) -> None:
    assert_error(response, 429, "rate_limited")
    assert 1 <= int(response["Retry-After"]) <= period


@pytest.mark.django_db(transaction=True)  # an answer is written on a thread of its own
def test_asking_past_the_rate_is_a_429_with_retry_after_and_a_sentence(api: ApiClient, rates: dict) -> None:
    rates["ask"] = (2, 60)
    for _ in range(2):
        assert api.post("/ask", {"question": "What did I plant?"}).status_code == 200
    refused = api.post("/ask", {"question": "What did I plant?"})
    assert_rate_limited(refused, 60)
    assert "2 per minute" in refused.json()["error"]["message"]
    streamed = api.client.post(
        "/api/ask", {"question": "And now?"}, content_type="application/json",
        headers={**api._headers(), "Accept": "text/event-stream"},
    )  # fmt: skip
    assert_rate_limited(streamed, 60)


@pytest.mark.django_db(transaction=True)  # an answer is written on a thread of its own
def test_asking_is_counted_per_person(api: ApiClient, other_api: ApiClient, rates: dict) -> None:
    rates["ask"] = (1, 60)
    assert api.post("/ask", {"question": "Hello?"}).status_code == 200
    assert other_api.post("/ask", {"question": "Hello?"}).status_code == 200
    assert_rate_limited(api.post("/ask", {"question": "Hello again?"}), 60)


def test_a_rate_holds_across_the_turn_of_a_minute(rates: dict) -> None:
    # "2 per 2 seconds": two uses just before a whole 2 s, a third just after it, is three in 0.6 s.
    rates["ask"] = (2, 2)
    time.sleep(1.7 - time.time() % 2 if time.time() % 2 < 1.7 else 3.7 - time.time() % 2)
    limits.rate_spend("ask", "someone")
    limits.rate_spend("ask", "someone")
    time.sleep(0.5)
    with pytest.raises(limits.RateLimited):
        limits.rate_spend("ask", "someone")


def test_retry_after_is_when_the_next_use_is_let_in(rates: dict) -> None:
    rates["ask"] = (2, 2)
    limits.rate_spend("ask", "someone")
    limits.rate_spend("ask", "someone")
    with pytest.raises(limits.RateLimited) as refused:
        limits.rate_spend("ask", "someone")
    wait = refused.value.retry_after
    assert wait is not None and 1 <= wait <= 2
    # Asking again at once is refused too, and does not push the wait back.
    with pytest.raises(limits.RateLimited) as again:
        limits.rate_spend("ask", "someone")
    assert again.value.retry_after is not None and again.value.retry_after <= wait
    time.sleep(wait)
    limits.rate_spend("ask", "someone")


@pytest.fixture
def user_headers(user: User) -> list[tuple[bytes, bytes]]:
    return session_headers(user)


@pytest.mark.asyncio
@pytest.mark.django_db(transaction=True)  # the socket reads the session on a thread of its own
async def test_the_chat_shows_an_error_event_past_the_rate(
    user: User, user_headers: list[tuple[bytes, bytes]], rates: dict
) -> None:
    rates["ask"] = (1, 60)
    await limits.arate_spend("ask", user.pk)  # the one question of this minute, asked elsewhere
    communicator = WebsocketCommunicator(application, "/ws/chat/", headers=user_headers)
    assert (await communicator.connect())[0]
    try:
        await communicator.send_json_to({"question": "When do the tomatoes go in?", "conversation_id": ""})
        event = await communicator.receive_from(timeout=30)
    finally:
        await communicator.disconnect()
    assert 'data-event="error"' in event and 'data-code="rate_limited"' in event, event
    assert "asking faster than this server allows" in event and "Try again in" in event
    assert re.search(r'name="question" value="When do the tomatoes go in\?"', event)  # its Retry button


def test_adding_sources_past_the_rate_is_refused_on_the_api_and_the_page(
    api: ApiClient, user: User, rates: dict
) -> None:
    rates["upload"] = (2, 3600)
    assert api.post("/notes", {"text": "First note."}).status_code == 202
    upload = api.client.post(
        "/api/uploads", {"file": SimpleUploadedFile("a.md", b"# A\n\nSecond.")}, headers=api._headers()
    )
    assert upload.status_code == 202
    assert_rate_limited(api.post("/notes", {"text": "Third note."}), 3600)
    page = Client()
    page.force_login(user)
    dropped = page.post("/uploads/", {"file": SimpleUploadedFile("b.md", b"# B\n\nThird.")})
    assert dropped.status_code == 429 and 1 <= int(dropped["Retry-After"]) <= 3600
    assert "adding sources faster" in dropped.content.decode()
    typed = page.post("/notes/", {"text": "Fourth."})
    assert typed.status_code == 429 and "adding sources faster" in typed.content.decode()
    assert Source.objects.count() == 2


def test_creating_api_tokens_past_the_rate_is_refused(user: User, rates: dict) -> None:
    rates["token"] = (2, 3600)
    credentials = {"username": "alice", "password": PASSWORD}
    for _ in range(2):
        assert ApiClient().post("/auth/token", credentials).status_code == 200
    assert_rate_limited(ApiClient().post("/auth/token", credentials), 3600)
    assert ApiToken.objects.filter(user=user).count() == 2


def test_failed_log_ins_pause_the_account_on_the_page_the_api_and_the_admin(user: User, rates: dict) -> None:
    rates["login_account"] = (2, 900)
    page = Client()
    for _ in range(2):
        wrong = page.post("/accounts/login/", {"username": "alice", "password": "not it"})
        assert wrong.status_code == 200  # the form again, with its error
    # The right password now waits too: the account is paused, whoever knows it.
    paused = page.post("/accounts/login/", {"username": "Alice ", "password": PASSWORD})
    assert paused.status_code == 429 and 1 <= int(paused["Retry-After"]) <= 900
    text = paused.content.decode()
    assert "Too many failed log-ins to this account" in text and "<form" not in text and "Try again" in text
    assert "_auth_user_id" not in page.session
    assert_rate_limited(ApiClient().post("/auth/token", {"username": "alice", "password": PASSWORD}), 900)
    admin = Client().post("/admin/login/", {"username": "alice", "password": PASSWORD})
    assert admin.status_code == 429 and "Too many failed log-ins" in admin.content.decode()
    # Another account from the same address logs in as ever.
    make_user("bob")
    assert Client().post("/accounts/login/", {"username": "bob", "password": PASSWORD}).status_code == 302


def test_log_in_attempts_are_counted_per_client_address(user: User, rates: dict) -> None:
    rates["login_address"] = (3, 60)
    for name in ("carol", "dave", "erin"):
        assert Client().post("/accounts/login/", {"username": name, "password": "guess"}).status_code == 200
    refused = Client().post("/accounts/login/", {"username": "alice", "password": PASSWORD})
    assert refused.status_code == 429 and "from your network" in refused.content.decode()
    elsewhere = Client(REMOTE_ADDR="203.0.113.7").post("/accounts/login/", {"username": "alice", "password": PASSWORD})
    assert elsewhere.status_code == 302


@pytest.mark.django_db(transaction=True)  # an answer is written on a thread of its own
def test_the_default_rates_let_a_person_drop_twenty_files_and_ask_quickly(api: ApiClient) -> None:
    for number in range(20):
        body = f"# Note {number}\n\nSomething to remember, number {number}.".encode()
        response = api.client.post(
            "/api/uploads", {"file": SimpleUploadedFile(f"n{number}.md", body)}, headers=api._headers()
        )
        assert response.status_code == 202, (number, response.content)
    for _ in range(10):
        assert api.post("/ask", {"question": "What is number 7?"}).status_code == 200


def test_a_rate_that_cannot_be_counted_lets_the_request_through(api: ApiClient, settings: Any) -> None:
    """Redis restarting must not take uploads and log-ins down with it."""
    unreachable = f"redis://127.0.0.1:{free_port()}/0"
    settings.CACHES = {"default": {**settings.CACHES["default"], "LOCATION": unreachable}}
    assert api.post("/notes", {"text": "Written while Redis restarts."}).status_code == 202
    assert ApiClient().post("/auth/token", {"username": "alice", "password": PASSWORD}).status_code == 200


def test_accounts_created_from_one_address_are_limited(rates: dict) -> None:
    """With sign-up open, each new account would bring fresh per-person rates and quota."""
    rates["signup_address"] = (2, 3600)
    for name in ("bob", "carol"):
        assert ApiClient().post("/auth/register", {"username": name, "password": PASSWORD}).status_code == 201
    assert_rate_limited(ApiClient().post("/auth/register", {"username": "dave", "password": PASSWORD}), 3600)
    form = {"username": "erin", "password": PASSWORD, "password_again": PASSWORD}
    page = Client().post("/accounts/signup/", form)
    assert page.status_code == 429 and "Too many accounts were created from your network" in page.content.decode()
    assert Client(REMOTE_ADDR="203.0.113.7").post("/accounts/signup/", form).status_code == 302
    assert set(User.objects.values_list("username", flat=True)) == {"bob", "carol", "erin"}
