"""Time zones and dated questions in Chromium: sign-up takes the browser's zone, the chat shows a date chip."""

import os
import re
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

from playwright.sync_api import Page, expect

from tests.factories import PASSWORD

SCREENSHOTS = Path(os.environ.get("SCREENSHOT_DIR", "var/screenshots"))


def test_zone_from_the_browser_then_a_dated_question_and_its_chip(web_server: str, browser_page: Page) -> None:
    browser = browser_page.context.browser
    assert browser is not None
    context = browser.new_context(timezone_id="Pacific/Auckland", viewport={"width": 1200, "height": 900})
    page = context.new_page()
    page.goto(f"{web_server}/accounts/signup/")
    page.get_by_label("Username").fill("traveller")
    page.get_by_label("Password", exact=True).fill(PASSWORD)
    page.get_by_label("Password (again)").fill(PASSWORD)
    page.get_by_role("button", name="Sign up").click()
    expect(page.get_by_role("heading", name="Write a note")).to_be_visible()

    page.get_by_role("link", name="Settings").click()
    zone = page.get_by_label("Time zone")
    expect(zone).to_have_value("Pacific/Auckland")
    zone.select_option("Europe/Berlin")
    page.get_by_role("button", name="Save").click()
    expect(page.get_by_role("status")).to_contain_text("Europe/Berlin")
    expect(zone).to_have_value("Europe/Berlin")

    page.get_by_role("link", name="Sources").click()
    page.get_by_label("Text").fill("Borrowed a ladder from Ines at the bakery.")
    page.get_by_role("button", name="Save note").click()
    expect(page.locator(".source .job").first).to_have_attribute("data-status", "done", timeout=60_000)

    page.get_by_role("link", name="Ask").click()
    expect(page.locator(".thread[data-socket='open']")).to_have_count(1)  # sent before it opens, a question is lost
    question = page.get_by_label("Your question")
    question.fill("What did I write today?")
    question.press("Enter")
    today = datetime.now(ZoneInfo("Europe/Berlin"))
    chip = page.locator(".msg--assistant .chip").first
    expect(chip).to_have_text(re.compile(rf"Written on {today.day} {today:%B %Y}"), timeout=90_000)
    expect(page.locator(".msg--assistant .stage[data-event='done']")).to_have_count(1, timeout=90_000)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=SCREENSHOTS / "chat-date-chip.png", full_page=True)

    page.get_by_role("button", name=re.compile("Ask again without the date filter")).click()
    expect(page.locator(".msg--user")).to_have_count(2)
    expect(page.locator(".msg--user").last).to_have_text("What did I write today?")
    expect(page.locator(".msg--assistant .stage[data-event='done']")).to_have_count(2, timeout=90_000)
    expect(page.locator(".msg--assistant .chip")).to_have_count(1)
    context.close()
