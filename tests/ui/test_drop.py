"""A person drops the real PDFs and recordings onto the page and watches each one get processed."""

import base64
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from accounts.models import User
from tests.factories import PASSWORD, make_user
from tests.ui.test_walkthrough import SCREENSHOTS

DATA = Path(__file__).resolve().parent.parent / "data"
# All but the 117-page lecture notes: tests/ingestion/test_files_pipeline.py uploads them through the
# same API, and embedding them a second time here cost the suite ~45 s.
PDFS = sorted(path for path in (DATA / "pdf").glob("*.pdf") if "_117p_" not in path.name)
RECORDINGS = [DATA / "audio" / "jfk.flac", DATA / "audio" / "fleurs_en" / "fleurs-en-003.ogg"]

# Builds the DataTransfer a real drop carries, from the files' bytes, and fires the drag events on
# the drop zone the way Chromium does when a person drops files there.
DROP_SCRIPT = """(files) => {
  const transfer = new DataTransfer();
  for (const file of files) {
    const bytes = Uint8Array.from(atob(file.data), (c) => c.charCodeAt(0));
    transfer.items.add(new File([bytes], file.name, { type: file.type }));
  }
  const zone = document.getElementById("dropzone");
  for (const type of ["dragenter", "dragover", "drop"]) {
    zone.dispatchEvent(new DragEvent(type, { dataTransfer: transfer, bubbles: true, cancelable: true }));
  }
}"""


def sign_in(page: Page, web_server: str, user: User) -> None:
    page.goto(f"{web_server}/accounts/login/")
    page.get_by_label("Username").fill(user.username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("heading", name="Write a note")).to_be_visible()
    # The page shows before its deferred scripts run; a drop before upload.js is listening is lost.
    page.wait_for_load_state("load")


@pytest.fixture
def dropper(celery_worker: None) -> User:
    """Made before the browser starts: Playwright's sync API runs the test in a greenlet with a
    database connection of its own, which an earlier test's worker teardown may have ended."""
    return make_user("dropper")


def test_dropping_the_shared_pdfs_and_recordings(dropper: User, web_server: str, browser_page: Page) -> None:
    page = browser_page
    sign_in(page, web_server, dropper)
    files = [
        {"name": path.name, "type": "", "data": base64.b64encode(path.read_bytes()).decode()}
        for path in [*PDFS, *RECORDINGS]
    ]
    page.evaluate(DROP_SCRIPT, files)

    uploads = page.locator("#uploads .upload")
    expect(uploads).to_have_count(len(files))
    expect(page.locator('#uploads .upload[data-status="uploaded"]')).to_have_count(len(files), timeout=60_000)
    rows = page.locator("#sources .source")
    expect(rows).to_have_count(len(files))
    # Each row shows its own progress while it runs; at the end every file is ready.
    for path in [*PDFS, *RECORDINGS]:
        row = rows.filter(has_text=path.stem)
        expect(row.locator(".job")).to_have_attribute("data-status", "done", timeout=300_000)
        expect(row).to_contain_text("Ready")
    # The upload list says so too, not "processing" for ever.
    expect(page.locator('#uploads .upload[data-job="done"]')).to_have_count(len(files))
    expect(uploads.filter(has_text="fleurs-en-003")).to_contain_text("Uploaded — ready")
    # Dates taken from the files replace the upload time in the list as soon as each is processed.
    expect(rows.filter(has_text="table_nics")).to_contain_text("PDF · 12 Dec 2015, 18:49")
    expect(rows.filter(has_text="academic_arxiv")).to_contain_text("PDF · 22 Aug 2024, 12:54")
    page.screenshot(path=SCREENSHOTS / "dropped.png", full_page=True)

    # The passages are searchable, with their page and time anchors.
    found = page.request.get(f"{web_server}/api/search", params={"q": "Lorem ipsum dolor sit amet", "k": 5}).json()
    lorem = [hit for hit in found["results"] if hit["source_title"].startswith("multicolumn_latex")]
    assert lorem and all(1 <= hit["anchor"]["page"] <= 3 for hit in lorem), found
    assert {hit["anchor"]["page"] for hit in lorem} != {1}, found  # the later pages are passages too
    found = page.request.get(
        f"{web_server}/api/search", params={"q": "ask not what your country can do", "k": 3}
    ).json()
    assert found["results"][0]["source_title"].startswith("jfk"), found
    assert found["results"][0]["anchor"]["start"] == 0.0, found

    # The scanned page's text came from OCR; its passage is anchored to page 1.
    rows.filter(has_text="scanned_image_only_ocr_test").get_by_role("link").click()
    expect(page.locator(".passage h3.anchor").first).to_have_text("page 1")
    expect(page.locator(".passage").first).not_to_be_empty()

    # A recording's passage plays from its second.
    page.goto(f"{web_server}/")
    rows.filter(has_text="fleurs-en-003").get_by_role("link").click()
    play = page.locator("button.play").first
    expect(play).to_have_text("▶ 0:00")
    page.wait_for_load_state()  # the deferred script that makes ▶ play has run
    play.click()
    page.wait_for_function("() => !document.getElementById('player').paused")
    page.screenshot(path=SCREENSHOTS / "recording.png", full_page=True)
