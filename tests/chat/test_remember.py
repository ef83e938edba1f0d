"""Remember this: an answer saved, on request only, as a note of its own — its question, the answer,
its citations as links to their passages, attributed to its conversation — through the note pipeline."""

from typing import Any

import pytest
from django.test import Client

from accounts.models import User
from chat import services
from chat.models import Message
from ingestion.models import Job, Source
from tests.factories import ApiClient, make_answer, make_source, make_user

QUESTION = "When do the tomatoes go into the raised bed?"


@pytest.fixture
def answer(user: User) -> Message:
    plan = make_source(user, "Garden plan", "The tomatoes go into the raised bed on 12 May, after the last frost.")
    shed = make_source(user, "Shed inventory", "The rain barrel by the shed holds three hundred litres.")
    return make_answer(user, [plan, shed], question=QUESTION)


def remembered_notes(owner: User) -> Any:
    return Source.objects.filter(owner=owner, metadata__has_key="remembered")


def test_nothing_is_remembered_unless_asked(answer: Message) -> None:
    assert not remembered_notes(answer.conversation.owner).exists()


def test_it_saves_the_question_answer_and_citation_links_as_a_note_of_the_owner(
    api: ApiClient, user: User, answer: Message
) -> None:
    response = api.post(f"/messages/{answer.pk}/remember")

    assert response.status_code == 201, response.content
    body = response.json()
    note = Source.objects.get(pk=body["source_id"])
    assert body == {
        "source_id": note.pk,
        "title": f"Remembered: {QUESTION}",
        "status": "pending",
        "created": True,
        "conversation_id": answer.conversation_id,
        "message_id": answer.pk,
    }
    assert note.owner == user and note.kind == Source.Kind.NOTE and note.title == f"Remembered: {QUESTION}"
    assert QUESTION in note.text and "Here it is [1] [2]." in note.text
    for citation in answer.citations.all():  # the citation cards' addresses: the passage on its source's page
        assert f"[{citation.source_title}](/sources/{citation.source_id}/#chunk-{citation.chunk_id})" in note.text
    assert f"(/chat/{answer.conversation_id}/)" in note.text
    question = answer.conversation.messages.get(role=Message.Role.USER)
    assert note.metadata["remembered"] == {
        "conversation_id": answer.conversation_id,
        "message_id": answer.pk,
        "question_id": question.pk,
    }
    assert note.occurred_at == answer.created_at
    # A normal source of hers: listed with the others and queued for the note pipeline.
    assert note.pk in {item["id"] for item in api.get("/sources").json()}
    assert Job.objects.filter(source=note, status=Job.Status.QUEUED).count() == 1


def test_remembering_twice_gives_the_same_note(api: ApiClient, user: User, answer: Message) -> None:
    first = api.post(f"/messages/{answer.pk}/remember")
    again = api.post(f"/messages/{answer.pk}/remember")

    assert (first.status_code, again.status_code) == (201, 200)
    assert again.json()["source_id"] == first.json()["source_id"] and again.json()["created"] is False
    assert remembered_notes(user).count() == 1
    assert Job.objects.filter(source_id=first.json()["source_id"]).count() == 1


def test_it_hides_another_users_message(answer: Message, other_api: ApiClient, other_user: User) -> None:
    response = other_api.post(f"/messages/{answer.pk}/remember")

    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"
    assert not Source.objects.filter(metadata__has_key="remembered").exists()
    assert "Garden plan" not in response.content.decode()


def test_it_refuses_a_question_or_an_answer_that_found_nothing(api: ApiClient, answer: Message) -> None:
    question = answer.conversation.messages.get(role=Message.Role.USER)
    Message.objects.filter(pk=answer.pk).update(abstained=True)

    for message_id in (question.pk, answer.pk):
        response = api.post(f"/messages/{message_id}/remember")
        assert response.status_code == 422, response.content
        assert response.json()["error"]["code"] == "not_rememberable"
    assert not remembered_notes(answer.conversation.owner).exists()


def test_the_chat_page_offers_it_and_then_links_to_the_note(user: User, answer: Message) -> None:
    client = Client()
    client.force_login(user)
    page = client.get(f"/chat/{answer.conversation_id}/").content.decode()
    assert "Remember this" in page and f'hx-post="/chat/messages/{answer.pk}/remember/"' in page

    fragment = client.post(f"/chat/messages/{answer.pk}/remember/", headers={"HX-Request": "true"})
    note = remembered_notes(user).get()
    assert fragment.status_code == 200
    assert "Remembered" in fragment.content.decode() and f'href="/sources/{note.pk}/"' in fragment.content.decode()

    page = client.get(f"/chat/{answer.conversation_id}/").content.decode()
    assert "Remember this" not in page and f'href="/sources/{note.pk}/"' in page
    source_page = client.get(f"/sources/{note.pk}/").content.decode()
    assert f'Remembered from <a href="/chat/{answer.conversation_id}/">' in source_page
    # Posted without htmx: back to the conversation, and still the one note.
    plain = client.post(f"/chat/messages/{answer.pk}/remember/")
    assert plain.status_code == 302 and plain["Location"] == f"/chat/{answer.conversation_id}/"
    assert remembered_notes(user).count() == 1


@pytest.mark.django_db(transaction=True)
def test_the_note_goes_through_the_pipeline_and_is_found_by_search(celery_worker: None) -> None:
    owner = make_user("rememberer")
    api = ApiClient.for_user(owner)
    answer = make_answer(owner, [make_source(owner, "Garden plan", "Tomatoes go out on 12 May.")], question=QUESTION)

    remembered = services.message_remember(user=owner, message_id=answer.pk)

    job = Job.objects.get(source=remembered.source)
    assert api.wait_for_job(job.pk)["status"] == "done"
    hits = api.get("/search", q="tomatoes raised bed question").json()["results"]
    assert remembered.source.pk in {hit["source_id"] for hit in hits}
    assert remembered.source.chunks.exists()
