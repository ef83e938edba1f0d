import hashlib
import os
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from accounts.models import User
from ingestion.models import Job, Source
from ingestion.views import RANGE_MAX_BYTES
from tests.factories import ApiClient, assert_error, make_source

pytestmark = pytest.mark.django_db
DATA = Path(__file__).resolve().parent.parent / "data"
PDF = DATA / "pdf" / "academic_arxiv2305.03393_page9.pdf"


def upload(api: ApiClient, name: str, content: bytes, **fields: str) -> Any:
    return api.client.post(
        "/api/uploads", {"file": SimpleUploadedFile(name, content), **fields}, headers=api._headers()
    )


def stored_files(media_root: Path) -> list[Path]:
    return [path for path in media_root.rglob("*") if path.is_file()]


def test_a_pdf_is_stored_under_a_random_name_with_its_hash(api: ApiClient, media_root: Path) -> None:
    content = PDF.read_bytes()
    response = upload(api, "paper page.pdf", content, title="", occurred_at="2023-05-04T09:00:00Z")
    assert response.status_code == 202, response.content
    source = Source.objects.get(pk=response.json()["source_id"])
    assert (source.kind, source.mime_type, source.size) == ("pdf", "application/pdf", len(content))
    assert source.sha256 == hashlib.sha256(content).hexdigest()
    assert source.title == "paper page"
    assert source.metadata["filename"] == "paper page.pdf"
    assert source.occurred_at.isoformat() == "2023-05-04T09:00:00+00:00"
    assert source.metadata["occurred_at_from"] == "user"
    [path] = stored_files(media_root)
    assert path.read_bytes() == content and "paper" not in path.name
    assert Job.objects.get(pk=response.json()["job_id"]).status in {"queued", "running", "done"}


@pytest.mark.parametrize(
    ("name", "content", "kind", "mime"),
    [
        ("notes.md", b"# Plan\n\nShip it on Friday.", "note", "text/markdown"),
        ("notes.txt", "Rückblick: 🚀 שלום".encode(), "note", "text/plain"),
        ("voice.flac", (DATA / "audio" / "jfk.flac").read_bytes(), "audio", "audio/flac"),
        ("clip.ogg", (DATA / "audio" / "fleurs_en" / "fleurs-en-000.ogg").read_bytes(), "audio", "audio/ogg"),
        ("renamed.bin", PDF.read_bytes(), "pdf", "application/pdf"),
    ],
)
def test_the_type_comes_from_the_bytes(api: ApiClient, name: str, content: bytes, kind: str, mime: str) -> None:
    response = upload(api, name, content)
    assert response.status_code == 202, response.content
    source = Source.objects.get(pk=response.json()["source_id"])
    assert (source.kind, source.mime_type) == (kind, mime)
    if kind == "note":
        assert source.text == content.decode()


def test_a_duplicate_is_reported_and_not_stored_twice(api: ApiClient, media_root: Path) -> None:
    first = upload(api, "a.pdf", PDF.read_bytes()).json()
    response = upload(api, "copy of a.pdf", PDF.read_bytes())
    assert_error(response, 409, "duplicate")
    assert response.json()["error"]["source_id"] == first["source_id"]
    assert Source.objects.count() == 1 and Job.objects.count() == 1
    assert len(stored_files(media_root)) == 1


def test_the_same_file_from_another_user_is_not_a_duplicate(api: ApiClient, other_api: ApiClient) -> None:
    assert upload(api, "a.pdf", PDF.read_bytes()).status_code == 202
    assert upload(other_api, "a.pdf", PDF.read_bytes()).status_code == 202


@pytest.mark.parametrize(
    ("name", "content", "status", "code"),
    [
        ("empty.pdf", b"", 422, "empty_content"),
        ("song.mp3", b"This is just text pretending to be audio.\n", 415, "unsupported_type"),
        ("random.pdf", os.urandom(4096).replace(b"%PDF", b"xxxx"), 422, "pdf_corrupt"),
        ("random.bin", b"\x00\x01" + os.urandom(4096), 415, "unsupported_type"),
        ("blank.txt", b"   \n\n  ", 422, "empty_content"),
    ],
)
def test_bad_files_are_refused_with_their_reason_and_nothing_is_kept(
    api: ApiClient, media_root: Path, name: str, content: bytes, status: int, code: str
) -> None:
    assert_error(upload(api, name, content), status, code)
    assert not Source.objects.exists() and not Job.objects.exists()
    assert stored_files(media_root) == []


def test_an_upload_without_a_file_is_refused(api: ApiClient) -> None:
    assert_error(api.client.post("/api/uploads", {"title": "x"}, headers=api._headers()), 422, "missing_file")


