import pytest
from django.test import Client, override_settings

from accounts.models import User
from ingestion.models import Job, Source
from tests.factories import ApiClient, assert_error

pytestmark = pytest.mark.django_db


def test_a_note_is_stored_with_a_queued_job(api: ApiClient) -> None:
    response = api.post(
        "/notes", {"title": "Budget", "text": "We agreed on 40k.", "occurred_at": "2026-03-05T10:00:00Z"}
    )
    assert response.status_code == 202
    body = response.json()
    source = Source.objects.get(pk=body["source_id"])
    assert (source.title, source.kind, source.text) == ("Budget", "note", "We agreed on 40k.")
    assert source.occurred_at.isoformat() == "2026-03-05T10:00:00+00:00"
    assert Job.objects.get(pk=body["job_id"]).source_id == source.pk
    assert api.get(f"/jobs/{body['job_id']}").json()["status"] in {"queued", "running", "done"}


def test_a_note_without_title_is_named_after_its_first_line(api: ApiClient) -> None:
    body = api.post("/notes", {"text": "\n# Trip to Lisbon\nFlights booked."}).json()
    assert Source.objects.get(pk=body["source_id"]).title == "Trip to Lisbon"


@pytest.mark.parametrize("text", ["", "   \n\t  "])
def test_an_empty_note_is_refused_and_nothing_is_stored(api: ApiClient, text: str) -> None:
    assert_error(api.post("/notes", {"text": text}), 422, "empty_content")
    assert not Source.objects.exists() and not Job.objects.exists()


@override_settings(MAX_UPLOAD_BYTES=1000, MAX_UPLOAD_MB=0)
def test_an_oversized_note_is_refused_and_nothing_is_stored(api: ApiClient) -> None:
    assert_error(api.post("/notes", {"text": "word " * 300}), 413, "file_too_large")
    assert not Source.objects.exists() and not Job.objects.exists()


@pytest.mark.parametrize("raw", ["{not json", "[1, 2]", '{"title": "no text"}', '{"text": 42}'])
def test_malformed_note_requests_get_the_error_shape(api: ApiClient, raw: str) -> None:
    response = api.post("/notes", raw=raw)
    assert response.status_code in {400, 422}
    assert set(response.json()) == {"error"} and response.json()["error"]["code"]
    assert not Source.objects.exists()


def test_an_unknown_job_is_404(api: ApiClient) -> None:
    assert_error(api.get("/jobs/987654"), 404, "not_found")


def test_other_users_objects_are_404(api: ApiClient, other_api: ApiClient) -> None:
    body = api.post("/notes", {"text": "Mine alone."}).json()
    source_id, job_id = body["source_id"], body["job_id"]
    assert_error(other_api.get(f"/jobs/{job_id}"), 404, "not_found")
    assert_error(other_api.get(f"/sources/{source_id}"), 404, "not_found")
    assert_error(other_api.delete(f"/sources/{source_id}"), 404, "not_found")
    assert_error(other_api.post(f"/sources/{source_id}/reprocess"), 404, "not_found")
    assert other_api.get("/sources").json() == []
    assert other_api.get("/jobs").json() == []
    assert Source.objects.filter(pk=source_id).exists()


def test_deleting_a_source_removes_it_with_its_jobs(api: ApiClient) -> None:
    body = api.post("/notes", {"text": "Short-lived."}).json()
    assert api.delete(f"/sources/{body['source_id']}").status_code == 204
    assert_error(api.get(f"/sources/{body['source_id']}"), 404, "not_found")
    assert not Job.objects.filter(pk=body["job_id"]).exists()


def test_the_note_form_works_before_htmx_has_loaded(user: User, client: Client) -> None:
    """A click on Save before the page's script is ready posts the form itself: the note is kept."""
    client.force_login(user)
    saved = client.post("/notes/", {"title": "", "text": "Borrowed a ladder from Ines.", "occurred_at": ""})
    assert saved.status_code == 302 and saved["Location"] == "/"
    assert "Borrowed a ladder from Ines." in client.get("/").content.decode()
    refused = client.post("/notes/", {"title": "", "text": "   ", "occurred_at": ""})
    assert refused.status_code == 200 and 'role="alert"' in refused.content.decode()
    assert "Your sources" in refused.content.decode()  # the whole page, not the form alone
