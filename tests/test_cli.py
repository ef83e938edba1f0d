"""The command line: `manage.py ingest` on an Obsidian-style folder and `manage.py ask`, against the real
database, queue and worker; and front matter read the same way on the page and through the API."""

import io
import os
import subprocess
import sys
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from accounts.models import User
from chat.models import Conversation
from ingestion.models import Source
from ingestion.notes import NoteText, note_read
from secondbrain import stack
from tests.factories import ApiClient, make_user
from tests.ingestion.test_uploads import upload
from tests.scripted_model import Script, ScriptedModel

LISBON = ZoneInfo("Europe/Lisbon")

GARDEN = """---
title: Tomato plan
date: 2026-05-03
tags: [garden, "#tomatoes"]
---
# Garden plan

The tomatoes go into the [[Raised bed]] on 12 May, after the last frost.
Until then the seedlings stay in [[Greenhouse|the greenhouse by the shed]].
"""

TRIP = """---
date: 2026-04-02 09:30
tags: travel, porto
---
Took the early train to Porto with Ines; lunch by the river.
"""


def vault(root: Path) -> Path:
    """An Obsidian vault: notes with front matter in nested folders, its settings folder, and broken files."""
    (root / ".obsidian").mkdir(parents=True)
    (root / ".obsidian" / "workspace.json").write_text('{"main": {}}')
    (root / "Garden.md").write_text(GARDEN)
    (root / "Journal" / "2026").mkdir(parents=True)
    (root / "Journal" / "2026" / "Trip to Porto.md").write_text(TRIP)
    (root / "Journal" / "Empty.md").write_bytes(b"")
    (root / "Journal" / "2026" / "scan.pdf").write_bytes(b"%PDF-1.7\n" + b"\x8f\x13 not really a pdf " * 300)
    (root / "attachments").mkdir()
    (root / "attachments" / "photo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(64))
    return root


def ingest(*args: str) -> tuple[str, str, CommandError | None]:
    out, err = io.StringIO(), io.StringIO()
    try:
        call_command("ingest", *args, stdout=out, stderr=err)
    except CommandError as exc:
        return out.getvalue(), err.getvalue(), exc
    return out.getvalue(), err.getvalue(), None


def ask(question: str, user: str) -> tuple[str, CommandError | None]:
    out = io.StringIO()
    try:
        call_command("ask", question, user=user, stdout=out, stderr=io.StringIO())
    except CommandError as exc:
        return out.getvalue(), exc
    return out.getvalue(), None


@pytest.fixture
def lisboeta(transactional_db: None) -> User:
    user = make_user("lisboeta")
    user.time_zone = "Europe/Lisbon"
    user.save(update_fields=["time_zone"])
    return user


def test_ingest_adds_a_vault_and_ask_answers_from_it(
    celery_worker: None, lisboeta: User, tmp_path: Path, scripted_model: ScriptedModel
) -> None:
    out, _, failure = ingest(str(vault(tmp_path / "vault")), "--user", "lisboeta", "--wait")

    # The notes, titled and dated by their front matter (the file's name when it has no title).
    notes = {source.title: source for source in Source.objects.filter(owner=lisboeta, kind=Source.Kind.NOTE)}
    assert set(notes) == {"Tomato plan", "Trip to Porto"}, out
    garden, trip = notes["Tomato plan"], notes["Trip to Porto"]
    assert garden.occurred_at == datetime(2026, 5, 3, tzinfo=LISBON)
    assert trip.occurred_at == datetime(2026, 4, 2, 9, 30, tzinfo=LISBON)
    assert (garden.metadata["tags"], trip.metadata["tags"]) == (["garden", "tomatoes"], ["travel", "porto"])
    assert garden.text.startswith("# Garden plan") and "title:" not in garden.text
    assert "into the Raised bed on 12 May" in garden.text and "the greenhouse by the shed." in garden.text
    assert all(source.status == Source.Status.READY for source in notes.values())

    # The summary: what was added, what was passed over, and what failed with the worker's own reason.
    assert "Added: 2" in out and "“Tomato plan”" in out
    skipped = out.split("Skipped:")[1].split("Failed:")[0]
    assert ".obsidian: hidden" in skipped
    failed = out.split("Failed:")[1]
    assert "Empty.md: empty_content: Empty.md is empty." in failed
    assert "scan.pdf: pdf_corrupt:" in failed
    assert "photo.png: image_unreadable:" in failed  # a PNG's header and nothing after it
    assert failure is not None and "3 of 5 files failed" in str(failure)
    # As after an upload, the damaged PDF stays listed as failed, so it can be deleted or reprocessed.
    assert Source.objects.get(owner=lisboeta, kind=Source.Kind.PDF).status == Source.Status.FAILED

    # Again: nothing twice.
    again, _, _ = ingest(str(tmp_path / "vault" / "Garden.md"), "--user", "lisboeta")
    assert "Added (processing continues in the worker): 0" in again and "duplicate: You already added" in again
    assert Source.objects.filter(owner=lisboeta).count() == 4

    # `ask` streams the model's answer through the chat's pipeline and lists the cited note.
    answer, error = ask("When do the tomatoes go into the raised bed?", "lisboeta")
    assert error is None, answer
    assert answer.startswith("The tomatoes go in on 12 May [1].")
    assert "Sources:\n[1] Tomato plan" in answer

    # Another person sees none of it.
    other = make_user("stranger")
    assert not Source.objects.filter(owner=other).exists()
    assert ApiClient.for_user(other).get("/sources").json() == []
    answer, error = ask("When do the tomatoes go into the raised bed?", "stranger")
    assert error is None and "Tomato plan" not in answer
    theirs = Conversation.objects.get(owner=lisboeta).pk
    printed = io.StringIO()
    with pytest.raises(CommandError, match=r"\(not_found\)"):
        call_command("ask", "And then?", "--conversation", str(theirs), user="stranger", stdout=printed)
    assert "Tomato" not in printed.getvalue()


def test_ask_exits_with_the_error_when_the_model_breaks_off(
    celery_worker: None, lisboeta: User, tmp_path: Path, scripted_model: ScriptedModel
) -> None:
    (tmp_path / "Garden.md").write_text(GARDEN)
    assert ingest(str(tmp_path / "Garden.md"), "--user", "lisboeta", "--wait")[2] is None
    scripted_model.script = Script(tokens=["The tomatoes ", "go in ", "on 12 May ", "[1]."], break_after=2)
    answer, error = ask("When do the tomatoes go into the raised bed?", "lisboeta")
    assert answer.startswith("The tomatoes go in")
    assert error is not None and error.returncode == 1 and "(model_stream_broken)" in str(error)


@pytest.mark.django_db
def test_the_commands_refuse_an_unknown_user_and_a_missing_path(tmp_path: Path) -> None:
    make_user("someone")
    with pytest.raises(CommandError, match="no user named 'nobody'"):
        call_command("ask", "Anything?", user="nobody")
    out, _, failure = ingest(str(tmp_path / "missing"), "--user", "someone")
    assert "missing: not_found" in out and failure is not None


@pytest.mark.django_db
def test_a_note_posted_with_front_matter_takes_its_title_and_date(api: ApiClient, user: User) -> None:
    body = api.post("/notes", {"text": "---\ntitle: Budget\ndate: 2026-03-05T10:00:00Z\ntags: [work]\n---\n"
                                       "# Q3\nWe agreed on 40k with [[Ines]]."}).json()  # fmt: skip
    source = Source.objects.get(pk=body["source_id"])
    assert (source.title, source.text) == ("Budget", "# Q3\nWe agreed on 40k with Ines.")
    assert source.occurred_at.isoformat() == "2026-03-05T10:00:00+00:00"
    assert api.get(f"/sources/{source.pk}").json()["metadata"]["tags"] == ["work"]
    # What the request says itself wins over the front matter.
    body = api.post("/notes", {"title": "Mine", "occurred_at": "2026-01-01T00:00:00Z",
                               "text": "---\ntitle: Theirs\ndate: 2026-03-05\n---\nOther words."}).json()  # fmt: skip
    source = Source.objects.get(pk=body["source_id"])
    assert (source.title, source.occurred_at.isoformat()) == ("Mine", "2026-01-01T00:00:00+00:00")


@pytest.mark.django_db
def test_an_uploaded_markdown_file_is_read_the_same_way(api: ApiClient) -> None:
    body = upload(api, "garden.md", GARDEN.encode()).json()
    source = Source.objects.get(pk=body["source_id"])
    assert (source.title, source.metadata["tags"]) == ("Tomato plan", ["garden", "tomatoes"])
    assert source.occurred_at == datetime(2026, 5, 3, tzinfo=ZoneInfo("UTC"))  # the owner's zone: UTC


@pytest.mark.django_db
def test_ingest_refuses_a_file_over_the_limit_with_the_apis_reason(tmp_path: Path, settings: Any) -> None:
    settings.MAX_UPLOAD_BYTES, settings.MAX_UPLOAD_MB = 1000, 0
    make_user("someone")
    (tmp_path / "long.md").write_text("word " * 300)
    out, _, failure = ingest(str(tmp_path / "long.md"), "--user", "someone")
    assert "long.md: file_too_large: The file is larger than the 0 MB limit." in out and failure is not None
    assert not Source.objects.exists()


@pytest.mark.django_db
def test_ingest_is_not_held_to_the_webs_upload_rate(tmp_path: Path, settings: Any) -> None:
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "upload": (1, 3600)}
    make_user("archivist")
    for day in range(3):
        (tmp_path / f"day-{day}.md").write_text(f"Day {day}: the heron was back on the canal.")
    out, _, failure = ingest(str(tmp_path), "--user", "archivist")
    assert failure is None, out
    assert Source.objects.filter(owner__username="archivist").count() == 3


