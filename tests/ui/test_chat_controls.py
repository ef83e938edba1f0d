"""The chat's controls in Chromium: keyboard, Stop, Regenerate, Copy, Retry, a lost connection,
hostile Markdown, and a phone-sized screen.

The scripted model server writes the answers, so that an answer streams slowly enough to stop, or
breaks off, or carries hostile Markdown, on demand; everything else is the real app.
"""

import os
import re
import signal
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from accounts.models import User
from chat.models import Citation, Conversation, Message
from ingestion.models import Chunk
from tests.factories import ApiClient, make_user
from tests.scripted_model import Script, ScriptedModel
from tests.test_pipeline import GARDEN_NOTE
from tests.ui.test_drop import sign_in
from tests.ui.test_walkthrough import SCREENSHOTS

QUESTION = "When do the tomatoes go into the raised bed?"
ANSWER = ["The tomatoes go into ", "the raised bed on 12 May", ", after the last frost [1]."]
SLOW = Script(tokens=[f"word{n} " for n in range(60)], delay=0.25)
HOSTILE = (
    "**Bold** advice: the tomatoes go in on 12 May [1].\n\n"
    "<script>window.__xss = 'script'</script>\n\n"
    '<img src="x" onerror="window.__xss = \'img\'">\n\n'
    "[a trap](javascript:window.__xss='link') and [another](JaVaScRiPt:alert(1)) and "
    "<a href=\"javascript:window.__xss='raw'\">raw</a> [7]"
)


@pytest.fixture
def gardener(celery_worker: None) -> User:
    """Made before the browser starts: Playwright's sync API runs the test in a greenlet with a
    database connection of its own, which the worker fixture's teardown would leave broken."""
    user = make_user("gardener")
    api = ApiClient.for_user(user)
    job = api.post("/notes", {"text": GARDEN_NOTE}).json()
    assert api.wait_for_job(job["job_id"])["status"] == "done"
    return user


def ask(page: Page, text: str = QUESTION) -> None:
    question = page.get_by_label("Your question")
    question.fill(text)
    question.press("Enter")


def test_keyboard_stop_regenerate_and_copy(
    gardener: User, scripted_model: ScriptedModel, web_server: str, browser_page: Page
) -> None:
    page = browser_page
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    sign_in(page, web_server, gardener)
    page.goto(f"{web_server}/chat/")

    # Shift+Enter starts a new line; Enter sends.
    question = page.get_by_label("Your question")
    question.focus()
    page.keyboard.type("When do the tomatoes")
    page.keyboard.press("Shift+Enter")
    page.keyboard.type("go into the raised bed?")
    expect(question).to_have_value("When do the tomatoes\ngo into the raised bed?")
    expect(page.locator(".msg--user")).to_have_count(0)
    scripted_model.script = SLOW
    page.keyboard.press("Enter")
    expect(page.locator(".msg--user")).to_have_text("When do the tomatoes\ngo into the raised bed?")

    # Stop is there while the answer streams; it stops it and keeps what arrived, marked stopped.
    turn = page.locator(".msg--assistant").last
    stop = turn.get_by_role("button", name="Stop")
    expect(stop).to_be_visible()
    expect(turn.locator(".answer")).to_contain_text("word3", timeout=30_000)
    expect(turn.locator(".answer")).to_have_attribute("aria-busy", "true")
    stop.click()
    expect(turn.locator(".alert")).to_have_text("Stopped.")
    expect(stop).to_have_count(0)
    kept = turn.locator(".answer").inner_text()
    assert kept.startswith("word0 word1 word2 word3") and "word59" not in kept, kept
    page.wait_for_timeout(1000)
    assert turn.locator(".answer").inner_text() == kept  # nothing arrives after the stop
    page.screenshot(path=SCREENSHOTS / "chat-stopped.png", full_page=True)

    # Regenerate, reached with Tab from Copy, with a visible focus ring, answers the question again in place.
    scripted_model.script = Script(tokens=ANSWER)
    copy = turn.get_by_role("button", name="Copy")
    copy.focus()
    page.keyboard.press("Tab")
    regenerate = turn.get_by_role("button", name="Regenerate")
    expect(regenerate).to_be_focused()
    assert page.evaluate("getComputedStyle(document.activeElement).outlineStyle") == "solid"
    page.keyboard.press("Enter")
    expect(turn.locator(".answer a.cite")).to_have_count(1, timeout=60_000)
    expect(page.locator(".msg--user")).to_have_count(1)
    expect(page.locator(".msg--assistant")).to_have_count(1)
    expect(turn.locator(".alert")).to_be_empty()
    expect(turn.locator(".answer")).to_contain_text("12 May")

    # Copy puts the answer on the clipboard without its markers and says so.
    copy = turn.get_by_role("button", name="Copy")
    copy.click()
    expect(turn.get_by_role("button", name="Copied")).to_be_visible()
    copied = page.evaluate("navigator.clipboard.readText()")
    assert "12 May" in copied and "[1]" not in copied and "[" not in copied, copied

    # Reopened, the conversation has the one question and its regenerated answer; only the last
    # answer offers Regenerate.
    assert re.search(r"/chat/\d+/$", page.url), page.url
    scripted_model.script = Script(tokens=["Water the beds every second evening [1]."])
    ask(page, "How often do I water the beds?")
    # The second answer's own card: until its turn is on the page, `.last` is the first answer's.
    expect(page.locator(".msg--assistant")).to_have_count(2)
    expect(page.locator(".msg--assistant").last.locator(".citation")).to_have_count(1, timeout=60_000)
    page.reload()
    expect(page.locator(".msg--user")).to_have_count(2)
    expect(page.locator(".msg--assistant").first).to_contain_text("12 May")
    expect(page.get_by_role("button", name="Regenerate")).to_have_count(1)
    expect(page.locator(".msg--assistant").last.get_by_role("button", name="Regenerate")).to_be_visible()


