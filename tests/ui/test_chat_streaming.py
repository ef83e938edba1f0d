"""The chat page with the real local model, in Chromium: an answer streams in stage by stage."""

import re

import pytest
from playwright.sync_api import Page, expect

from accounts.models import User
from tests.factories import ApiClient, make_user
from tests.test_pipeline import GARDEN_NOTE
from tests.ui.test_drop import sign_in
from tests.ui.test_walkthrough import SCREENSHOTS

# Records, as the page changes, every stage text shown and whether the answer held text while it
# was still streaming: proof that tokens were visible before the answer was done.
WATCH_SCRIPT = """() => {
  window.__seen = { stages: [], tokensBeforeDone: false };
  new MutationObserver(() => {
    const stage = document.querySelector(".msg--assistant:last-child .stage");
    const text = stage ? stage.textContent.trim() : "";
    if (text && window.__seen.stages.at(-1) !== text) window.__seen.stages.push(text);
    const streaming = document.querySelector(".msg--assistant:last-child .answer.streaming");
    if (streaming && streaming.textContent.trim()) window.__seen.tokensBeforeDone = true;
  }).observe(document.getElementById("messages"), { childList: true, subtree: true, characterData: true });
}"""


@pytest.fixture
def gardener(celery_worker: None) -> User:
    """Made before the browser starts: Playwright's sync API runs the test in a greenlet with a
    database connection of its own, which the worker fixture's teardown would leave broken."""
    user = make_user("gardener")
    api = ApiClient.for_user(user)
    job = api.post("/notes", {"text": GARDEN_NOTE}).json()
    assert api.wait_for_job(job["job_id"])["status"] == "done"
    return user


def test_an_answer_streams_stage_by_stage_then_its_card_opens_the_notes_heading(
    gardener: User, web_server: str, browser_page: Page
) -> None:
    page = browser_page
    sign_in(page, web_server, gardener)
    page.goto(f"{web_server}/chat/")
    page.evaluate(WATCH_SCRIPT)
    question = page.get_by_label("Your question")
    question.fill("When do the tomatoes go into the raised bed?")
    question.press("Enter")

    # While it streams, Stop is offered; the answer is announced politely once complete.
    turn = page.locator(".msg--assistant").last
    card = turn.locator(".citation").first
    expect(card).to_be_visible(timeout=120_000)
    expect(turn.get_by_role("button", name="Copy")).to_be_visible()
    expect(turn.get_by_role("button", name="Stop")).to_have_count(0)
    seen = page.evaluate("window.__seen")
    assert seen["stages"][0] == "Searching your notes…", seen
    assert any(stage.startswith("Found ") and " passage" in stage for stage in seen["stages"]), seen
    assert "Writing…" in seen["stages"], seen
    assert seen["tokensBeforeDone"], seen
    answer = turn.locator(".answer")
    expect(answer).to_have_attribute("aria-live", "polite")
    expect(answer).to_have_attribute("aria-busy", "false")
    expect(answer).to_contain_text("12 May")
    page.screenshot(path=SCREENSHOTS / "chat-streamed.png", full_page=True)

    # An [n] in the answer opens the passage it cites, as its card does: the note's heading, highlighted.
    marker = answer.locator("a.cite").first
    expect(marker).to_have_attribute("href", card.get_attribute("href") or "")
    marker.click()
    passage = page.locator(".passage:target")
    expect(passage).to_contain_text("12 May")
    expect(passage).to_have_css("outline-style", "solid")
    expect(passage).to_be_in_viewport()


def test_a_question_the_notes_cannot_answer_abstains_and_shows_the_closest_passages(
    gardener: User, web_server: str, browser_page: Page
) -> None:
    page = browser_page
    sign_in(page, web_server, gardener)
    page.goto(f"{web_server}/chat/")
    question = page.get_by_label("Your question")
    question.fill("What is the capital of Mongolia?")
    question.press("Enter")
    turn = page.locator(".msg--assistant").last
    expect(turn.locator(".answer.abstained")).to_contain_text("couldn't find", timeout=120_000)
    expect(turn).to_contain_text("Closest passages in your notes")
    nearest = turn.locator(".nearest a").first
    expect(nearest).to_contain_text("Garden plan")
    expect(nearest).to_have_attribute("href", re.compile(r"/sources/\d+/#chunk-\d+$"))

    # Reopened later, the abstention still shows them.
    page.reload()
    expect(page.locator(".msg--assistant").last).to_contain_text("Closest passages in your notes")
