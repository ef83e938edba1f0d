"""The websockets, through Channels' WebsocketCommunicator against the real ASGI app and Redis layer."""

import asyncio
import contextlib
import re
from collections.abc import AsyncIterator
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.test import Client

from accounts.models import User
from chat.consumers import ChatConsumer
from chat.models import Message
from ingestion.models import Source
from secondbrain.asgi import application
from tests.factories import ApiClient
from tests.processes import free_port
from tests.scripted_model import Script, ScriptedModel
from tests.test_pipeline import GARDEN_NOTE

pytestmark = pytest.mark.asyncio
_EVENT = re.compile(r'data-event="(\w+)"')


def session_headers(user: User) -> list[tuple[bytes, bytes]]:
    client = Client()
    client.force_login(user)
    cookie = client.cookies["sessionid"].value
    return [(b"cookie", f"sessionid={cookie}".encode()), (b"origin", b"http://testserver")]


@contextlib.asynccontextmanager
async def chat_socket(headers: list[tuple[bytes, bytes]]) -> AsyncIterator[WebsocketCommunicator]:
    """The chat websocket, connected with `headers` (a session cookie and an Origin), closed afterwards."""
    communicator = WebsocketCommunicator(application, "/ws/chat/", headers=headers)
    assert (await communicator.connect())[0]
    try:
        yield communicator
    finally:
        await communicator.disconnect()


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
        await communicator.send_json_to(
            {"question": "When do the tomatoes go into the raised bed?", "conversation_id": ""}
        )
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
    async with chat_socket(headers) as communicator:
        await communicator.send_json_to({"question": "   "})
        message = await communicator.receive_from(timeout=10)
    assert 'data-code="empty_question"' in message and "Ask a question first." in message


async def test_job_progress_reaches_only_the_owners_page(gardener: tuple[User, list]) -> None:
    user, headers = gardener
    other = await sync_to_async(User.objects.create_user)("neighbour", password="x-long-enough-Passw0rd")
    mine = WebsocketCommunicator(application, "/ws/jobs/", headers=headers)
    theirs = WebsocketCommunicator(application, "/ws/jobs/", headers=await sync_to_async(session_headers)(other))
    assert (await mine.connect())[0] and (await theirs.connect())[0]
    try:
        await receive_until(mine, 'data-status="done"', timeout=10)  # the garden note's, just done (below)
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


async def test_a_page_whose_socket_joins_after_a_job_ended_is_told_it_ended(gardener: tuple[User, list]) -> None:
    # The page showed the job running when it was rendered; the worker finished before its socket joined.
    user, headers = gardener
    source_id = await database_sync_to_async(lambda: Source.objects.get(owner=user).pk)()
    other = await sync_to_async(User.objects.create_user)("neighbour", password="x-long-enough-Passw0rd")
    mine = WebsocketCommunicator(application, "/ws/jobs/", headers=headers)
    theirs = WebsocketCommunicator(application, "/ws/jobs/", headers=await sync_to_async(session_headers)(other))
    assert (await mine.connect())[0] and (await theirs.connect())[0]
    try:
        message = await mine.receive_from(timeout=10)
        assert f'id="job-{source_id}"' in message and 'data-status="done"' in message and "Ready" in message
        assert await mine.receive_nothing(timeout=0.5)
        assert await theirs.receive_nothing(timeout=0.5)
    finally:
        await mine.disconnect()
        await theirs.disconnect()


async def test_an_idle_chat_socket_stays_open(gardener: tuple[User, list]) -> None:
    _, headers = gardener
    async with chat_socket(headers) as communicator:
        # Longer than both the channel layer's 5 s blocking read and redis-py's default read timeout.
        assert await communicator.receive_nothing(timeout=7)
        await communicator.send_json_to({"question": ""})
        message = await communicator.receive_from(timeout=10)
    assert 'data-code="empty_question"' in message


async def ask(communicator: WebsocketCommunicator, payload: dict[str, Any], until: str = 'data-event="done"') -> str:
    await communicator.send_json_to(payload)
    return "".join(await receive_until(communicator, until))