def test_a_broken_model_stream_shows_the_cut_off_answer_with_retry(
    gardener: User, scripted_model: ScriptedModel, web_server: str, browser_page: Page
) -> None:
    page = browser_page
    sign_in(page, web_server, gardener)
    page.goto(f"{web_server}/chat/")
    scripted_model.script = Script(tokens=ANSWER, break_after=2)
    ask(page)
    turn = page.locator(".msg--assistant").last
    alert = turn.get_by_role("alert")
    # Which error the break is reported as (broke off, cannot be reached) is the service's call;
    # the page's part is that one is shown, with what arrived and a Retry.
    expect(alert).to_contain_text(re.compile(r"\(model_\w+\)"), timeout=60_000)
    expect(alert).to_contain_text("What arrived before is kept above.")
    expect(turn.locator(".answer")).to_contain_text("the raised bed on 12 May")
    expect(turn.locator(".answer.cut")).to_have_count(1)
    expect(turn.locator(".answer")).to_have_attribute("aria-busy", "false")
    expect(turn.get_by_role("button", name="Stop")).to_have_count(0)
    page.screenshot(path=SCREENSHOTS / "chat-broken.png", full_page=True)

    scripted_model.script = Script(tokens=ANSWER)
    alert.get_by_role("button", name="Retry").click()
    expect(turn.locator(".citation")).to_have_count(1, timeout=60_000)
    expect(turn.get_by_role("alert")).to_have_count(0)
    expect(page.locator(".msg--user")).to_have_count(1)

    # The same cut-off state is what a reload shows after a failure.
    scripted_model.script = Script(tokens=ANSWER, break_after=2)
    ask(page, "When do the tomatoes go into the raised bed after the frost?")
    expect(page.locator(".msg--assistant").last.get_by_role("alert")).to_be_visible(timeout=60_000)
    page.reload()
    last = page.locator(".msg--assistant").last
    expect(last.get_by_role("alert")).to_contain_text(re.compile(r"\(model_\w+\)"))
    expect(last.locator(".answer.cut")).to_contain_text("the raised bed on 12 May")
    expect(last.get_by_role("button", name="Retry")).to_be_visible()


def test_a_dropped_connection_says_so_and_offers_to_reconnect(
    gardener: User, scripted_model: ScriptedModel, web_server: str, browser_page: Page
) -> None:
    page = browser_page
    sign_in(page, web_server, gardener)
    page.goto(f"{web_server}/chat/")
    scripted_model.script = SLOW
    ask(page)
    turn = page.locator(".msg--assistant").last
    expect(turn.locator(".answer")).to_contain_text("word2", timeout=30_000)
    os.kill(server_pid(web_server), signal.SIGKILL)  # the server dies mid-answer

    banner = page.locator("#chat-error")
    expect(banner).to_contain_text("Connection lost")
    expect(banner.get_by_role("button", name="Reconnect")).to_be_visible()
    expect(turn.locator(".alert")).to_contain_text("this answer was interrupted")
    expect(turn.get_by_role("link", name="Reload the conversation")).to_have_attribute(
        "href", re.compile(r"^/chat/\d+/$")
    )
    expect(turn.get_by_role("button", name="Stop")).to_have_count(0)
    page.screenshot(path=SCREENSHOTS / "chat-connection-lost.png", full_page=True)


