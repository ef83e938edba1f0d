"""Images through the real worker: a photographed page read by tesseract and found by search, captions,
images without words, broken and unsupported files, a photo's own date, and the file shown only to
its owner."""

import io
import json
import zipfile
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import pillow_heif
import pytest
from django.test import Client
from PIL import Image, ImageDraw, ImageFont

from accounts.models import User
from ingestion.models import Chunk, Source
from tests.factories import ApiClient, assert_error
from tests.ingestion.test_uploads import stored_files, upload

pytestmark = pytest.mark.django_db(transaction=True)

PAGE_LINES = [
    "Boiler service record",
    "The water heater was serviced on a Tuesday",
    "by Nordic Plumbing. The pressure valve was",
    "replaced and the warranty now runs until 2031.",
    "Next inspection: bring the blue folder.",
]


def photographed_page(lines: list[str] = PAGE_LINES, *, angle: float = 4.0, fmt: str = "JPEG", seed: int = 7) -> bytes:
    """A page of text as a phone photographs it: tilted on a darker desk, unevenly lit, noisy, JPEG."""
    font = ImageFont.load_default(size=46)
    page = Image.new("L", (1600, 120 + 80 * len(lines)), 238)
    draw = ImageDraw.Draw(page)
    for number, line in enumerate(lines):
        draw.text((80, 60 + 80 * number), line, fill=30, font=font)
    photo = page.rotate(angle, resample=Image.Resampling.BICUBIC, expand=True, fillcolor=95)
    rng = np.random.default_rng(seed)
    pixels = np.asarray(photo, dtype=np.float32)
    light = np.linspace(-25, 15, pixels.shape[1], dtype=np.float32)[None, :]  # a lamp to one side
    noisy = np.clip(pixels + light + rng.normal(0, 20, pixels.shape), 0, 255).astype(np.uint8)
    out = io.BytesIO()
    Image.fromarray(noisy).convert("RGB").save(out, fmt, **({"quality": 80} if fmt == "JPEG" else {}))
    return out.getvalue()