async def answers_of(conversation_id: int) -> list[Message]:
    # database_sync_to_async closes the connection afterwards: one left open in the executor's
    # thread is killed by the worker fixture's teardown and breaks the next test's first query.
    query = Message.objects.filter(conversation_id=conversation_id, role=Message.Role.ASSISTANT).order_by("id")
    return await database_sync_to_async(list)(query)


def conversation_of(html: str) -> int:
    return int(re.search(r'id="conversation-id" value="(\d+)"', html).group(1))  # type: ignore[union-attr]


async def test_stop_keeps_the_partial_answer_marked_stopped(
    gardener: tuple[User, list], scripted_model: ScriptedModel
) -> None:
    _, headers = gardener
    scripted_model.script = Script(tokens=[f"word{n} " for n in range(40)], delay=0.2)
    async with chat_socket(headers) as communicator:
        await communicator.send_json_to({"question": "When do the tomatoes go into the raised bed?"})
        started = "".join(await receive_until(communicator, "word2"))
        assert 'class="secondary stop"' in started  # Stop is offered while the answer streams
        stopped = "".join(await receive_until_stopped(communicator))
        assert await communicator.receive_nothing(timeout=0.5)  # no token after the stop
    (answer,) = await answers_of(conversation_of(started))
    assert answer.status == Message.Status.STOPPED
    assert answer.content.startswith("word0 word1 word2") and "word39" not in answer.content
    assert answer.content in re.sub(r"<[^>]+>", "", stopped).replace("\n", "") or "word2" in stopped
    assert "Stopped." in stopped and "Regenerate" in stopped and "Copy" in stopped
    assert 'class="secondary stop"' not in stopped


async def receive_until_stopped(communicator: WebsocketCommunicator) -> list[str]:
    await communicator.send_json_to({"action": "stop"})
    return await receive_until(communicator, 'data-event="stopped"', timeout=20)


async def test_a_dropped_socket_stores_the_partial_answer_as_stopped(
    gardener: tuple[User, list], scripted_model: ScriptedModel
) -> None:
    _, headers = gardener
    scripted_model.script = Script(tokens=[f"word{n} " for n in range(40)], delay=0.2)
    communicator = WebsocketCommunicator(application, "/ws/chat/", headers=headers)
    assert (await communicator.connect())[0]
    await communicator.send_json_to({"question": "When do the tomatoes go into the raised bed?"})
    started = "".join(await receive_until(communicator, "word1"))
    await communicator.disconnect()
    (answer,) = await answers_of(conversation_of(started))
    assert answer.status == Message.Status.STOPPED and answer.content.startswith("word0 word1")


async def test_a_socket_closed_while_its_answer_is_being_stopped_still_closes() -> None:
    """The server (or a test's event loop) closing a consumer while it waits for a stopped answer to be
    stored: the answer's cancellation ends in the consumer, its own must not, or it waits for ever."""

    async def answer() -> None:
        try:
            await asyncio.sleep(60)  # writing
        except asyncio.CancelledError:
            await asyncio.shield(asyncio.sleep(0.3))  # the partial answer being stored, as answer_stream does
            raise

    consumer = ChatConsumer()
    consumer.answering = asyncio.create_task(answer())
    await asyncio.sleep(0.01)
    stopping = asyncio.create_task(consumer._cancel())  # a "stop", or the socket dropped
    await asyncio.sleep(0.1)
    stopping.cancel()  # and now the consumer itself is closed
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(stopping, timeout=5)
    assert stopping.cancelled()


