"""The chat shows the range a question was read as, and its × asks again without it."""

import re
from datetime import datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.test import Client
from django.utils import timezone

from accounts.models import User
from chat.models import Message
from secondbrain.asgi import application
from tests.chat.test_consumers import receive_until, session_headers
from tests.factories import ApiClient

pytestmark = pytest.mark.asyncio
BERLIN = ZoneInfo("Europe/Berlin")


def yesterday() -> datetime:
    day = timezone.now().astimezone(BERLIN).date() - timedelta(days=1)
    return datetime.combine(day, time(10), tzinfo=BERLIN)


@pytest.fixture
def diarist(celery_worker: None) -> tuple[User, list[tuple[bytes, bytes]]]:
    user = User.objects.create_user("diarist", password="x-long-enough-Passw0rd", time_zone="Europe/Berlin")
    api = ApiClient.for_user(user)
    note = {"text": "Met Ines at the bakery; she lent me a ladder.", "occurred_at": yesterday().isoformat()}
    job = api.post("/notes", note)
    assert api.wait_for_job(job.json()["job_id"])["status"] == "done"
    return user, session_headers(user)


async def ask(communicator: WebsocketCommunicator, payload: dict[str, str]) -> str:
    await communicator.send_json_to(payload)
    return "".join(await receive_until(communicator, 'data-event="done"'))


async def test_a_dated_question_shows_a_chip_and_its_x_asks_again_without_dates(
    diarist: tuple[User, list[tuple[bytes, bytes]]],
) -> None:
    user, headers = diarist
    label = f"Content from {yesterday().day} {yesterday():%B %Y}"
    communicator = WebsocketCommunicator(application, "/ws/chat/", headers=headers)
    assert (await communicator.connect())[0]
    try:
        dated = await ask(communicator, {"question": "What happened yesterday?", "conversation_id": ""})
        conversation_id = re.search(r'id="conversation-id" value="(\d+)"', dated).group(1)  # type: ignore[union-attr]
        undated = await ask(
            communicator,
            {"question": "What happened yesterday?", "conversation_id": conversation_id, "ignore_dates": "true"},
        )
    finally:
        await communicator.disconnect()

    # A listing by time names that time's sources: the one note of yesterday, cited.
    assert "Listing 1 source" in dated and "Met Ines at the bakery" in dated
    assert label in dated
    assert f'aria-label="Ask again without the date filter: {label}"' in dated
    assert 'name="ignore_dates" value="true"' in dated
    assert 'class="chip"' not in undated

    replies = Message.objects.filter(conversation_id=conversation_id, role=Message.Role.ASSISTANT).order_by("id")
    answers = [answer async for answer in replies]
    assert [answer.trace["mode"] for answer in answers] == ["temporal", "semantic"]
    assert answers[0].trace["date_range"]["label"] == label
    assert answers[0].trace["date_range"]["since"] == yesterday().replace(hour=0).isoformat()
    assert answers[1].trace["date_range"] is None

    # Reopened later, the conversation still shows the chip on the dated answer only.
    client = Client()
    await sync_to_async(client.force_login)(user)
    page = (await sync_to_async(client.get)(f"/chat/{conversation_id}/")).content.decode()
    assert page.count('class="chip"') == 1 and label in page
