"""Your data is yours: change the password, list and revoke tokens, export everything, delete the account."""

import io
import json
import zipfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.apps import apps
from django.contrib.auth import SESSION_KEY
from django.contrib.sessions.models import Session
from django.db import models
from django.test import Client

from accounts.models import ApiToken, User
from chat.models import Citation, Message
from ingestion.models import Source
from tests.factories import PASSWORD, ApiClient, assert_error, make_answer, make_source

pytestmark = pytest.mark.django_db

NEW_PASSWORD = "another-long-Passw0rd-42"
PDF = b"%PDF-1.4\n% the tenancy agreement\n" + bytes(range(256)) * 64


def signed_in(user: User) -> Client:
    client = Client()
    assert client.login(username=user.username, password=PASSWORD)
    return client


def library(user: User) -> dict[str, Any]:
    """A note, an uploaded PDF and a conversation citing both."""
    note = make_source(user, 'Budget: Q3 — "final" #1', "We agreed on forty thousand.")
    pdf = make_source(user, "Tenancy", "The rent is due on the first.", file=("tenancy agreement.pdf", PDF))
    answer = make_answer(user, [note, pdf], "What did we agree?")
    return {"note": note, "pdf": pdf, "answer": answer}


# Password


def test_changing_the_password_signs_out_other_browsers_but_not_this_one(user: User) -> None:
    here, elsewhere = signed_in(user), signed_in(user)
    response = here.post(
        "/settings/password/",
        {"old_password": PASSWORD, "new_password": NEW_PASSWORD, "new_password_again": NEW_PASSWORD},
    )
    assert response.status_code == 302 and response["Location"] == "/settings/"
    assert here.get("/settings/").status_code == 200
    assert elsewhere.get("/settings/").status_code == 302  # to the log-in page
    assert not Client().login(username=user.username, password=PASSWORD)
    assert Client().login(username=user.username, password=NEW_PASSWORD)


@pytest.mark.parametrize(
    ("old", "new", "again", "error"),
    [
        ("wrong-password", NEW_PASSWORD, NEW_PASSWORD, "not your current password"),
        (PASSWORD, "123", "123", "too short"),
        (PASSWORD, NEW_PASSWORD, NEW_PASSWORD + "x", "differ"),
    ],
)
def test_a_wrong_old_or_weak_new_password_changes_nothing(
    user: User, old: str, new: str, again: str, error: str
) -> None:
    client = signed_in(user)
    response = client.post(
        "/settings/password/", {"old_password": old, "new_password": new, "new_password_again": again}
    )
    assert response.status_code == 422 and error in response.content.decode()
    assert Client().login(username=user.username, password=PASSWORD)


def test_the_api_changes_the_password(user: User, api: ApiClient) -> None:
    assert_error(
        api.post("/auth/password", {"old_password": "wrong", "new_password": NEW_PASSWORD}), 403, "wrong_password"
    )
    assert_error(api.post("/auth/password", {"old_password": PASSWORD, "new_password": "123"}), 422, "invalid_password")
    assert api.post("/auth/password", {"old_password": PASSWORD, "new_password": NEW_PASSWORD}).status_code == 204
    assert ApiClient().post("/auth/token", {"username": user.username, "password": NEW_PASSWORD}).status_code == 200
    assert_error(
        ApiClient().post("/auth/token", {"username": user.username, "password": PASSWORD}), 401, "invalid_credentials"
    )


# API tokens


def test_tokens_are_listed_without_their_secret_and_a_revoked_one_fails_at_once(user: User) -> None:
    first, second = ApiClient.for_user(user), ApiClient.for_user(user)
    listed = first.get("/auth/tokens")
    assert listed.status_code == 200
    assert [set(token) for token in listed.json()] == [{"id", "name", "prefix", "created_at", "last_used_at"}] * 2
    assert first.token and second.token
    assert first.token not in listed.content.decode() and second.token not in listed.content.decode()
    page = signed_in(user).get("/settings/").content.decode()
    assert first.token not in page and f"{first.token[:8]}…" in page

    second_id = ApiToken.objects.get(prefix=second.token[:8]).pk
    assert first.delete(f"/auth/tokens/{second_id}").status_code == 204
    assert_error(second.get("/sources"), 401, "unauthorized")
    assert first.get("/sources").status_code == 200
    assert [token["id"] for token in first.get("/auth/tokens").json()] != [second_id]


