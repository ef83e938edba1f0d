"""`POST /api/ask` with `Accept: text/event-stream`: the chat's events as Server-Sent Events, over daphne."""

import json
import time
import urllib.error
import urllib.request
from typing import Any

from tests.test_pipeline import GARDEN_NOTE, register


def post(url: str, body: dict[str, Any], token: str | None) -> Any:
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "Accept": "text/event-stream", "Authorization": f"Bearer {token}"},
        method="POST",
    )
    return urllib.request.urlopen(request, timeout=120)


def read_events(response: Any) -> list[tuple[float, str, dict[str, Any]]]:
    """(seconds since the request, event name, data) for each event, as the bytes arrive."""
    started = time.monotonic()
    events, name = [], ""
    for raw in response:
        line = raw.decode().rstrip("\n")
        if line.startswith("event: "):
            name = line.removeprefix("event: ")
        elif line.startswith("data: "):
            events.append((time.monotonic() - started, name, json.loads(line.removeprefix("data: "))))
    return events


def test_ask_streams_stages_tokens_then_the_cited_answer(web_server: str) -> None:
    api = register("streamer")
    job = api.wait_for_job(api.post("/notes", {"text": GARDEN_NOTE}).json()["job_id"])
    assert job["status"] == "done"

    with post(
        f"{web_server}/api/ask", {"question": "When do the tomatoes go into the raised bed?"}, api.token
    ) as response:
        assert response.headers["Content-Type"].startswith("text/event-stream")
        events = read_events(response)
    names = [name for _, name, _ in events]
    assert names[0] == "start" and names[-1] == "done", names
    assert "stage" in names and "token" in names
    assert all(data["type"] == name for _, name, data in events)
    first_token = next(at for at, name, _ in events if name == "token")
    # Streamed, not buffered: the first token reached the client while the model was still writing
    # (a buffered response delivers every event within the same millisecond).
    assert events[-1][0] - first_token > 0.05, events
    done = events[-1][2]
    assert "12 May" in done["answer"] and done["citations"] and not done["abstained"]

    # The same conversation continues; another user's conversation is a plain 404, before any stream.
    with post(f"{web_server}/api/ask", {"question": "And the watering?", "conversation_id": done["conversation_id"]},
              api.token) as response:  # fmt: skip
        assert read_events(response)[-1][2]["conversation_id"] == done["conversation_id"]
    intruder = register("intruder")
    try:
        post(f"{web_server}/api/ask", {"question": "Hi?", "conversation_id": done["conversation_id"]}, intruder.token)
        raise AssertionError("another user's conversation answered")
    except urllib.error.HTTPError as error:
        assert error.code == 404
        assert json.loads(error.read())["error"]["code"] == "not_found"


def test_a_bad_question_is_a_json_error_not_a_stream(web_server: str) -> None:
    api = register("asker")
    try:
        post(f"{web_server}/api/ask", {"question": "   "}, api.token)
        raise AssertionError("an empty question streamed")
    except urllib.error.HTTPError as error:
        assert error.code == 422
        assert json.loads(error.read())["error"]["code"] == "empty_question"