def test_remember_this_saves_a_streamed_answer_as_a_note(
    gardener: User, scripted_model: ScriptedModel, web_server: str, browser_page: Page
) -> None:
    page = browser_page
    sign_in(page, web_server, gardener)
    page.goto(f"{web_server}/chat/")
    scripted_model.script = Script(tokens=ANSWER)
    ask(page)
    turn = page.locator(".msg--assistant").last
    expect(turn.locator(".citation")).to_have_count(1, timeout=60_000)
    cited = turn.locator(".citation").first.get_attribute("href")

    # Nothing is saved until the button is pressed (the sources page fetched aside: this page keeps the streamed answer).
    listed = page.request.get(f"{web_server}/").text()
    assert "Garden plan" in listed and "Remembered:" not in listed
    turn.get_by_role("button", name="Remember this").click()
    note_link = turn.get_by_role("link", name="Open the note")
    expect(note_link).to_be_visible()
    expect(turn.locator(".remembered")).to_contain_text("Remembered")
    page.screenshot(path=SCREENSHOTS / "chat-remembered.png", full_page=True)
    note_url = note_link.get_attribute("href")

    # Reopened, the conversation says so instead of offering it again.
    page.reload()
    expect(page.get_by_role("button", name="Remember this")).to_have_count(0)
    expect(page.get_by_role("link", name="Open the note")).to_have_attribute("href", note_url or "")

    # The note is listed with the person's sources, is processed, and holds the exchange.
    page.goto(f"{web_server}/")
    row = page.locator(".source", has=page.locator(f"a[href='{note_url}']"))
    expect(row).to_contain_text(f"Remembered: {QUESTION}")
    expect(row.locator(".job")).to_have_attribute("data-status", "done", timeout=60_000)
    row.get_by_role("link", name=f"Remembered: {QUESTION}").click()
    passages = page.locator(".passage")
    expect(passages.first).to_contain_text(QUESTION)
    expect(page.locator("article")).to_contain_text("12 May")
    expect(page.locator("article")).to_contain_text(f"({cited})")


def server_pid(url: str) -> int:
    """The web server process the `web_server` fixture started for `url` (found by its port)."""
    port = url.rsplit(":", 1)[1]
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                argv = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            command = b" ".join(argv)
            if b"secondbrain.asgi:application" in command and f"tcp:port={port}:".encode() in command:
                return int(entry.name)
    raise AssertionError(f"no web server on port {port}")


@pytest.fixture
def hostile_answer(gardener: User) -> tuple[Message, Chunk]:
    """An answer stored with hostile Markdown, as a model that read a booby-trapped note might write it."""
    conversation = Conversation.objects.create(owner=gardener, title="Tomatoes")
    question = Message.objects.create(conversation=conversation, role=Message.Role.USER, content=QUESTION)
    answer = Message.objects.create(conversation=conversation, role=Message.Role.ASSISTANT, content=HOSTILE)
    chunk = Chunk.objects.get(source__owner=gardener, text__contains="12 May")
    Citation.objects.create(
        message=answer, marker=1, chunk=chunk, source=chunk.source, source_title="Garden plan", excerpt=chunk.text
    )
    return question, chunk


