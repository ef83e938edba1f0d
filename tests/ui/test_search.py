"""A person adds a diary note, a PDF and a recording, then finds each on the search page — in Chromium.

Each search uses words a person remembers rather than the exact text, and the first result must open
the passage on its source's page. The PDF has a running header on every page: a search for words of
its body must come back with the body, not the header.
"""

import re

from playwright.sync_api import Locator, Page, expect

from tests.ui.test_drop import DATA
from tests.ui.test_walkthrough import SCREENSHOTS, sign_up

DIARY = [
    "Mon: called the plumber about the leaking tap",
    "Tue: dentist at 9, then picked up the dry cleaning",
    "Wed: Priya's birthday dinner at the Lebanese place",
    "Thu: renewed the car insurance, 412 pounds",
    "Fri: bought a new doormat and a spare key for Sam",
    "Sat: repotted the basil and the chilli plants",
    "Sun: long walk along the canal",
]
TENANCY = DATA / "personal" / "pdfs" / "riverside-tenancy-agreement.pdf"
RUNNING_HEADER = "Riverside Court Tenancy Agreement - Draft v3 - not for signature"
# The shortest clip (4.3 s): "many people don't think about them as dinosaurs because they have feathers and can fly".
CLIP = DATA / "audio" / "fleurs_en" / "fleurs-en-004.ogg"


def search(page: Page, query: str, kind: str = "All sources") -> Locator:
    """Search from the nav as a person does; the results, once shown."""
    page.get_by_role("link", name="Search", exact=True).click()
    page.get_by_label("Search your notes").fill(query)
    page.get_by_label("In", exact=True).select_option(label=kind)
    page.get_by_role("button", name="Search", exact=True).click()
    results = page.locator(".result")
    expect(results.first).to_be_visible()
    return results


def open_first(page: Page, results: Locator, words: str) -> None:
    """Click the first result's title: the source page opens scrolled to that passage."""
    href = results.first.locator("a.result-title").get_attribute("href")
    assert href and re.fullmatch(r"/sources/\d+/#chunk-\d+", href), href
    results.first.locator("a.result-title").click()
    expect(page).to_have_url(re.compile(re.escape(href) + "$"))
    passage = page.locator(".passage:target")
    expect(passage).to_contain_text(words, use_inner_text=True)
    expect(passage).to_be_in_viewport()


def source_url(page: Page, title: str) -> str:
    href = page.locator("#sources .source", has_text=title).get_by_role("link", name=title).get_attribute("href")
    assert href
    return href


def test_a_person_finds_a_note_a_pdf_page_and_a_recording_by_words_they_remember(
    web_server: str, browser_page: Page
) -> None:
    page = browser_page
    page.goto(f"{web_server}/search/")
    expect(page).to_have_url(f"{web_server}/accounts/login/?next=/search/")
    sign_up(page, "seeker")

    # The diary, typed a line at a time.
    page.get_by_label("Title").fill("Week diary")
    text = page.get_by_label("Text")
    for number, line in enumerate(DIARY):
        if number:
            text.press("Enter")
        text.press_sequentially(line)
    expect(text).to_have_value("\n".join(DIARY))
    page.get_by_role("button", name="Save note").click()
    page.get_by_label("Choose files").set_input_files([TENANCY, CLIP])
    rows = page.locator("#sources .source")
    expect(rows).to_have_count(3)
    for title in ["Week diary", TENANCY.stem, CLIP.stem]:
        expect(rows.filter(has_text=title).locator(".job")).to_have_attribute("data-status", "done", timeout=180_000)
    pdf_url = source_url(page, TENANCY.stem)

    # The note: its line, its words marked, and the link opens it there.
    results = search(page, "plumber for the tap")
    expect(page.get_by_role("link", name="Search", exact=True)).to_have_attribute("aria-current", "page")
    expect(results.first.locator("a.result-title")).to_have_text("Week diary")
    expect(results.first.locator(".result-text")).to_contain_text(
        "called the plumber about the leaking tap", use_inner_text=True
    )
    expect(results.first.locator("mark")).to_have_text(["plumber", "tap"])
    open_first(page, results, "called the plumber about the leaking tap")

    # The PDF: a house rule from its third page; the header repeated on every page is not a result.
    results = search(page, "recycling collected on alternate Thursdays")
    first = results.first
    expect(first.locator("a.result-title")).to_have_text(TENANCY.stem)
    expect(first.locator("a.result-title")).to_have_attribute("href", re.compile(rf"^{re.escape(pdf_url)}#chunk-\d+$"))
    expect(first.locator("p.muted")).to_have_text(re.compile(r"PDF · \d+ \w+ \d{4}, \d\d:\d\d · page [2-9]"))
    # Read as shown: the PDF's lines are kept (as <br>), and textContent would run them together.
    expect(first.locator(".result-text")).to_contain_text("recycling on alternate Thursdays", use_inner_text=True)
    expect(first.locator(".result-text")).not_to_contain_text(RUNNING_HEADER)
    expect(page.locator(".result-text", has_text=RUNNING_HEADER)).to_have_count(0)
    page.screenshot(path=SCREENSHOTS / "search_page.png", full_page=True)
    open_first(page, results, "recycling on alternate Thursdays")
    expect(page.locator(".passage:target h3.anchor")).to_have_text(re.compile(r"page [2-9]"))

    # The recording, looked for among recordings only.
    results = search(page, "dinosaurs with feathers", kind="Audio")
    expect(results.first.locator("a.result-title")).to_have_text(CLIP.stem)
    expect(results.first.locator("p.muted")).to_have_text(re.compile(r"Audio · \d+ \w+ \d{4}, \d\d:\d\d · 0:00"))
    expect(results.locator("p.muted").filter(has_not_text="Audio · ")).to_have_count(0)
    open_first(page, results, "feathers")
    expect(page.locator(".passage:target button.play")).to_have_text("▶ 0:00")