def picture_without_words(seed: int = 3) -> bytes:
    """A photo of nothing to read: soft blobs of colour and noise."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:600, 0:800]
    sky = np.stack([120 + 60 * np.sin(x / 90), 150 + 50 * np.cos(y / 70), 200 - 40 * np.sin((x + y) / 120)], axis=-1)
    noisy = np.clip(sky + rng.normal(0, 12, sky.shape), 0, 255).astype(np.uint8)
    out = io.BytesIO()
    Image.fromarray(noisy, "RGB").save(out, "PNG")
    return out.getvalue()


def processed(api: ApiClient, name: str, content: bytes, **fields: str) -> dict[str, Any]:
    response = upload(api, name, content, **fields)
    assert response.status_code == 202, response.content
    return {**api.wait_for_job(response.json()["job_id"], timeout=180), "source_id": response.json()["source_id"]}


def test_a_photographed_page_is_read_and_a_phrase_from_it_is_found(api: ApiClient, celery_worker: None) -> None:
    job = processed(api, "IMG_2041.jpg", photographed_page())
    assert job["status"] == "done", job

    source = Source.objects.get(pk=job["source_id"])
    assert (source.kind, source.mime_type, source.title) == ("image", "image/jpeg", "IMG_2041")
    read = " ".join(Chunk.objects.filter(source=source).values_list("text", flat=True)).lower()
    expected = " ".join(PAGE_LINES).lower().replace(".", "").replace(":", "").split()
    assert sum(word in read for word in expected) / len(expected) >= 0.85, read
    found = api.get("/search", q="when was the pressure valve replaced", k=3).json()["results"]
    assert found[0]["source_id"] == source.pk and found[0]["kind"] == "image", found
    assert found[0]["anchor"] == {"heading": ["Text in the image"]}
    assert "Nordic Plumbing" in found[0]["text"]


def test_a_caption_is_kept_searchable_and_names_the_image(api: ApiClient, celery_worker: None) -> None:
    caption = "Whiteboard after the kayak club meeting: who brings the paddles"
    job = processed(api, "board.png", photographed_page(["Paddles: Ines and Tom", "Life vests: Ana"], fmt="PNG"),
                    caption=caption)  # fmt: skip
    assert job["status"] == "done", job

    source = Source.objects.get(pk=job["source_id"])
    assert (source.title, source.text, source.mime_type) == (caption, caption, "image/png")
    found = api.get("/search", q="kayak club whiteboard", k=3).json()["results"]
    assert found[0]["source_id"] == source.pk and found[0]["anchor"] == {"heading": ["Caption"]}
    assert found[0]["text"] == caption
    # What it shows is searchable too, beside the caption.
    assert any("Life vests" in hit["text"] for hit in api.get("/search", q="life vests", k=3).json()["results"])


def test_an_image_with_no_words_needs_a_caption(api: ApiClient, celery_worker: None) -> None:
    failed = processed(api, "sky.png", picture_without_words())
    assert (failed["status"], failed["error_code"]) == ("failed", "image_no_text"), failed
    assert "caption" in str(failed["error_message"])
    assert not Chunk.objects.filter(source_id=failed["source_id"]).exists()
    assert Source.objects.get(pk=failed["source_id"]).status == "failed"

    kept = processed(api, "sky again.png", picture_without_words(seed=4), caption="Sunset over the lake at Kallsjön")
    assert kept["status"] == "done", kept
    assert [chunk.text for chunk in Chunk.objects.filter(source_id=kept["source_id"])] == [
        "Sunset over the lake at Kallsjön"
    ]


def test_a_broken_image_fails_with_its_reason_and_the_worker_goes_on(api: ApiClient, celery_worker: None) -> None:
    whole = photographed_page(fmt="PNG")
    broken = processed(api, "cut.png", whole[: len(whole) // 3])
    assert (broken["status"], broken["error_code"]) == ("failed", "image_unreadable"), broken
    header_only = processed(api, "photo.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(64))
    assert header_only["error_code"] == "image_unreadable", header_only
    assert not Chunk.objects.filter(source_id__in=[broken["source_id"], header_only["source_id"]]).exists()
    assert processed(api, "fine.jpg", photographed_page())["status"] == "done"


def test_an_image_larger_than_the_pixel_limit_is_refused_before_it_is_decoded(
    api: ApiClient, celery_worker: None, settings: object
) -> None:
    settings.IMAGE_MAX_PIXELS = 1_000_000  # type: ignore[attr-defined]
    job = processed(api, "huge.png", photographed_page(fmt="PNG"))
    assert (job["status"], job["error_code"]) == ("failed", "image_too_large"), job


def test_a_photo_is_dated_when_it_was_taken(api: ApiClient, celery_worker: None) -> None:
    exif = Image.Exif()
    exif.get_ifd(0x8769).update({36867: "2025:08:14 16:20:05", 36881: "+02:00"})
    out = io.BytesIO()
    Image.open(io.BytesIO(photographed_page())).save(out, "JPEG", exif=exif)
    job = processed(api, "holiday.jpg", out.getvalue())
    assert job["status"] == "done", job
    source = Source.objects.get(pk=job["source_id"])
    assert source.occurred_at == datetime.fromisoformat("2025-08-14T16:20:05+02:00")
    assert source.metadata["occurred_at_from"] == "file"


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("name", "content", "code"),
    [
        ("anim.gif", b"GIF89a" + bytes(100), "unsupported_type"),
        ("scan.tiff", b"II*\x00" + bytes(100), "unsupported_type"),
        ("new.avif", b"\x00\x00\x00\x1cftypavif\x00\x00\x00\x00avifmif1miaf" + bytes(64), "unsupported_type"),
    ],
)
def test_images_of_other_kinds_are_refused_at_once(
    api: ApiClient, media_root: Path, name: str, content: bytes, code: str
) -> None:
    response = upload(api, name, content)
    assert_error(response, 415, code)
    assert "PNG or JPEG" in response.json()["error"]["message"]
    assert not Source.objects.exists() and stored_files(media_root) == []


@pytest.mark.django_db
def test_a_caption_goes_only_with_an_image(api: ApiClient, media_root: Path) -> None:
    refused = upload(api, "notes.md", b"# Plan\n\nShip it.", caption="A caption for a note")
    assert_error(refused, 422, "caption_not_allowed")
    assert_error(upload(api, "a.png", photographed_page(fmt="PNG"), caption="x" * 2001), 422, "caption_too_long")
    assert not Source.objects.exists() and stored_files(media_root) == []


@pytest.mark.django_db
def test_the_image_is_shown_to_its_owner_only(api: ApiClient, user: User, other_user: User) -> None:
    content = photographed_page()
    body = upload(api, "page.jpg", content, caption="The boiler's service record").json()
    owner, other = Client(), Client()
    owner.force_login(user)
    other.force_login(other_user)

    page = owner.get(f"/sources/{body['source_id']}/").content.decode()
    assert f'<img src="/sources/{body["source_id"]}/file" alt="The boiler&#x27;s service record">' in page
    assert "<figcaption>The boiler&#x27;s service record</figcaption>" in page
    served = owner.get(f"/sources/{body['source_id']}/file")
    assert served.status_code == 200 and served["Content-Type"] == "image/jpeg"
    assert b"".join(served.streaming_content) == content  # type: ignore[attr-defined]
    for path in (f"/sources/{body['source_id']}/", f"/sources/{body['source_id']}/file"):
        assert other.get(path).status_code == 404
        assert other.get(path, {"preview": "jpeg"}).status_code == 404


@pytest.mark.django_db
def test_the_export_keeps_the_image_and_its_caption(api: ApiClient) -> None:
    content = photographed_page()
    upload(api, "page.jpg", content, caption="The boiler's service record")
    archive = zipfile.ZipFile(io.BytesIO(b"".join(api.get("/export").streaming_content)))
    [source] = json.loads(archive.read("manifest.json"))["sources"]
    assert (source["kind"], source["caption"]) == ("image", "The boiler's service record")
    assert archive.read(source["path"]) == content


def test_a_heic_photo_is_read_and_shown_as_jpeg(api: ApiClient, user: User, celery_worker: None) -> None:
    pillow_heif.register_heif_opener()
    out = io.BytesIO()
    Image.open(io.BytesIO(photographed_page())).save(out, "HEIF", quality=90)
    job = processed(api, "IMG_0001.HEIC", out.getvalue())
    assert job["status"] == "done", job
    source = Source.objects.get(pk=job["source_id"])
    assert source.mime_type == "image/heic"
    assert "Nordic" in " ".join(Chunk.objects.filter(source=source).values_list("text", flat=True))

    client = Client()
    client.force_login(user)
    assert f'src="/sources/{source.pk}/file?preview=jpeg"' in client.get(f"/sources/{source.pk}/").content.decode()
    preview = client.get(f"/sources/{source.pk}/file", {"preview": "jpeg"})
    assert preview.status_code == 200 and preview["Content-Type"] == "image/jpeg"
    assert Image.open(io.BytesIO(preview.content)).format == "JPEG"