def test_the_settings_page_revokes_a_token(user: User) -> None:
    api = ApiClient.for_user(user)
    token = ApiToken.objects.get(user=user)
    response = signed_in(user).post(f"/settings/tokens/{token.pk}/revoke/", follow=True)
    assert "no longer works" in response.content.decode()
    assert_error(api.get("/jobs"), 401, "unauthorized")


def test_another_users_token_is_404_and_keeps_working(user: User, other_user: User, other_api: ApiClient) -> None:
    theirs = ApiToken.objects.get(user=other_user)
    assert_error(ApiClient.for_user(user).delete(f"/auth/tokens/{theirs.pk}"), 404, "not_found")
    assert signed_in(user).post(f"/settings/tokens/{theirs.pk}/revoke/").status_code == 404
    assert other_api.get("/sources").status_code == 200
    assert [token["id"] for token in ApiClient.for_user(user).get("/auth/tokens").json()] != [theirs.pk]


# Export


def _export(user: User, via: str) -> zipfile.ZipFile:
    if via == "api":
        response = ApiClient.for_user(user).get("/export")
    else:
        response = signed_in(user).get("/settings/export/")
    assert response.status_code == 200, response.content
    assert response["Content-Type"] == "application/zip"
    assert response["Content-Disposition"].startswith("attachment;")
    return zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content)))


@pytest.mark.parametrize("via", ["api", "page"])
def test_the_export_holds_the_notes_files_and_conversations(user: User, other_user: User, via: str) -> None:
    mine = library(user)
    make_source(other_user, "Mallory's diary", "Nothing for Alice to see.")
    archive = _export(user, via)
    names = archive.namelist()
    assert {"README.md", "manifest.json"} <= set(names)

    note = mine["note"]
    [note_name] = [name for name in names if name.startswith("notes/")]
    _, front, body = archive.read(note_name).decode().split("---\n", 2)
    meta = yaml.safe_load(front)
    assert meta["title"] == note.title and meta["kind"] == "note"
    assert meta["date"] == note.occurred_at  # YAML reads the ISO date back as the same moment
    assert body.strip() == note.text

    [file_name] = [name for name in names if name.startswith("files/")]
    assert file_name.endswith("tenancy-agreement.pdf")
    assert archive.read(file_name) == PDF

    [conversation_name] = [name for name in names if name.startswith("conversations/")]
    conversation = json.loads(archive.read(conversation_name))
    question, answer = conversation["messages"]
    assert (question["role"], question["content"]) == ("user", "What did we agree?")
    assert answer["citations"][0] == {
        "marker": 1,
        "source_id": note.pk,
        "source_title": note.title,
        "anchor": {"heading": [note.title]},
        "excerpt": "We agreed on forty thousand.",
    }
    manifest = json.loads(archive.read("manifest.json"))
    assert {source["path"] for source in manifest["sources"]} == {note_name, file_name}
    assert b"Mallory" not in b"".join(archive.read(name) for name in names)


def test_the_export_needs_a_signed_in_user() -> None:
    assert_error(ApiClient().get("/export"), 401, "unauthorized")
    assert Client().get("/settings/export/").status_code == 302


# Deleting the account


def _everything_of(user_id: int, message_ids: list[int], citation_ids: list[int]) -> list[str]:
    """What the database still holds of the user: every row of every model with a key to a user
    (found by looking, so a model added later is checked too), their messages and citations, sessions."""
    left = []
    for model in apps.get_models():
        for field in model._meta.concrete_fields:
            if isinstance(field, models.ForeignKey) and field.related_model is User:
                if model._default_manager.filter(**{field.attname: user_id}).exists():
                    left.append(f"{model.__name__}.{field.name}")
    if User.objects.filter(pk=user_id).exists():
        left.append("User")
    if Message.objects.filter(pk__in=message_ids).exists():
        left.append("Message")
    if Citation.objects.filter(pk__in=citation_ids).exists():
        left.append("Citation")
    if any(session.get_decoded().get(SESSION_KEY) == str(user_id) for session in Session.objects.all()):
        left.append("Session")
    return left


