"""Answers of one web process are written at once (issue 21): one person's answer that waits, here on
a row another transaction holds, does not hold up another person's. Against daphne as `make run`
starts it, over real websockets, with the real database and Redis; the chat model is the scripted one."""

import contextlib
import json
import re
import time
from collections.abc import Iterator

import psycopg
import pytest
from django.db import connection
from django.test import Client
from websockets.sync.client import ClientConnection
from websockets.sync.client import connect as websocket_connect

from accounts.models import User
from chat.models import Conversation, Message
from tests.factories import ApiClient, make_user
from tests.processes import test_database_url as app_database_url  # not a test of this module
from tests.scripted_model import ScriptedModel
from tests.test_pipeline import GARDEN_NOTE

pytestmark = pytest.mark.django_db(transaction=True)
_EVENT = re.compile(r'data-event="(\w+)"')


@contextlib.contextmanager
def chat_socket(url: str, user: User) -> Iterator[ClientConnection]:
    client = Client()
    client.force_login(user)
    headers = {"Cookie": f"sessionid={client.cookies['sessionid'].value}", "Origin": url}
    ws_url = url.replace("http://", "ws://") + "/ws/chat/"
    with websocket_connect(ws_url, additional_headers=headers, open_timeout=60, close_timeout=5) as socket:
        yield socket


def events_until_done(socket: ClientConnection, timeout: float) -> list[tuple[str, str]]:
    """(event, its text) as the page receives them, up to `done` or an error."""
    events: list[tuple[str, str]] = []
    deadline = time.monotonic() + timeout
    while not events or events[-1][0] not in {"done", "error"}:
        message = str(socket.recv(timeout=max(0.1, deadline - time.monotonic())))
        match = _EVENT.search(message)
        events.append((match.group(1) if match else "other", re.sub(r"<[^>]+>|\s+", " ", message).strip()))
    return events


def waiting_on_a_lock() -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
        )
        row = cursor.fetchone()
    return int(row[0]) if row else 0


def test_an_answer_waiting_on_the_database_does_not_hold_up_another_persons(
    scripted_model: ScriptedModel, web_server: str
) -> None:
    alice, bob = make_user("alice"), make_user("bob")
    api = ApiClient.for_user(bob)
    note = api.post("/notes", {"text": GARDEN_NOTE}).json()
    assert api.wait_for_job(note["job_id"])["status"] == "done"
    garden = Conversation.objects.create(owner=alice, title="Garden")
    with (
        chat_socket(web_server, alice) as alice_socket,
        chat_socket(web_server, bob) as bob_socket,
        psycopg.connect(app_database_url()) as holder,
    ):
        # Alice's conversation is locked, as a long write to it would hold it: her follow-up waits for it.
        holder.execute("SELECT 1 FROM chat_conversation WHERE id = %s FOR UPDATE", [garden.pk])
        alice_socket.send(json.dumps({"question": "What else did I plan?", "conversation_id": garden.pk}))
        deadline = time.monotonic() + 30
        while not waiting_on_a_lock():
            assert time.monotonic() < deadline, "Alice's answer never reached her conversation's row"
            time.sleep(0.1)

        bob_socket.send(json.dumps({"question": "When do the tomatoes go into the raised bed?", "conversation_id": ""}))
        bob_events = events_until_done(bob_socket, timeout=60)

        kinds = [kind for kind, _ in bob_events]
        assert kinds[0] == "start" and kinds[-1] == "done", bob_events
        assert "12 May" in " ".join(text for kind, text in bob_events if kind == "token"), bob_events
        with pytest.raises(TimeoutError):  # Alice has still seen nothing: she waits, Bob did not
            alice_socket.recv(timeout=0.5)
        holder.rollback()

        alice_events = events_until_done(alice_socket, timeout=60)
    assert [kind for kind, _ in alice_events][0] == "start" and alice_events[-1][0] == "done", alice_events
    assert Message.objects.filter(conversation=garden, role=Message.Role.ASSISTANT).count() == 1
