"""The audit log: sources added and deleted through each interface are written by the services, with
the interface and the token, and the person reads them under Settings → Activity — only their own."""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from accounts.models import ApiToken, AuditEntry, User
from ingestion.models import Source
from tests.accounts.test_your_data import _export as export_of
from tests.factories import ApiClient
from tests.ingestion.test_uploads import PDF, upload

pytestmark = pytest.mark.django_db


def signed_in(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_adding_and_deleting_through_the_api_is_logged_with_the_token(api: ApiClient, user: User) -> None:
    token = ApiToken.objects.get(user=user)
    note = api.post("/notes", {"title": "Budget", "text": "We agreed on 40k."}).json()["source_id"]
    pdf = upload(api, "scan.pdf", PDF.read_bytes()).json()["source_id"]
    assert api.delete(f"/sources/{note}").status_code == 204
    entries = list(AuditEntry.objects.filter(user=user).order_by("id"))
    assert [(e.action, e.name, e.detail["source_id"]) for e in entries] == [
        ("source_add", "note", note),
        ("source_add", "pdf", pdf),
        ("source_delete", "note", note),
    ]
    assert {(e.channel, e.token_id, e.token_label) for e in entries} == {
        ("api", token.pk, f"{token.prefix}…")  # the factory's token has no name
    }
    assert "40k" not in str([e.detail for e in entries])  # ids and sizes, never the words


def test_the_page_and_a_session_are_logged_without_a_token(user: User) -> None:
    client = signed_in(user)
    client.post("/notes/", {"title": "Plan", "text": "Paint the shed."})
    client.post("/uploads/", {"file": SimpleUploadedFile("todo.md", b"# Todo\nFix the gate.")})
    source = Source.objects.get(owner=user, title="Plan")
    client.post(f"/sources/{source.pk}/delete/")
    entries = list(AuditEntry.objects.filter(user=user).order_by("id"))
    assert [(e.action, e.channel, e.token_id) for e in entries] == [
        ("source_add", "page", None),
        ("source_add", "page", None),
        ("source_delete", "page", None),
    ]


def test_revoking_a_token_keeps_its_name_in_the_log(api: ApiClient, user: User) -> None:
    api.post("/notes", {"title": "Budget", "text": "We agreed on 40k."})
    token = ApiToken.objects.get(user=user)
    token.delete()
    entry = AuditEntry.objects.get(user=user)
    assert entry.token_id is None and entry.token_label == f"{token.prefix}…"


def test_the_settings_page_shows_ones_own_activity_only(api: ApiClient, other_api: ApiClient, user: User) -> None:
    kept = api.post("/notes", {"title": "Kept plan", "text": "Water the roses."}).json()["source_id"]
    gone = api.post("/notes", {"title": "Gone plan", "text": "Sell the bike."}).json()["source_id"]
    api.delete(f"/sources/{gone}")
    other_api.post("/notes", {"title": "Mallory's secret", "text": "Her own words."})
    page = signed_in(user).get("/settings/").content.decode()
    assert page.count('class="audit-entry"') == 3
    assert f'href="/sources/{kept}/">Kept plan</a>' in page
    assert "Gone plan" not in page and "(since deleted)" in page  # a deleted source's title leaves the log
    assert "Mallory" not in page


def test_the_export_holds_the_activity(api: ApiClient, user: User) -> None:
    note = api.post("/notes", {"title": "Budget", "text": "We agreed on 40k."}).json()["source_id"]
    [entry] = json.loads(export_of(user, "page").read("activity.json"))
    assert (entry["action"], entry["name"], entry["channel"], entry["detail"]["source_id"]) == (
        "source_add", "note", "api", note,
    )  # fmt: skip
