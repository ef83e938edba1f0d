"""A person signs up, writes a note, watches it get processed, and asks about it — in Chromium."""

import os
from pathlib import Path

from playwright.sync_api import Page, expect

from tests.factories import PASSWORD
from tests.test_pipeline import GARDEN_NOTE

SCREENSHOTS = Path(os.environ.get("SCREENSHOT_DIR", "var/screenshots"))


def sign_up(page: Page, username: str) -> None:
    """From the log-in page: "Create an account", filled in as a person does."""
    page.get_by_role("link", name="Create an account").click()
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password", exact=True).fill(PASSWORD)
    page.get_by_label("Password (again)").fill(PASSWORD)
    page.get_by_role("button", name="Sign up").click()


def test_sign_up_add_a_note_and_get_a_cited_answer(web_server: str, browser_page: Page) -> None:
    page = browser_page
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.goto(f"{web_server}/")
    expect(page).to_have_url(f"{web_server}/accounts/login/?next=/")
    sign_up(page, "walker")
    expect(page.get_by_role("heading", name="Write a note")).to_be_visible()

    page.get_by_label("Text").fill(GARDEN_NOTE)
    page.get_by_role("button", name="Save note").click()
    row = page.locator(".source", has_text="Garden plan")
    expect(row).to_be_visible()
    expect(row.locator(".job")).to_have_attribute("data-status", "done", timeout=60_000)
    expect(row).to_contain_text("Ready")
    expect(page.get_by_label("Text")).to_have_value("")
    page.screenshot(path=SCREENSHOTS / "home.png", full_page=True)

    page.get_by_role("link", name="Ask").click()
    expect(page.locator(".thread[data-socket='open']")).to_have_count(1)  # sent before it opens, a question is lost
    question = page.get_by_label("Your question")
    question.fill("When do the tomatoes go into the raised bed?")
    question.press("Enter")
    expect(page.locator(".msg--user")).to_have_text("When do the tomatoes go into the raised bed?")
    expect(question).to_have_value("")
    card = page.locator(".citation").first
    expect(card).to_be_visible(timeout=90_000)
    answer = page.locator(".msg--assistant .answer").last
    expect(answer).to_contain_text("12 May")
    expect(answer.locator("a.cite")).not_to_have_count(0)
    expect(card).to_contain_text("Garden plan")
    expect(page.locator("#conversation-list li:visible")).to_have_count(1)
    expect(page.get_by_text("No conversations yet.")).to_be_hidden()
    expect(page.locator("#conversation-list")).to_contain_text("When do the tomatoes go into the raised bed?")
    page.screenshot(path=SCREENSHOTS / "chat.png", full_page=True)

    card.click()
    passage = page.locator(".passage:target")
    expect(passage).to_contain_text("12 May")
    page.screenshot(path=SCREENSHOTS / "source.png", full_page=True)

    page.go_back()
    page.reload()
    expect(page.locator(".conversations li:visible")).to_have_count(1)

    # A greeting is answered as one, at once: no sources, no "couldn't find".
    expect(page.locator(".thread[data-socket='open']")).to_have_count(1)
    question = page.get_by_label("Your question")
    question.fill("hi")
    question.press("Enter")
    answers = page.locator(".msg--assistant")
    expect(answers).to_have_count(2)
    greeting = answers.nth(1)
    expect(greeting.locator(".stage[data-event='done']")).to_have_count(1, timeout=30_000)
    expect(greeting.locator(".answer")).to_contain_text("Hello!")
    expect(greeting.locator(".citation")).to_have_count(0)
    expect(greeting).not_to_contain_text("couldn't find")

    # "What did I add today?" lists today's sources, each a citation to open.
    question.fill("What did I add today?")
    question.press("Enter")
    expect(answers).to_have_count(3)
    listing = answers.nth(2)
    expect(listing.locator(".stage[data-event='done']")).to_have_count(1, timeout=60_000)
    expect(listing.locator(".answer")).to_contain_text("1 source")
    expect(listing.locator(".answer li")).to_contain_text("Garden plan")
    expect(listing.locator(".citation")).to_have_count(1)
    page.screenshot(path=SCREENSHOTS / "chat-greeting-and-listing.png", full_page=True)

    # A conversation opened with a greeting is renamed after its first question, in the list at once.
    page.get_by_role("link", name="New conversation").click()
    expect(page.locator(".thread[data-socket='open']")).to_have_count(1)
    question = page.get_by_label("Your question")
    question.fill("hello")
    question.press("Enter")
    current = page.locator("#conversation-list a[aria-current='page']")
    expect(current).to_have_text("hello")
    expect(page.locator(".msg--assistant .stage[data-event='done']")).to_have_count(1, timeout=30_000)
    question.fill("What goes in the raised bed?")
    question.press("Enter")
    expect(current).to_have_text("What goes in the raised bed?")
    expect(page.locator("#conversation-list li:visible")).to_have_count(2)