async def test_regenerate_replaces_the_last_answer_in_place(
    gardener: tuple[User, list], scripted_model: ScriptedModel
) -> None:
    _, headers = gardener
    async with chat_socket(headers) as communicator:
        first = await ask(communicator, {"question": "When do the tomatoes go into the raised bed?"})
        conversation_id = conversation_of(first)
        (old,) = await answers_of(conversation_id)
        turn = re.search(r'id="turn-(\d+)"', first).group(1)  # type: ignore[union-attr]
        scripted_model.script = Script(tokens=["They go in ", "on 12 May, ", "after the last frost ", "[1]."])
        again = await ask(communicator, {"action": "regenerate", "conversation_id": str(conversation_id)})
    # The same turn's answer is replaced; the question is not asked a second time.
    assert f'id="turn-{turn}" data-status="streaming" hx-swap-oob="true"' in again
    assert 'class="msg msg--user"' not in again
    assert "after the last frost" in re.sub(r"<[^>]+>", "", again)
    answers = await answers_of(conversation_id)
    assert [answer.pk for answer in answers] != [old.pk] and len(answers) == 1
    questions = await database_sync_to_async(
        Message.objects.filter(conversation_id=conversation_id, role="user").count
    )()
    assert questions == 1


async def test_a_model_server_that_is_down_ends_in_an_error_with_retry(
    gardener: tuple[User, list], settings: Any
) -> None:
    _, headers = gardener
    settings.OPENAI_BASE_URL = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens there
    async with chat_socket(headers) as communicator:
        html = await ask(communicator, {"question": "When do the tomatoes go into the raised bed?"})
    assert 'data-code="model_unavailable"' in html and "cannot be reached" in html
    assert 'name="action" value="regenerate"' in html and ">Retry</button>" in html
    (answer,) = await answers_of(conversation_of(html))
    assert answer.status == Message.Status.FAILED and answer.error_code == "model_unavailable"


async def test_regenerating_another_users_conversation_is_refused(
    gardener: tuple[User, list], scripted_model: ScriptedModel
) -> None:
    _, headers = gardener
    other = await sync_to_async(User.objects.create_user)("neighbour", password="x-long-enough-Passw0rd")
    mine = WebsocketCommunicator(application, "/ws/chat/", headers=headers)
    theirs = WebsocketCommunicator(application, "/ws/chat/", headers=await sync_to_async(session_headers)(other))
    assert (await mine.connect())[0] and (await theirs.connect())[0]
    try:
        html = await ask(mine, {"question": "When do the tomatoes go into the raised bed?"})
        conversation_id = conversation_of(html)
        (before,) = await answers_of(conversation_id)
        await theirs.send_json_to({"action": "regenerate", "conversation_id": str(conversation_id)})
        refused = await theirs.receive_from(timeout=20)
    finally:
        await mine.disconnect()
        await theirs.disconnect()
    assert 'data-code="not_found"' in refused
    assert [answer.pk for answer in await answers_of(conversation_id)] == [before.pk]


async def test_earlier_messages_left_out_of_the_context_are_noted_live_and_on_reload(
    gardener: tuple[User, list], scripted_model: ScriptedModel, settings: Any
) -> None:
    user, headers = gardener
    settings.CHAT_HISTORY_TOKENS = 1  # no earlier turn fits
    async with chat_socket(headers) as communicator:
        first = await ask(communicator, {"question": "When do the tomatoes go into the raised bed?"})
        conversation_id = conversation_of(first)
        second = await ask(
            communicator, {"question": "And when do they come out?", "conversation_id": str(conversation_id)}
        )
    assert "Earlier messages were left out" not in first
    assert "Earlier messages were left out: 2 did not fit" in second
    client = Client()
    await database_sync_to_async(client.force_login)(user)
    page = (await database_sync_to_async(client.get)(f"/chat/{conversation_id}/")).content.decode()
    assert page.count("Earlier messages were left out") == 1


async def test_a_greeting_gets_no_regenerate_button_and_an_answer_does(
    gardener: tuple[User, list], scripted_model: ScriptedModel
) -> None:
    _, headers = gardener
    async with chat_socket(headers) as communicator:
        hello = await ask(communicator, {"question": "hi"})
        answer = await ask(communicator, {"question": "When do the tomatoes go into the raised bed?"})
    assert "Hello!" in hello and ">Regenerate</button>" not in hello
    assert ">Regenerate</button>" in answer