def test_an_over_limit_upload_is_refused_and_nothing_is_kept(
    api: ApiClient, media_root: Path, settings: object
) -> None:
    settings.MAX_UPLOAD_BYTES = 100_000  # type: ignore[attr-defined]
    settings.MAX_UPLOAD_MB = 0  # type: ignore[attr-defined]
    assert_error(upload(api, "big.pdf", b"%PDF-1.4\n" + b"0" * 200_000), 413, "file_too_large")
    assert not Source.objects.exists()
    assert stored_files(media_root) == []


def test_the_page_upload_returns_the_new_row_or_the_reason(user: User) -> None:
    client = Client()
    client.force_login(user)
    ok = client.post("/uploads/", {"file": SimpleUploadedFile("plan.md", b"# Plan\n\nFriday.")})
    assert ok.status_code == 200 and b'id="source-' in ok.content and b"plan" in ok.content
    refused = client.post("/uploads/", {"file": SimpleUploadedFile("plan.md", b"# Plan\n\nFriday.")})
    assert refused.status_code == 409 and "already added" in refused.content.decode()


def test_cancel_and_reprocess_are_owner_only(api: ApiClient, other_api: ApiClient) -> None:
    body = upload(api, "a.pdf", PDF.read_bytes()).json()
    assert_error(other_api.post(f"/jobs/{body['job_id']}/cancel"), 404, "not_found")
    cancelled = api.post(f"/jobs/{body['job_id']}/cancel")
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
    assert_error(api.post(f"/jobs/{body['job_id']}/cancel"), 409, "job_finished")
    again = api.post(f"/sources/{body['source_id']}/reprocess")
    assert again.status_code == 202
    assert_error(api.post(f"/sources/{body['source_id']}/reprocess"), 409, "job_active")


def test_the_original_file_is_served_to_its_owner_only_with_ranges(
    api: ApiClient, user: User, other_user: User
) -> None:
    body = upload(api, "voice.flac", (DATA / "audio" / "jfk.flac").read_bytes()).json()
    owner, stranger = Client(), Client()
    owner.force_login(user)
    stranger.force_login(other_user)
    assert stranger.get(f"/sources/{body['source_id']}/file").status_code == 404
    part = owner.get(f"/sources/{body['source_id']}/file", headers={"Range": "bytes=100-199"})
    assert part.status_code == 206 and part.content == (DATA / "audio" / "jfk.flac").read_bytes()[100:200]
    assert part["Content-Range"].startswith("bytes 100-199/")


def test_every_range_form_is_capped_so_no_request_reads_a_whole_large_file(user: User) -> None:
    content = os.urandom(RANGE_MAX_BYTES + 2**20)
    source = make_source(user, "Big scan", "a page", file=("scan.pdf", content))
    owner = Client()
    owner.force_login(user)
    url, size = f"/sources/{source.pk}/file", len(content)
    for asked, first in [(f"bytes=-{size}", 0), ("bytes=0-", 0), (f"bytes=5-{size}", 5)]:
        part = owner.get(url, headers={"Range": asked})
        assert part.status_code == 206, asked
        assert len(part.content) == RANGE_MAX_BYTES, asked
        assert part.content == content[first : first + RANGE_MAX_BYTES], asked
        assert part["Content-Range"] == f"bytes {first}-{first + RANGE_MAX_BYTES - 1}/{size}", asked
    tail = owner.get(url, headers={"Range": "bytes=-100"})
    assert tail.status_code == 206 and tail.content == content[-100:]
    assert tail["Content-Range"] == f"bytes {size - 100}-{size - 1}/{size}"


def test_what_would_pass_the_storage_quota_is_refused_everywhere_and_nothing_is_stored(
    api: ApiClient, user: User, media_root: Path, settings: Any
) -> None:
    settings.STORAGE_QUOTA_BYTES = PDF.stat().st_size + 1000
    assert upload(api, "a.pdf", PDF.read_bytes()).status_code == 202
    refused = upload(api, "b.pdf", PDF.read_bytes().replace(b"%PDF-1.", b"%PDF-2.", 1))
    assert_error(refused, 413, "quota_exceeded")
    assert "storage" in refused.json()["error"]["message"] and "left" in refused.json()["error"]["message"]
    assert_error(api.post("/notes", {"text": "word " * 300}), 413, "quota_exceeded")
    page = Client()
    page.force_login(user)
    from_page = page.post("/uploads/", {"file": SimpleUploadedFile("plan.md", b"# Plan\n\n" + b"Friday. " * 200)})
    assert from_page.status_code == 413 and "storage" in from_page.content.decode()
    note_form = page.post("/notes/", {"text": "word " * 300})
    assert "storage" in note_form.content.decode()
    assert Source.objects.count() == 1 and Job.objects.count() == 1
    assert len(stored_files(media_root)) == 1
    assert upload(api, "small.md", b"# Fits\n\nIn the room left.").status_code == 202


def test_a_quota_of_zero_means_no_quota(api: ApiClient, settings: Any) -> None:
    settings.STORAGE_QUOTA_BYTES = 0
    assert upload(api, "a.pdf", PDF.read_bytes()).status_code == 202