def test_deleting_the_account_leaves_nothing_of_it(
    user: User, other_user: User, media_root: Path, django_capture_on_commit_callbacks: Any
) -> None:
    mine, theirs = library(user), library(other_user)
    ApiClient.for_user(user)
    api = ApiClient.for_user(user)
    elsewhere, here = signed_in(user), signed_in(user)
    message_ids = list(Message.objects.filter(conversation__owner=user).values_list("pk", flat=True))
    citation_ids = list(Citation.objects.filter(message__conversation__owner=user).values_list("pk", flat=True))
    my_file, their_file = Path(mine["pdf"].file.path), Path(theirs["pdf"].file.path)
    assert my_file.exists() and len(message_ids) == 2 and len(citation_ids) == 2
    assert _everything_of(user.pk, message_ids, citation_ids)  # the check sees data while it is there

    wrong = here.post("/settings/delete-account/", {"delete-password": "not-it"})
    assert wrong.status_code == 422 and "not your current password" in wrong.content.decode()
    assert Source.objects.filter(owner=user).count() == 2

    with django_capture_on_commit_callbacks(execute=True):
        response = here.post("/settings/delete-account/", {"delete-password": PASSWORD})
    assert response.status_code == 302 and response["Location"] == "/accounts/login/"

    assert _everything_of(user.pk, message_ids, citation_ids) == []
    assert not my_file.exists()
    assert [path for path in media_root.rglob("*") if path.is_file()] == [their_file]
    assert here.get("/settings/").status_code == 302 and elsewhere.get("/settings/").status_code == 302
    assert_error(api.get("/sources"), 401, "unauthorized")
    # The other user keeps everything.
    assert Source.objects.filter(owner=other_user).count() == 2
    assert Citation.objects.filter(message__conversation__owner=other_user).count() == 2
    assert ApiToken.objects.filter(user=other_user).exists() is False  # they never made one
    assert signed_in(other_user).get("/settings/").status_code == 200


def test_the_api_deletes_the_account_with_its_password(
    user: User, media_root: Path, django_capture_on_commit_callbacks: Any
) -> None:
    mine = library(user)
    api = ApiClient.for_user(user)
    message_ids = list(Message.objects.filter(conversation__owner=user).values_list("pk", flat=True))
    citation_ids = list(Citation.objects.filter(message__conversation__owner=user).values_list("pk", flat=True))
    assert_error(api.delete("/auth/account", {"password": "not-it"}), 403, "wrong_password")
    assert_error(api.delete("/auth/account", {}), 422, "invalid_request")
    assert Source.objects.filter(owner=user).count() == 2
    with django_capture_on_commit_callbacks(execute=True):
        assert api.delete("/auth/account", {"password": PASSWORD}).status_code == 204
    assert _everything_of(user.pk, message_ids, citation_ids) == []
    assert not Path(mine["pdf"].file.path).exists()
    assert_error(api.get("/sources"), 401, "unauthorized")


# Owners only


def test_the_new_routes_refuse_anonymous_requests() -> None:
    anonymous = ApiClient()
    assert_error(
        anonymous.post("/auth/password", {"old_password": PASSWORD, "new_password": NEW_PASSWORD}), 401, "unauthorized"
    )
    assert_error(anonymous.get("/auth/tokens"), 401, "unauthorized")
    assert_error(anonymous.delete("/auth/tokens/1"), 401, "unauthorized")
    assert_error(anonymous.delete("/auth/account", {"password": PASSWORD}), 401, "unauthorized")
    for path in ["/settings/password/", "/settings/tokens/1/revoke/", "/settings/delete-account/"]:
        response = Client().post(path)
        assert response.status_code == 302 and response["Location"].startswith("/accounts/login/"), path


def test_the_settings_page_offers_each_control(user: User) -> None:
    page = signed_in(user).get("/settings/").content.decode()
    for action in ["/settings/password/", "/settings/export/", "/settings/delete-account/"]:
        assert action in page
    assert 'name="delete-password"' in page and 'name="old_password"' in page
    assert 'href="/settings/"' in page  # the header links to it


def test_the_api_docs_list_the_new_routes() -> None:
    paths = Client().get("/api/openapi.json").json()["paths"]
    assert {"post", "delete"} <= set(paths["/api/auth/password"]) | set(paths["/api/auth/account"])
    assert "get" in paths["/api/export"] and "delete" in paths["/api/auth/tokens/{token_id}"]
    assert "delete" in paths["/api/conversations/{conversation_id}"]
