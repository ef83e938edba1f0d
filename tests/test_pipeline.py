"""The whole path on real parts: a note through the API, the Celery worker, search, and a cited answer."""

import numpy as np
import pytest
from django.db import connection

from chat.models import Conversation, Message
from ingestion.embeddings import embed_texts
from ingestion.models import Chunk, HalfVectorArrayField
from tests.factories import PASSWORD, ApiClient, assert_error

GARDEN_NOTE = """# Garden plan

The tomatoes go into the raised bed on 12 May, after the last frost.
Until then the seedlings stay in the greenhouse by the shed.

## Watering

Water the beds every second evening; the rain barrel holds 300 litres."""


def register(username: str) -> ApiClient:
    response = ApiClient().post("/auth/register", {"username": username, "password": PASSWORD})
    assert response.status_code == 201
    return ApiClient(response.json()["token"])


@pytest.fixture
def garden(celery_worker: None) -> tuple[ApiClient, int]:
    api = register("gardener")
    body = api.post("/notes", {"text": GARDEN_NOTE}).json()
    job = api.wait_for_job(body["job_id"])
    assert job["status"] == "done", job
    assert job["progress"] == 100
    return api, body["source_id"]


@pytest.mark.django_db
def test_sentence_vectors_reach_the_database_exactly() -> None:
    """The half-precision vectors are written as text read off a table: Postgres must read back each
    value as it was, tiny, huge and negative ones too."""
    field = Chunk._meta.get_field("sentence_embeddings")
    assert isinstance(field, HalfVectorArrayField)
    rng = np.random.default_rng(7)
    vectors = [rng.normal(scale=0.1, size=384).astype(np.float16) for _ in range(3)]
    vectors[0][:4] = [np.float16(6e-8), np.float16(-65504), np.float16(0.1), np.float16(-0.0)]
    with connection.cursor() as cursor:
        cursor.execute("SELECT %s::halfvec(384)[]::text", [field.get_prep_value(vectors)])
        (text,) = cursor.fetchone()
    back = field.from_db_value(text, None, connection)
    assert back is not None and len(back) == 3
    for stored, sent in zip(back, vectors, strict=True):
        assert np.array_equal(stored, sent)


def test_a_note_becomes_searchable_passages(garden: tuple[ApiClient, int]) -> None:
    api, source_id = garden
    chunks = Chunk.objects.filter(source_id=source_id).order_by("ordinal")
    assert [chunk.anchor["heading"] for chunk in chunks] == [["Garden plan"], ["Garden plan", "Watering"]]
    # Each sentence of a passage is embedded too, with the passage's context; one of one sentence is its own.
    planting, watering = chunks
    sentences = ["The tomatoes go into the raised bed on 12 May, after the last frost.",
                 "Until then the seedlings stay in the greenhouse by the shed."]  # fmt: skip
    context = " › ".join([planting.source.title, *planting.anchor["heading"]])
    expected = embed_texts([f"{context}\n{sentence}" for sentence in sentences])
    stored = np.array(planting.sentence_embeddings, dtype=np.float32)
    assert stored.shape == (2, 384)
    assert (np.sum(stored * expected, axis=1) > 0.999).all()
    assert watering.sentence_embeddings == []
    results = api.get("/search", q="when do the tomatoes get planted", k=5).json()
    assert results["mode"] == "semantic"
    top = results["results"][0]
    assert (top["source_id"], top["source_title"], top["kind"]) == (source_id, "Garden plan", "note")
    assert "12 May" in top["text"]
    assert top["anchor"] == {"heading": ["Garden plan"]}
    assert api.get(f"/chunks/{top['chunk_id']}").json()["text"] == top["text"]
    watering = api.get("/search", q="rain barrel litres", k=5).json()["results"][0]
    assert watering["anchor"] == {"heading": ["Garden plan", "Watering"]}


def test_reprocessing_replaces_chunks_without_duplicates(garden: tuple[ApiClient, int]) -> None:
    api, source_id = garden
    before = list(Chunk.objects.filter(source_id=source_id).values_list("id", flat=True).order_by("id"))
    job = api.post(f"/sources/{source_id}/reprocess").json()
    assert api.wait_for_job(job["job_id"])["status"] == "done"
    after = list(Chunk.objects.filter(source_id=source_id).values_list("id", flat=True).order_by("id"))
    assert after == before


def test_ask_answers_from_the_note_and_cites_it(garden: tuple[ApiClient, int]) -> None:
    api, source_id = garden
    response = api.post("/ask", {"question": "When do the tomatoes go into the raised bed?"})
    assert response.status_code == 200, response.content
    answer = response.json()
    assert answer["abstained"] is False
    assert "12 May" in answer["answer"]
    assert answer["citations"], answer
    cited = answer["citations"][0]
    assert cited["source_id"] == source_id
    assert f"[{cited['marker']}]" in answer["answer"]
    assert "12 May" in cited["excerpt"]
    conversation = Conversation.objects.get(pk=answer["conversation_id"])
    assert [m.role for m in conversation.messages.all()] == [Message.Role.USER, Message.Role.ASSISTANT]


def test_ask_abstains_when_the_notes_say_nothing(garden: tuple[ApiClient, int]) -> None:
    api, _ = garden
    answer = api.post("/ask", {"question": "What is the name of my dentist?"}).json()
    assert answer["abstained"] is True
    assert answer["citations"] == []
    assert "couldn't find" in answer["answer"]


def test_another_user_cannot_reach_the_note_in_any_way(garden: tuple[ApiClient, int]) -> None:
    api, source_id = garden
    first = api.post("/ask", {"question": "When do the tomatoes go into the raised bed?"}).json()
    chunk_id = first["citations"][0]["chunk_id"]
    intruder = register("intruder")
    assert intruder.get("/search", q="tomatoes raised bed 12 May").json()["results"] == []
    answer = intruder.post("/ask", {"question": "When do the tomatoes go into the raised bed?"}).json()
    assert answer["abstained"] is True and answer["citations"] == []
    assert_error(intruder.get(f"/chunks/{chunk_id}"), 404, "not_found")
    assert_error(intruder.get(f"/sources/{source_id}"), 404, "not_found")
    assert_error(
        intruder.post("/ask", {"question": "And the watering?", "conversation_id": first["conversation_id"]}),
        404,
        "not_found",
    )
    assert Conversation.objects.get(pk=first["conversation_id"]).messages.count() == 2


@pytest.mark.django_db
def test_an_empty_question_is_refused(api: ApiClient) -> None:
    assert_error(api.post("/ask", {"question": "  "}), 422, "empty_question")
    assert not Conversation.objects.exists()
