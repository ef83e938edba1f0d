"""A citation opens its passage where it lives: the PDF's page, the recording's second — in Chromium.

The answers come from the scripted model server, which repeats a sentence of the passage under
test; retrieval, the citation check and the pages are the real ones, on real files from tests/data.
"""

import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from playwright.sync_api import Page, expect

from accounts.models import User
from ingestion.models import Chunk
from tests.factories import ApiClient, make_user
from tests.scripted_model import Script, ScriptedModel
from tests.ui.test_drop import DATA, sign_in
from tests.ui.test_walkthrough import SCREENSHOTS

LOREM_PDF = DATA / "pdf" / "multicolumn_latex_two_column_lorem.pdf"
# Three FLEURS clips, 45 s of silence, then JFK: a passage holds at most a minute, so his line
# starts a passage of its own at about 1:04.
CLIPS = [DATA / "audio" / "fleurs_en" / f"fleurs-en-00{n}.ogg" for n in (1, 4, 3)]
JFK = DATA / "audio" / "jfk.flac"
SILENCE_SECONDS = 45


@dataclass(frozen=True)
class Library:
    user: User
    pdf_chunk: Chunk  # a passage on a page after the first
    audio_chunk: Chunk  # the passage with JFK's line, starting after 0:00


def memo(out: Path) -> Path:
    """One recording of the clips, a pause and JFK (16 kHz mono WAV, like a phone's voice memo)."""
    inputs = [arg for clip in CLIPS for arg in ("-i", str(clip))]
    inputs += ["-f", "lavfi", "-t", str(SILENCE_SECONDS), "-i", "anullsrc=r=16000:cl=mono", "-i", str(JFK)]
    count = len(CLIPS) + 2
    normalised = "".join(f"[{n}:a]aresample=16000,aformat=channel_layouts=mono[a{n}];" for n in range(count))
    streams = "".join(f"[a{n}]" for n in range(count))
    subprocess.run(
        ["ffmpeg", "-v", "error", *inputs, "-filter_complex", f"{normalised}{streams}concat=n={count}:v=0:a=1",
         "-ar", "16000", "-ac", "1", str(out)],
        check=True,
    )  # fmt: skip
    return out


def upload(api: ApiClient, name: str, content: bytes) -> int:
    response = api.client.post("/api/uploads", {"file": SimpleUploadedFile(name, content)}, headers=api._headers())
    assert response.status_code == 202, response.content
    assert api.wait_for_job(response.json()["job_id"], timeout=600)["status"] == "done"
    return int(response.json()["source_id"])


@pytest.fixture
def library(celery_worker: None, tmp_path: Path) -> Library:
    user = make_user("listener")
    api = ApiClient.for_user(user)
    pdf = upload(api, LOREM_PDF.name, LOREM_PDF.read_bytes())
    audio = upload(api, "memo.wav", memo(tmp_path / "memo.wav").read_bytes())
    pdf_chunk = Chunk.objects.filter(source_id=pdf, anchor__page__gte=2).order_by("ordinal").first()
    audio_chunk = Chunk.objects.filter(source_id=audio, text__icontains="ask not what your country").first()
    assert pdf_chunk is not None and audio_chunk is not None
    assert audio_chunk.anchor["start"] > 50, list(Chunk.objects.filter(source_id=audio).values_list("anchor", "text"))
    return Library(user, pdf_chunk, audio_chunk)


def first_sentence(text: str) -> str:
    return text.replace("\n", " ").split(". ")[0].rstrip(".") + "."


def test_a_card_opens_the_recording_at_its_second_and_a_marker_opens_the_pdf_page(
    library: Library, scripted_model: ScriptedModel, web_server: str, browser_page: Page
) -> None:
    page = browser_page
    sign_in(page, web_server, library.user)
    page.goto(f"{web_server}/chat/")
    question = page.get_by_label("Your question")

    # The recording: the card opens the source page with the player at the passage's second.
    jfk = "And so my fellow Americans, ask not what your country can do for you, ask what you can do for your country."
    scripted_model.script = Script(tokens=[jfk[:40], jfk[40:], " [1]"])
    question.fill("What did Kennedy ask his fellow Americans?")
    question.press("Enter")
    card = page.locator(".msg--assistant").last.locator(".citation").first
    expect(card).to_contain_text("memo", timeout=60_000)
    expect(card).to_have_attribute("href", f"/sources/{library.audio_chunk.source_id}/#chunk-{library.audio_chunk.pk}")
    page.screenshot(path=SCREENSHOTS / "chat-audio-answer.png", full_page=True)
    card.click()
    expect(page.locator(f"#chunk-{library.audio_chunk.pk}")).to_have_css("outline-style", "solid")
    start = float(library.audio_chunk.anchor["start"])
    page.wait_for_function(
        "(start) => { const p = document.getElementById('player');"
        " return p.readyState >= 1 && Math.abs(p.currentTime - start) < 1.5; }",
        arg=start,
    )
    page.screenshot(path=SCREENSHOTS / "source-audio-seeked.png", full_page=True)

    # The PDF: the answer's [1] opens the source page at the passage, which links to the PDF's page.
    page.go_back()
    sentence = first_sentence(library.pdf_chunk.text)
    # Said in words of its own: an answer that only repeats the question abstains.
    scripted_model.script = Script(tokens=["The document says: ", sentence, " [1]"])
    question = page.get_by_label("Your question")
    question.fill(sentence.rstrip(".") + "?")
    question.press("Enter")
    marker = page.locator(".msg--assistant").last.locator(".answer a.cite").first
    expect(marker).to_have_attribute(
        "href", f"/sources/{library.pdf_chunk.source_id}/#chunk-{library.pdf_chunk.pk}", timeout=60_000
    )
    marker.click()
    passage = page.locator(f"#chunk-{library.pdf_chunk.pk}")
    expect(passage).to_have_css("outline-style", "solid")
    expect(passage).to_be_in_viewport()
    pdf_page = library.pdf_chunk.anchor["page"]
    link = passage.get_by_role("link", name=f"page {pdf_page}")
    expect(link).to_have_attribute("href", f"/sources/{library.pdf_chunk.source_id}/file#page={pdf_page}")
    pdf = page.request.get(f"{web_server}/sources/{library.pdf_chunk.source_id}/file")
    assert pdf.ok and pdf.headers["content-type"] == "application/pdf"
    page.screenshot(path=SCREENSHOTS / "source-pdf-page.png", full_page=True)