@pytest.mark.django_db
def test_a_note_typed_on_the_page_with_front_matter_is_not_titled_with_dashes(user: User, client: Client) -> None:
    client.force_login(user)
    text = "---\ntitle: Ladder\ndate: 2026-02-14\n---\nBorrowed a ladder from Ines."
    assert client.post("/notes/", {"title": "", "text": text, "occurred_at": ""}).status_code == 302
    source = Source.objects.get(owner=user)
    assert (source.title, source.text) == ("Ladder", "Borrowed a ladder from Ines.")
    assert source.occurred_at == datetime(2026, 2, 14, tzinfo=ZoneInfo("UTC"))
    client.post("/notes/", {"title": "", "text": "---\nReminder: call Ana\n---\n", "occurred_at": ""})
    assert Source.objects.get(owner=user, text__contains="Ana").title == "Reminder: call Ana"
    only_front_matter = client.post("/notes/", {"title": "", "text": "---\ntitle: Nothing\n---\n", "occurred_at": ""})
    assert "only front matter" in only_front_matter.content.decode()


def test_a_note_opening_with_a_rule_keeps_it_and_odd_values_are_ignored() -> None:
    utc = ZoneInfo("UTC")
    ruled = "---\nJust a line between rules\n---\nMore."
    assert note_read(ruled, zone=utc).body == ruled
    between_rules = "---\nReminder: call Ana\n---\n"  # reads as a YAML mapping, but holds no property
    assert note_read(between_rules, zone=utc) == NoteText(body=between_rules)
    odd = note_read("---\ntitle: [a, b]\ndate: someday\ntags: 7\n---\nText", zone=utc)
    assert (odd.title, odd.occurred_at, odd.tags, odd.body) == ("", None, (), "Text")
    assert note_read("See [[Page#Part]] and ![[img.png]].", zone=utc).body == "See Page › Part and img.png."


