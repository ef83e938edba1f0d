"""The websockets, through Channels' WebsocketCommunicator against the real ASGI app and Redis layer."""

import asyncio
import re

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.test import Client

from accounts.models import User
from secondbrain.asgi import application
from tests.factories import ApiClient
from tests.test_pipeline import GARDEN_NOTE

pytestmark = pytest.mark.asyncio
_EVENT = re.compile(r'data-event="(\w+)"')


def session_headers(user: User) -> list[tuple[bytes, bytes]]:
    client = Client()
    client.force_login(user)
    cookie = client.cookies["sessionid"].value
    return [(b"cookie", f"sessionid={cookie}".encode()), (b"origin", b"http://testserver")]


async def receive_until(communicator: WebsocketCommunicator, pattern: str, timeout: float = 120) -> list[str]:
    messages: list[str] = []
    async with asyncio.timeout(timeout):
        while not messages or not re.search(pattern, messages[-1]):
            messages.append(await communicator.receive_from(timeout=timeout))
    return messages


@pytest.fixture
def gardener(celery_worker: None) -> tuple[User, list[tuple[bytes, bytes]]]:
    user = User.objects.create_user("gardener", password="x-long-enough-Passw0rd")
    api = ApiClient.for_user(user)
    job = api.post("/notes", {"text": GARDEN_NOTE}).json()
    assert api.wait_for_job(job["job_id"])["status"] == "done"
    return user, session_headers(user)


async def test_chat_streams_stages_then_tokens_then_citations(gardener: tuple[User, list]) -> None:
    _, headers = gardener
    communicator = WebsocketCommunicator(application, "/ws/chat/", headers=headers)
    connected, _ = await communicator.connect()
    assert connected
    try:
        await communicator.send_json_to({"question": "When do the tomatoes go into the raised bed?", "conversation_id": ""})
        messages = await receive_until(communicator, 'data-event="done"')
    finally:
        await communicator.disconnect()
    events = [match.group(1) if (match := _EVENT.search(message)) else "other" for message in messages]
    assert events[0] == "start"
    assert events[-1] == "done"
    stages = [i for i, e in enumerate(events) if e == "stage"]
    tokens = [i for i, e in enumerate(events) if e == "token"]
    citations = [i for i, e in enumerate(events) if e == "citation"]
    assert stages and tokens and citations, events
    assert max(stages) < min(tokens) and max(tokens) < min(citations) < events.index("done")
    assert "Searching your notes" in messages[stages[0]]
    assert "Found 1 passage" in "".join(messages[i] for i in stages) or "Found 2 passages" in "".join(
        messages[i] for i in stages
    )
    assert "12 May" in "".join(re.sub(r"<[^>]+>", "", messages[i]) for i in tokens)
    assert "Garden plan" in messages[citations[0]] and "#chunk-" in messages[citations[0]]


async def test_chat_refuses_an_anonymous_socket(db: None) -> None:
    communicator = WebsocketCommunicator(application, "/ws/chat/", headers=[(b"origin", b"http://testserver")])
    connected, _ = await communicator.connect()
    assert not connected


async def test_jobs_refuses_an_anonymous_socket(db: None) -> None:
    communicator = WebsocketCommunicator(application, "/ws/jobs/", headers=[(b"origin", b"http://testserver")])
    connected, _ = await communicator.connect()
    assert not connected


async def test_chat_reports_an_empty_question_as_an_error(gardener: tuple[User, list]) -> None:
    _, headers = gardener
    communicator = WebsocketCommunicator(application, "/ws/chat/", headers=headers)
    assert (await communicator.connect())[0]
    try:
        await communicator.send_json_to({"question": "   "})
        message = await communicator.receive_from(timeout=10)
    finally:
        await communicator.disconnect()
    assert 'data-code="empty_question"' in message and "Ask a question first." in message


async def test_job_progress_reaches_only_the_owners_page(gardener: tuple[User, list]) -> None:
    user, headers = gardener
    other = await sync_to_async(User.objects.create_user)("neighbour", password="x-long-enough-Passw0rd")
    mine = WebsocketCommunicator(application, "/ws/jobs/", headers=headers)
    theirs = WebsocketCommunicator(application, "/ws/jobs/", headers=await sync_to_async(session_headers)(other))
    assert (await mine.connect())[0] and (await theirs.connect())[0]
    try:
        api = await sync_to_async(ApiClient.for_user)(user)
        job = await sync_to_async(api.post)("/notes", {"text": "Call the plumber about the leaking tap."})
        source_id = job.json()["source_id"]
        messages = await receive_until(mine, 'data-status="done"', timeout=60)
        assert all(f'id="job-{source_id}"' in message for message in messages)
        assert any('data-status="running"' in message for message in messages)
        assert await theirs.receive_nothing(timeout=0.5)
    finally:
        await mine.disconnect()
        await theirs.disconnect()


async def test_an_idle_chat_socket_stays_open(gardener: tuple[User, list]) -> None:
    _, headers = gardener
    communicator = WebsocketCommunicator(application, "/ws/chat/", headers=headers)
    assert (await communicator.connect())[0]
    try:
        # Longer than both the channel layer's 5 s blocking read and redis-py's default read timeout.
        assert await communicator.receive_nothing(timeout=7)
        await communicator.send_json_to({"question": ""})
        message = await communicator.receive_from(timeout=10)
    finally:
        await communicator.disconnect()
    assert 'data-code="empty_question"' in message
