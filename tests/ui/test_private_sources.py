"""The private toggle in Chromium: a source made private on its page is left out of the chat's answer
until "Include private sources" is ticked; then it is cited, with a lock, and Regenerate keeps it.

The scripted model server writes the answer; search, the relevance gate, the citation check and the
pages are the real ones.
"""

import pytest
from playwright.sync_api import Page, expect

from accounts.models import User
from tests.chat.test_private_sources import ABOUT_THERAPY, THERAPY_ANSWER, THERAPY_NOTE
from tests.factories import ApiClient, make_user
from tests.scripted_model import Script, ScriptedModel
from tests.test_pipeline import GARDEN_NOTE
from tests.ui.test_drop import sign_in
from tests.ui.test_walkthrough import SCREENSHOTS


@pytest.fixture
def patient(celery_worker: None) -> tuple[User, int]:
    """Someone with a garden plan and therapy notes, both processed and neither private yet. Made before
    the browser starts (see tests/ui/test_chat_controls.py)."""
    user = make_user("patient")
    api = ApiClient.for_user(user)
    ids = []
    for text in (GARDEN_NOTE, THERAPY_NOTE):
        job = api.post("/notes", {"text": text}).json()
        assert api.wait_for_job(job["job_id"])["status"] == "done"
        ids.append(job["source_id"])
    return user, ids[1]


def ask(page: Page, text: str) -> None:
    question = page.get_by_label("Your question")
    question.fill(text)
    question.press("Enter")


def test_a_source_made_private_stays_out_of_answers_until_included_then_is_cited_with_a_lock(
    patient: tuple[User, int], scripted_model: ScriptedModel, web_server: str, browser_page: Page
) -> None:
    user, therapy = patient
    page = browser_page
    sign_in(page, web_server, user)
    lock = page.get_by_role("img", name="Private source")

    # Made private on its page: the lock shows in its title at once, and in the sources list.
    page.goto(f"{web_server}/sources/{therapy}/")
    heading = page.get_by_role("heading", name="Therapy notes")
    expect(heading.get_by_role("img", name="Private source")).to_have_count(0)
    page.get_by_role("button", name="Make private").click()
    expect(heading.get_by_role("img", name="Private source")).to_be_visible()
    expect(page.get_by_role("button", name="Make searchable")).to_be_visible()
    page.screenshot(path=SCREENSHOTS / "source-private.png", full_page=True)
    page.goto(f"{web_server}/")
    expect(page.locator(f"#source-{therapy}").get_by_role("img", name="Private source")).to_be_visible()
    expect(lock).to_have_count(1)  # the garden plan has none
    page.screenshot(path=SCREENSHOTS / "sources-private.png", full_page=True)

    # Asked about it, the chat leaves it out: nothing in the notes it may read answers this.
    scripted_model.script = Script(tokens=THERAPY_ANSWER)
    page.goto(f"{web_server}/chat/")
    expect(page.locator(".thread[data-socket='open']")).to_have_count(1)  # sent before it opens, a question is lost
    box = page.get_by_label("Include private sources")
    expect(box).not_to_be_checked()
    ask(page, ABOUT_THERAPY)
    turn = page.locator(".msg--assistant").last
    expect(turn.locator(".stage")).to_have_attribute("data-event", "done", timeout=60_000)
    expect(turn.locator(".answer")).to_contain_text("couldn't find")
    expect(turn.locator(".citations")).not_to_contain_text("Therapy notes")

    # Included: the answer cites it, and its card carries the lock.
    box.check()
    ask(page, ABOUT_THERAPY)
    turn = page.locator(".msg--assistant").last
    card = turn.locator(".citation").first
    expect(card).to_contain_text("Therapy notes", timeout=60_000)
    expect(card.get_by_role("img", name="Private source")).to_be_visible()
    expect(turn.locator(".answer")).to_contain_text("3 June")
    page.screenshot(path=SCREENSHOTS / "chat-private-source-included.png", full_page=True)

    # Regenerate asks again as the box says (still ticked): the private source is cited again.
    expect(box).to_be_checked()
    scripted_model.script = Script(tokens=["Dr Okafor sees you next on 3 June at 10:00 [1]."])
    turn.get_by_role("button", name="Regenerate").click()
    turn = page.locator(".msg--assistant").last
    expect(turn.locator(".answer")).to_contain_text("sees you next", timeout=60_000)
    expect(turn.locator(".citation").first).to_contain_text("Therapy notes")
    expect(turn.locator(".citation").first.get_by_role("img", name="Private source")).to_be_visible()