def test_manage_py_beside_a_running_launcher_uses_its_services() -> None:
    """`make run` chooses Redis's port at start; `manage.py` in another terminal finds it with nothing set."""
    if stack.running_env():
        pytest.skip("a launcher is running in this checkout; its state file is not this test's to replace")
    env = {key: value for key, value in os.environ.items() if key != "REDIS_URL"}
    launcher = subprocess.Popen(
        [sys.executable, "-m", "secondbrain.stack", "env"],
        cwd=stack.BASE_DIR, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    try:
        exports = []
        for line in launcher.stdout or []:
            if line.startswith("# services are running"):
                break
            exports.append(line.strip())
        assert len(exports) == 1 and exports[0].startswith("export REDIS_URL="), exports
        redis_url = exports[0].removeprefix("export REDIS_URL=")
        assert stack.running_env() == {"REDIS_URL": redis_url}
        shell = subprocess.run(
            [sys.executable, "manage.py", "shell", "-c", "from django.conf import settings; print(settings.REDIS_URL)"],
            cwd=stack.BASE_DIR, env=env, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert shell.stdout.strip().splitlines()[-1] == redis_url, shell.stderr
    finally:
        launcher.terminate()
        launcher.wait(timeout=30)
    assert not stack.RUN_STATE.exists() and stack.running_env() == {}