def test_hostile_markdown_never_becomes_live_html(
    gardener: User,
    hostile_answer: tuple[Message, Chunk],
    scripted_model: ScriptedModel,
    web_server: str,
    browser_page: Page,
) -> None:
    page = browser_page
    question, chunk = hostile_answer
    conversation = question.conversation
    sign_in(page, web_server, gardener)
    page.goto(f"{web_server}/chat/{conversation.pk}/")
    stored = page.locator(f"#turn-{question.pk} .answer")
    expect(stored.locator("strong")).to_have_text("Bold")  # Markdown is rendered…
    expect(stored.locator("a.cite")).to_have_attribute("href", f"/sources/{chunk.source_id}/#chunk-{chunk.pk}")
    expect(stored).to_contain_text("<script>")  # …hostile HTML shows as text
    assert "[7]" not in stored.inner_text()  # a marker that points nowhere is dropped

    # The same answer arriving live from the model.
    scripted_model.script = Script(tokens=[HOSTILE[i : i + 25] for i in range(0, len(HOSTILE), 25)])
    ask(page, "Anything else about the tomatoes?")
    expect(page.locator(".msg--assistant").last.locator(".stage")).to_be_hidden(timeout=60_000)
    page.wait_for_timeout(500)
    messages = page.locator("#messages")
    expect(messages.locator("script")).to_have_count(0)
    expect(messages.locator("img")).to_have_count(0)
    expect(messages.locator("[onerror]")).to_have_count(0)
    expect(messages.locator("a[href^='javascript' i]")).to_have_count(0)
    for link in messages.locator("a").all():
        href = link.get_attribute("href") or ""
        assert href.startswith(("/", "#")) and not href.startswith("//"), href  # only this site's pages
    assert page.evaluate("window.__xss") is None


LONG_ANSWER = (
    "The tomatoes go into the raised bed on 12 May [1]. "
    "See https://example.org/a/very/long/address/that/does/not/break/anywhere/by/itself/at/all/tomatoes "
    "and `a_very_long_identifier_without_any_spaces_in_it_at_all_whatsoever_tomatoes`.\n\n"
    "```\nwater_the_beds_every_second_evening_the_rain_barrel_holds_three_hundred_litres_of_water\n```\n\n"
    "| bed | planted | watered every second evening from the rain barrel by the shed |\n|---|---|---|\n"
    "| raised | 12 May | yes, after the last frost, when the seedlings leave the greenhouse |"
)


@pytest.fixture
def long_answer(gardener: User) -> Conversation:
    """A stored answer with what stretches a narrow screen: a long address, code, a table."""
    conversation = Conversation.objects.create(owner=gardener, title=QUESTION)
    Message.objects.create(conversation=conversation, role=Message.Role.USER, content=QUESTION)
    answer = Message.objects.create(conversation=conversation, role=Message.Role.ASSISTANT, content=LONG_ANSWER)
    chunk = Chunk.objects.get(source__owner=gardener, text__contains="12 May")
    Citation.objects.create(
        message=answer, marker=1, chunk=chunk, source=chunk.source, source_title="Garden plan", excerpt=chunk.text
    )
    return conversation


def test_a_phone_sized_screen_folds_the_list_and_nothing_overflows(
    gardener: User, long_answer: Conversation, web_server: str, browser_page: Page
) -> None:
    browser = browser_page.context.browser
    assert browser is not None
    page = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True).new_page()
    sign_in(page, web_server, gardener)
    page.goto(f"{web_server}/chat/{long_answer.pk}/")
    expect(page.locator(".answer pre")).to_be_visible()
    expect(page.locator(".answer table")).to_be_visible()

    conversations = page.locator("#conversations")
    expect(conversations).not_to_have_attribute("open", "")
    expect(page.locator("#conversation-list")).to_be_hidden()
    page.get_by_text("Conversations", exact=True).click()
    expect(page.locator("#conversation-list")).to_be_visible()
    fits = "() => document.documentElement.scrollWidth <= document.documentElement.clientWidth"
    assert page.evaluate(fits), page.evaluate(
        "[document.documentElement.scrollWidth, document.documentElement.clientWidth]"
    )
    page.screenshot(path=SCREENSHOTS / "chat-phone.png", full_page=True)

    # The source page a citation opens fits too.
    page.locator(".citation").first.click()
    expect(page.locator(".passage:target")).to_be_visible()
    assert page.evaluate(fits)
    page.screenshot(path=SCREENSHOTS / "source-phone.png", full_page=True)

    # On a wide screen the list is simply open.
    browser_page.set_viewport_size({"width": 1200, "height": 900})
    sign_in(browser_page, web_server, gardener)
    browser_page.goto(f"{web_server}/chat/{long_answer.pk}/")
    expect(browser_page.locator("#conversation-list")).to_be_visible()
    expect(browser_page.get_by_text("Conversations", exact=True)).to_be_hidden()
    browser_page.screenshot(path=SCREENSHOTS / "chat-desktop-long.png", full_page=True)
