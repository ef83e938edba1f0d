"""Operations: a log line per request and per job stage, and /metrics in Prometheus's text format,
scraped from the real web server after real requests, a job run by a real Celery worker and an answer."""

import json
import logging
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from django.test import Client
from prometheus_client.parser import text_string_to_metric_families

from chat import llm
from tests.factories import ApiClient
from tests.mcp_server.test_tools import http_client
from tests.processes import app_env, request, web_process
from tests.scripted_model import ScriptedModel
from tests.test_pipeline import GARDEN_NOTE

TOKEN = "metrics-scrape-token-for-the-test"
SECRET_WORDS = "raised bed"  # from GARDEN_NOTE: no log line may carry a person's words


def samples(text: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def value(scraped: dict[tuple[str, frozenset[tuple[str, str]]], float], name: str, **labels: str) -> float:
    """The sum over the series of `name` whose labels include `labels`."""
    wanted = set(labels.items())
    return sum(v for (n, found), v in scraped.items() if n == name and wanted <= found)


def test_metrics_are_off_by_default(db: None) -> None:
    assert Client().get("/metrics").status_code == 404


def test_metrics_answer_only_the_token_or_loopback(db: None, settings: Any) -> None:
    settings.METRICS_ENABLED = True
    assert Client().get("/metrics").status_code == 200  # the test client is 127.0.0.1
    assert Client(REMOTE_ADDR="192.0.2.7").get("/metrics").status_code == 403
    settings.METRICS_TOKEN = TOKEN
    assert Client().get("/metrics").status_code == 403  # with a token set, loopback needs it too
    assert Client().get("/metrics", headers={"Authorization": "Bearer wrong"}).status_code == 403
    scraped = Client(REMOTE_ADDR="192.0.2.7").get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    assert scraped.status_code == 200 and scraped["Content-Type"].startswith("text/plain")
    assert "Content-Security-Policy" in scraped  # the middleware around it leaves it alone
    assert Client().post("/metrics", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 405


def test_a_request_is_one_log_line_with_its_fields(user: Any, api: ApiClient, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="secondbrain.request"):
        response = api.get(f"/sources/{12345}")
    assert response.status_code == 404
    lines = [record for record in caplog.records if record.name == "secondbrain.request"]
    assert len(lines) == 1
    fields = lines[0].fields  # type: ignore[attr-defined]
    assert fields["method"] == "GET" and fields["route"] == "/api/sources/<source_id>"
    assert fields["status"] == 404 and fields["user"] == user.pk and fields["duration_ms"] >= 0


def test_the_json_format_is_one_object_a_line(caplog: pytest.LogCaptureFixture) -> None:
    from secondbrain import logs

    with caplog.at_level(logging.INFO, logger="secondbrain.request"):
        logs.event(logging.getLogger("secondbrain.request"), "request", route="/search/", status=200, user=None)
    record = caplog.records[-1]
    entry = json.loads(logs.JsonFormatter().format(record))
    assert entry["message"] == "request" and entry["route"] == "/search/" and entry["user"] is None
    # logfmt's empty value
    assert logs.TextFormatter().format(record).endswith("request route=/search/ status=200 user=")


def scrape(url: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    status, text = request(f"{url}/metrics", token=TOKEN)
    assert status == 200, text
    return samples(text)


def test_metrics_move_with_requests_a_job_and_an_answer(
    celery_worker: None,
    scripted_model: ScriptedModel,
    settings: Any,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    settings.METRICS_ENABLED = True  # the worker runs in this process
    log = tmp_path / "daphne.log"
    server, url = web_process(app_env(METRICS_ENABLED="true", METRICS_TOKEN=TOKEN, LOG_FORMAT="json"), log)
    try:
        assert request(f"{url}/metrics")[0] == 403
        before = scrape(url)
        status, body = request(f"{url}/api/auth/register", body={"username": "metered", "password": "a-Long-pass-42"})
        assert status == 201, body
        token = body["token"]
        with caplog.at_level(logging.INFO, logger="ingestion.pipeline"):
            status, queued = request(f"{url}/api/notes", token=token, body={"text": GARDEN_NOTE})
            assert status == 202, queued
            deadline = time.monotonic() + 120
            while request(f"{url}/api/jobs/{queued['job_id']}", token=token)[1]["status"] != "done":
                assert time.monotonic() < deadline, "the job did not finish"
                time.sleep(0.2)
            # The job reads "done" before the worker logs its last stage and its run: wait for them here,
            # where the logger's level lets them through.
            while not any(record.getMessage() == "job" for record in caplog.records):
                assert time.monotonic() < deadline, "the job's run was not logged"
                time.sleep(0.05)
        assert request(f"{url}/api/search?q=tomatoes", token=token)[0] == 200
        status, answer = request(f"{url}/api/ask", token=token, body={"question": "When do the tomatoes go in?"})
        assert status == 200, answer

        async def mcp_search() -> None:
            async with http_client(f"{url}/mcp", token) as client:
                await client.call_tool("search_notes", {"query": "tomatoes"})

        anyio.run(mcp_search)
        after = scrape(url)
    finally:
        server.kill()
        server.wait(timeout=20)

    def moved(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    requests = "secondbrain_http_request_duration_seconds_count"
    assert moved(requests, route="/api/notes", method="POST", status="202") == 1
    assert moved(requests, route="/api/auth/register", status="201") == 1
    assert moved(requests, route="/api/jobs/<job_id>", status="200") >= 1
    assert moved(requests, route="/mcp", method="POST", status="200") >= 2  # the client's handshake, the call
    assert moved("secondbrain_http_request_duration_seconds_sum", route="/api/notes") > 0
    assert moved("secondbrain_job_duration_seconds_count", kind="note", outcome="done") == 1
    assert moved("secondbrain_job_stage_duration_seconds_count", kind="note", stage="embedding") == 1
    assert moved("secondbrain_search_duration_seconds_count") >= 2  # the search, and the answer's retrieval
    assert moved("secondbrain_model_first_token_seconds_count") == 1
    assert moved("secondbrain_model_answer_seconds_count", outcome="done") == 1
    assert moved("secondbrain_model_tokens_total", direction="in") > 50  # the prompt holds the note
    assert moved("secondbrain_model_tokens_total", direction="out") > 0

    # One JSON line per request in the web server's log, with its fields and none of the person's words.
    entries = [json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")]
    lines = [entry for entry in entries if entry["message"] == "request"]
    note = next(entry for entry in lines if entry["route"] == "/api/notes")
    assert note["method"] == "POST" and note["status"] == 202 and note["duration_ms"] > 0 and note["user"]
    assert not any(SECRET_WORDS in json.dumps(entry) for entry in lines)
    mcp = [entry for entry in lines if entry["route"] == "/mcp"]
    assert mcp and all(entry["method"] == "POST" and entry["user"] == note["user"] for entry in mcp)
    assert not any("tomatoes" in json.dumps(entry) for entry in mcp)  # the tool's arguments stay out
    # One line per job stage, and one for the run, from the worker.
    stages = [record.fields for record in caplog.records if record.getMessage() == "job stage"]  # type: ignore[attr-defined]
    assert [stage["stage"] for stage in stages] == ["extracting", "chunking", "embedding", "storing"], stages
    assert {stage["job"] for stage in stages} == {queued["job_id"]} and stages[-1]["outcome"] == "done"
    assert all(stage["kind"] == "note" and stage["duration_ms"] >= 0 for stage in stages)


def test_tokens_are_the_servers_counts_when_it_reports_them(
    db: None, scripted_model: ScriptedModel, settings: Any
) -> None:
    settings.METRICS_ENABLED = True
    scripted_model.script.usage = (1234, 56)
    before = samples(Client().get("/metrics").content.decode())

    async def ask() -> str:
        return "".join([token async for token in llm.chat_stream([{"role": "user", "content": "Hi"}], max_tokens=9)])

    assert anyio.run(ask) == "The tomatoes go in on 12 May [1]."
    after = samples(Client().get("/metrics").content.decode())
    tokens = "secondbrain_model_tokens_total"
    for direction, expected in (("in", 1234), ("out", 56)):
        moved = value(after, tokens, direction=direction, counted="server") - value(
            before, tokens, direction=direction, counted="server"
        )
        assert moved == expected
