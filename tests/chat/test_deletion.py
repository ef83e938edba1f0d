"""Deleting a conversation or a source: what goes with it, and that nothing of it stays behind."""

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from accounts.models import User
from chat.models import Citation, Conversation, Message
from ingestion.models import Chunk, Job, Source
from tests.factories import ApiClient, assert_error, make_answer, make_source, make_user

pytestmark = pytest.mark.django_db

SECRET = "The locker code is 4471 and the spare key is under the blue pot."
KEPT = "Budget meeting: we agreed on forty thousand."


def signed_in(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _stored_text_of(user: User) -> str:
    """Everything stored about the user's answers, as one string to search."""
    messages = Message.objects.filter(conversation__owner=user)
    rows = [
        *messages.values("content", "trace", "citation_check"),
        *Citation.objects.filter(message__conversation__owner=user).values("source_title", "anchor", "excerpt"),
    ]
    return json.dumps(rows, default=str)


def test_deleting_a_conversation_takes_its_messages_and_citations(user: User, api: ApiClient) -> None:
    source = make_source(user, "Budget", KEPT)
    gone, kept = make_answer(user, [source]), make_answer(user, [source], "And the budget?")
    assert api.delete(f"/conversations/{gone.conversation_id}").status_code == 204
    assert not Conversation.objects.filter(pk=gone.conversation_id).exists()
    assert not Message.objects.filter(conversation_id=gone.conversation_id).exists()
    assert not Citation.objects.filter(message_id=gone.pk).exists()
    assert Citation.objects.filter(message_id=kept.pk).count() == 1  # the other conversation is untouched
    assert Source.objects.filter(pk=source.pk).exists()
    assert_error(api.delete(f"/conversations/{gone.conversation_id}"), 404, "not_found")


def test_another_users_conversation_is_404_and_stays(user: User, other_user: User, other_api: ApiClient) -> None:
    answer = make_answer(user, [make_source(user, "Budget", KEPT)])
    assert_error(other_api.delete(f"/conversations/{answer.conversation_id}"), 404, "not_found")
    assert signed_in(other_user).post(f"/chat/{answer.conversation_id}/delete/").status_code == 404
    assert Message.objects.filter(conversation_id=answer.conversation_id).count() == 2


def test_deleting_a_conversation_needs_a_signed_in_owner(user: User) -> None:
    answer = make_answer(user, [make_source(user, "Budget", KEPT)])
    assert_error(ApiClient().delete(f"/conversations/{answer.conversation_id}"), 401, "unauthorized")
    response = Client().post(f"/chat/{answer.conversation_id}/delete/")
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
    assert Conversation.objects.filter(pk=answer.conversation_id).exists()


def test_the_chat_page_asks_before_deleting_a_conversation(user: User) -> None:
    answer = make_answer(user, [make_source(user, "Budget", KEPT)])
    client = signed_in(user)
    page = client.get(f"/chat/{answer.conversation_id}/").content.decode()
    assert f'hx-post="/chat/{answer.conversation_id}/delete/"' in page and "hx-confirm=" in page
    response = client.post(f"/chat/{answer.conversation_id}/delete/", headers={"HX-Request": "true"})
    assert response.status_code == 204 and response["HX-Redirect"] == "/chat/"
    assert not Conversation.objects.filter(owner=user).exists()
    assert client.get(f"/chat/{answer.conversation_id}/").status_code == 404


def test_deleting_a_source_takes_its_words_out_of_answers(
    user: User, other_user: User, api: ApiClient, media_root: Path, django_capture_on_commit_callbacks: Any
) -> None:
    secret = make_source(user, "Locker", SECRET, file=("locker.pdf", b"%PDF-1.4 locker"))
    kept = make_source(user, "Budget", KEPT)
    answer = make_answer(user, [secret, kept])
    theirs = make_answer(other_user, [make_source(other_user, "Locker", SECRET)])  # same words, another user
    path = Path(secret.file.path)
    assert path.exists() and SECRET in _stored_text_of(user)

    with django_capture_on_commit_callbacks(execute=True):
        assert api.delete(f"/sources/{secret.pk}").status_code == 204

    stored = _stored_text_of(user)
    assert SECRET not in stored and "Locker" not in stored and "4471" not in stored
    assert KEPT in stored  # the other source's citation is intact
    assert not path.exists()
    cited = {citation.marker: citation for citation in Citation.objects.filter(message=answer)}
    assert (cited[1].source_id, cited[1].excerpt, cited[1].source_title) == (None, "", "Deleted source")
    assert (cited[2].excerpt, cited[2].source_title) == (KEPT, "Budget")
    answer.refresh_from_db()
    assert [passage["chunk_id"] for passage in answer.trace["passages"]] == [None, kept.chunks.get().pk]
    assert SECRET in _stored_text_of(other_user)  # only the owner's answers are rewritten
    assert Citation.objects.get(message=theirs).excerpt == SECRET


def _admin() -> Client:
    User.objects.create_superuser("root", password="x-long-enough-Passw0rd")
    client = Client()
    client.login(username="root", password="x-long-enough-Passw0rd")
    return client


@pytest.mark.parametrize(
    "delete",
    [
        lambda admin, source: admin.post(f"/admin/ingestion/source/{source.pk}/delete/", {"post": "yes"}),
        lambda admin, source: admin.post(
            "/admin/ingestion/source/", {"action": "delete_selected", "_selected_action": [source.pk], "post": "yes"}
        ),
        lambda admin, source: admin.post(
            "/admin/ingestion/source/", {"action": "delete_fast", "_selected_action": [source.pk]}
        ),
    ],
    ids=["delete-page", "delete-selected", "delete-fast"],
)
def test_the_admins_deletes_remove_the_file_and_the_words(
    user: User, django_capture_on_commit_callbacks: Any, delete: Callable[[Client, Source], Any]
) -> None:
    source = make_source(user, "Locker", SECRET, file=("locker.pdf", b"%PDF-1.4 locker"))
    answer = make_answer(user, [source])
    path = Path(source.file.path)
    admin = _admin()
    with django_capture_on_commit_callbacks(execute=True):
        assert delete(admin, source).status_code == 302
    assert not Source.objects.filter(pk=source.pk).exists()
    assert not path.exists()
    assert SECRET not in _stored_text_of(user) and "Locker" not in _stored_text_of(user)
    assert Citation.objects.get(message=answer).excerpt == ""


def test_an_admin_deleting_a_user_removes_their_rows_and_files(
    django_capture_on_commit_callbacks: Any, media_root: Path
) -> None:
    doomed, bystander = make_user("doomed"), make_user("bystander")
    paths = []
    for person in (doomed, bystander):
        source = make_source(person, "Locker", SECRET, file=("locker.pdf", f"%PDF {person.username}".encode()))
        make_answer(person, [source, make_source(person, "Budget", KEPT)])
        paths.append(Path(source.file.path))
    admin = _admin()
    with django_capture_on_commit_callbacks(execute=True):
        response = admin.post(f"/admin/accounts/user/{doomed.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302
    assert not User.objects.filter(pk=doomed.pk).exists()
    for rows in (Source.objects, Chunk.objects, Job.objects, Conversation.objects):
        assert not rows.filter(owner_id=doomed.pk).exists(), rows.model
    assert not paths[0].exists() and paths[1].exists()
    assert Source.objects.filter(owner=bystander).count() == 2
