import pytest
from django.test import Client

from accounts.models import User
from ingestion.models import Chunk, Job, Source
from tests.factories import make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client() -> Client:
    User.objects.create_superuser("root", password="x-long-enough-Passw0rd")
    client = Client()
    client.login(username="root", password="x-long-enough-Passw0rd")
    return client


def _note(owner: User, title: str, status: str) -> Source:
    source = Source.objects.create(
        owner=owner,
        kind="note",
        title=title,
        text="t",
        mime_type="text/markdown",
        size=1,
        sha256=title.encode().hex().ljust(64, "0")[:64],
        status=status,
    )
    Job.objects.create(owner=owner, source=source, status="done" if status == "ready" else "failed")
    return source


def test_admin_lists_sources_filtered_by_owner_status_kind_and_title(admin_client: Client) -> None:
    alice, bob = make_user("alice"), make_user("bob")
    _note(alice, "Budget meeting", "ready")
    _note(bob, "Garden plan", "failed")
    page = admin_client.get(
        "/admin/ingestion/source/", {"owner__id__exact": str(alice.pk), "status__exact": "ready", "kind__exact": "note"}
    )
    assert b"Budget meeting" in page.content and b"Garden plan" not in page.content
    page = admin_client.get("/admin/ingestion/source/", {"q": "garden"})
    assert b"Garden plan" in page.content and b"Budget meeting" not in page.content


def test_admin_shows_a_sources_chunks_read_only(admin_client: Client) -> None:
    source = _note(make_user("alice"), "Budget meeting", "ready")
    Chunk.objects.create(
        source=source,
        owner=source.owner,
        ordinal=0,
        text="We agreed on 40k.",
        occurred_at=source.occurred_at,
        embedding=[0.0] * 383 + [1.0],
    )
    page = admin_client.get(f"/admin/ingestion/source/{source.pk}/change/")
    assert page.status_code == 200
    assert b"We agreed on 40k." in page.content
    assert b'name="chunks-0-text"' not in page.content  # shown, not editable


def test_admin_lists_jobs_filtered_by_status(admin_client: Client) -> None:
    alice = make_user("alice")
    _note(alice, "Budget meeting", "ready")
    _note(alice, "Broken", "failed")
    page = admin_client.get("/admin/ingestion/job/", {"status__exact": "failed"})
    assert b"Broken" in page.content and b"Budget meeting" not in page.content


def test_admin_actions_reprocess_cancel_and_delete_many(admin_client: Client) -> None:
    alice = make_user("alice")
    first, second = _note(alice, "First", "ready"), _note(alice, "Second", "ready")
    ids = [first.pk, second.pk]
    admin_client.post("/admin/ingestion/source/", {"action": "reprocess", "_selected_action": ids})
    assert Job.objects.filter(source_id__in=ids, status="queued").count() == 2
    queued = list(Job.objects.filter(status="queued").values_list("pk", flat=True))
    admin_client.post("/admin/ingestion/job/", {"action": "cancel", "_selected_action": queued})
    assert Job.objects.filter(status="cancelled").count() == 2
    admin_client.post("/admin/ingestion/source/", {"action": "delete_fast", "_selected_action": ids})
    assert not Source.objects.exists() and not Job.objects.exists()


def test_admin_filters_sources_by_private_and_marks_them_in_the_list(admin_client: Client) -> None:
    alice = make_user("alice")
    diary, garden = _note(alice, "Diary", "ready"), _note(alice, "Garden plan", "ready")
    Source.objects.filter(pk=diary.pk).update(private=True)
    page = admin_client.get("/admin/ingestion/source/", {"private__exact": "1"})
    assert b"Diary" in page.content and b"Garden plan" not in page.content

    # The list's checkbox for each row (list_editable): the garden plan made private, the diary left alone.
    rows = {"form-TOTAL_FORMS": "2", "form-INITIAL_FORMS": "2", "_save": "Save"}
    rows |= {"form-0-id": str(diary.pk), "form-0-private": "on", "form-1-id": str(garden.pk), "form-1-private": "on"}
    assert admin_client.post("/admin/ingestion/source/", rows).status_code == 302
    assert set(Source.objects.filter(private=True).values_list("title", flat=True)) == {"Diary", "Garden plan"}
    del rows["form-0-private"]  # the diary's box unticked: an unchecked box is absent from a form
    admin_client.post("/admin/ingestion/source/", rows)
    assert set(Source.objects.filter(private=True).values_list("title", flat=True)) == {"Garden plan"}
