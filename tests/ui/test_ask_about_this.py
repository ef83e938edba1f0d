"""Ask about this, in Chromium: select a passage's text with the mouse on a source page, press "Ask about
this", ask; the answer streams in beside the page and cites that source's passage.

The note goes through the real pipeline and the page, websocket and checks are the real ones; the
scripted model server answers, so the test can read the prompt it was sent.
"""

from typing import Any

import pytest
from playwright.sync_api import Page, expect

from accounts.models import User
from ingestion.models import Chunk
from tests.chat.test_ask_about_this import TRAM_NOTE, TRIP, TRIP_NOTE, note
from tests.factories import ApiClient, make_user
from tests.scripted_model import Script, ScriptedModel
from tests.ui.test_csp import Watch
from tests.ui.test_drop import sign_in
from tests.ui.test_walkthrough import SCREENSHOTS


@pytest.fixture
def traveller(celery_worker: None) -> tuple[User, int, Chunk]:
    """Made before the browser starts (see test_chat_streaming's `gardener`)."""
    user = make_user("traveller")
    api = ApiClient.for_user(user)
    trip = note(api, TRIP_NOTE)
    note(api, TRAM_NOTE)
    third = Chunk.objects.get(source_id=trip, text__startswith="Ana booked")
    return user, trip, third


def test_selecting_text_and_asking_about_it_answers_from_that_passage(
    traveller: tuple[User, int, Chunk], scripted_model: ScriptedModel, web_server: str, browser_page: Page
) -> None:
    user, trip, third = traveller
    page = browser_page
    watch = Watch(page)  # the button's placement, the socket and the streamed answer, under the page's CSP
    sign_in(page, web_server, user)
    page.goto(f"{web_server}/sources/{trip}/")
    ask_this = page.get_by_role("button", name="Ask about this")
    expect(ask_this).to_be_hidden()

    selected = drag_across(page, f"#chunk-{third.pk} .text")
    assert selected.startswith("Ana booked the tram 28") and "Miguel" in selected, selected

    expect(ask_this).to_be_visible()
    # caret="initial": hiding the caret, Playwright leaves an empty style attribute on inputs, which htmx
    # then copies in its settling, and the page's policy refuses (a violation of the test's own making).
    page.screenshot(path=SCREENSHOTS / "ask-this-button.png", full_page=True, caret="initial")
    ask_this.click()
    panel = page.locator("#ask-about")
    expect(panel).to_be_visible()
    expect(panel.locator("#ask-selection")).to_have_text(selected)
    question = page.get_by_label("Your question about the selected text")
    expect(question).to_be_focused()
    scripted_model.script = Script(tokens=["Miguel said the whole route ", "would reopen in October ", "[1]."])
    question.fill("When does the tram line reopen?")
    question.press("Enter")

    turn = panel.locator(".msg--assistant").last
    card = turn.locator(".citation").first
    expect(card).to_be_visible(timeout=60_000)
    expect(turn.locator(".answer")).to_contain_text("reopen in October")
    expect(card).to_have_attribute("href", f"/sources/{trip}/#chunk-{third.pk}")
    expect(card).to_contain_text("Lisbon trip")
    # The question shows what it was about; the conversation can be continued in the chat.
    expect(panel.locator(".msg--user .selection")).to_contain_text("Ana booked the tram 28")
    conversation = page.locator("#conversation-id").input_value()
    expect(panel.get_by_role("link", name="When does the tram line reopen?")).to_have_attribute(
        "href", f"/chat/{conversation}/"
    )
    page.screenshot(path=SCREENSHOTS / "ask-this-answer.png", full_page=True, caret="initial")

    # The model read the selection and the passages around it, not the note that matches the question best.
    messages: Any = scripted_model.script.bodies[-1]["messages"]
    prompt = messages[0]["content"]
    assert selected in prompt and TRIP[1] in prompt and TRIP[3] in prompt
    assert TRIP[0] not in prompt and "14 March" not in prompt

    # The card opens the passage on this same page.
    card.click()
    expect(page.locator(f"#chunk-{third.pk}")).to_have_css("outline-style", "solid")

    # Another selection, asked about in the same conversation: its own quote, its own passages.
    last = Chunk.objects.get(source_id=trip, text__startswith="On Monday")
    page.locator(f"#chunk-{last.pk}").scroll_into_view_if_needed()
    drag_across(page, f"#chunk-{last.pk} .text")
    ask_this.click()
    expect(panel.locator("#ask-selection")).to_contain_text("Pena Palace")
    scripted_model.script = Script(tokens=["It rained all day in Sintra [1]."])
    question.fill("What was the weather like?")
    question.press("Enter")
    expect(panel.locator(".msg--assistant").nth(1).locator(".citation")).to_have_attribute(
        "href", f"/sources/{trip}/#chunk-{last.pk}", timeout=60_000
    )
    expect(panel.locator(".msg--user").nth(1).locator(".selection")).to_contain_text("Pena Palace")
    expect(panel.locator("#conversation-list a")).to_have_count(1)
    messages = scripted_model.script.bodies[-1]["messages"]
    assert TRIP[4] in messages[0]["content"] and TRIP[2] not in messages[0]["content"]
    assert watch.violations == [] and watch.refusals == [] and watch.exceptions == [] and watch.errors == []


def drag_across(page: Page, selector: str) -> str:
    """Select an element's text with the mouse, from its first word to the end of its last line."""
    box = page.locator(selector).bounding_box()
    assert box is not None
    page.mouse.move(box["x"] + 1, box["y"] + 4)
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] - 1, box["y"] + box["height"] - 4, steps=8)
    page.mouse.up()
    return str(page.evaluate("getSelection().toString()")).strip()


def test_the_button_is_reached_with_the_keyboard_after_a_selection(
    traveller: tuple[User, int, Chunk], web_server: str, browser_page: Page
) -> None:
    user, trip, third = traveller
    page = browser_page
    sign_in(page, web_server, user)
    page.goto(f"{web_server}/sources/{trip}/")
    ask_this = page.get_by_role("button", name="Ask about this")
    question = page.get_by_label("Your question about the selected text")

    # Selected with the mouse, then Tab: the button comes right after the selected passage.
    # On the first line's first word: the element's centre may fall between lines (a word there, or nothing).
    page.locator(f"#chunk-{third.pk} .text").dblclick(position={"x": 12, "y": 8})
    expect(ask_this).to_be_visible()
    page.keyboard.press("Tab")
    expect(ask_this).to_be_focused()
    page.keyboard.press("Enter")
    expect(question).to_be_focused()
    expect(page.locator("#ask-selection")).not_to_be_empty()
    page.keyboard.press("Escape")
    expect(page.locator("#ask-about")).to_be_hidden()

    # Selected without a mouse (caret browsing, a screen reader's selection): Alt+A.
    page.evaluate("(id) => getSelection().selectAllChildren(document.querySelector(`#chunk-${id} .text`))", third.pk)
    expect(ask_this).to_be_visible()
    page.keyboard.press("Alt+a")
    expect(question).to_be_focused()
    expect(page.locator("#ask-selection")).to_have_text(third.text.replace("\n", " ").strip())
