"""Every page a person sees, in Chromium, under the Content-Security-Policy: nothing is refused, and
what needs script still works — htmx posts, both websockets, the streamed answer, the player, the
API's documentation, the admin.

A refused inline style or script, eval, or a connection the policy does not name would show as a
`securitypolicyviolation` event (and a console error); each is recorded across every page.
"""

import hashlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.core.files.base import ContentFile
from playwright.sync_api import ConsoleMessage, Page, expect

from accounts.models import User
from chat.models import Citation, Conversation, Message
from ingestion.models import Chunk, Job, Source
from tests.factories import PASSWORD, ApiClient, make_source, make_user
from tests.scripted_model import ScriptedModel
from tests.test_pipeline import GARDEN_NOTE
from tests.ui.test_drop import sign_in
from tests.ui.test_walkthrough import sign_up

DATA = Path(__file__).resolve().parent.parent / "data"
EVIL = "https://evil.example/login"
SLOW = 30_000  # ms, for a step that checks a password
PROCESSED = 240_000  # ms, for a note to be processed: a fresh run here under load average 8 kept one queued past 60 s
# Reports each violation to the test, from every document the page loads.
REPORT_VIOLATIONS = """document.addEventListener("securitypolicyviolation", (event) => {
  window.reportViolation(`${event.violatedDirective} blocked ${event.blockedURI || "inline"} in ${event.sourceFile}:${event.lineNumber}`);
});"""


class Watch:
    """What the browser refused (the events, and Chromium's "Refused to …" console errors that name
    the policy), and any script that failed: a policy that broke a script would show there too."""

    def __init__(self, page: Page) -> None:
        self.violations: list[str] = []
        self.refusals: list[str] = []
        self.exceptions: list[str] = []
        self.errors: list[str] = []  # any other console error: a missing resource, an htmx swap with no target
        page.expose_function("reportViolation", self._violation)
        page.add_init_script(REPORT_VIOLATIONS)
        page.on("console", self._console)
        page.on("pageerror", lambda error: self.exceptions.append(f"{page.url}: {error}"))

    def _violation(self, text: str) -> None:
        self.violations.append(text)

    def _console(self, message: ConsoleMessage) -> None:
        if message.type == "error" and "Content Security Policy" in message.text:
            self.refusals.append(f"{message.location.get('url')}: {message.text}")
        elif message.type == "error":
            self.errors.append(f"{message.location.get('url')}: {message.text}")


@pytest.fixture
def reader(celery_worker: None) -> Iterator[tuple[User, dict[str, int]]]:
    """A person with a processed note, a recording, a PDF and an answer in which the model wrote an
    address of its own — all made before the browser starts (see test_chat_streaming's `gardener`)."""
    user = make_user("reader")
    api = ApiClient.for_user(user)
    job = api.post("/notes", {"text": GARDEN_NOTE}).json()
    assert api.wait_for_job(job["job_id"])["status"] == "done"
    note = Source.objects.get(pk=job["source_id"])
    recording = _recording(user)
    pdf = next(path for path in sorted((DATA / "pdf").glob("*.pdf")) if "_117p_" not in path.name)
    document = make_source(
        user, "Seed catalogue", "Tomatoes: Moneymaker, Gardener's Delight.", file=(pdf.name, pdf.read_bytes())
    )
    chunk = note.chunks.filter(text__contains="12 May").first()
    assert chunk is not None
    conversation = _answer_with_a_link(user, chunk)
    make_admin()
    ids = {"note": note.pk, "chunk": chunk.pk, "recording": recording.pk, "pdf": document.pk}
    yield user, {**ids, "conversation": conversation.pk}


def _recording(owner: User) -> Source:
    body = (DATA / "audio" / "jfk.flac").read_bytes()
    source = Source(
        owner=owner,
        kind=Source.Kind.AUDIO,
        title="Inaugural address",
        mime_type="audio/flac",
        size=len(body),
        sha256=hashlib.sha256(body).hexdigest(),
        status=Source.Status.READY,
        metadata={"duration": 11.0},
    )
    source.file.save("jfk.flac", ContentFile(body), save=False)
    source.save()
    Job.objects.create(owner=owner, source=source, status=Job.Status.DONE, stage=Job.Stage.DONE, progress=100)
    Chunk.objects.create(
        source=source,
        owner=owner,
        ordinal=0,
        text="Ask not what your country can do for you.",
        anchor={"start": 2.0, "end": 9.0},
        occurred_at=source.occurred_at,
        embedding=[0.0] * 383 + [1.0],
    )
    return source


def _answer_with_a_link(owner: User, chunk: Chunk) -> Conversation:
    conversation = Conversation.objects.create(owner=owner, title="Tomatoes")
    Message.objects.create(conversation=conversation, role=Message.Role.USER, content="When do the tomatoes go in?")
    answer = Message.objects.create(
        conversation=conversation,
        role=Message.Role.ASSISTANT,
        content=f"On 12 May [1]. Order seeds at [the shop]({EVIL}), <{EVIL}> or {EVIL}.",
    )
    Citation.objects.create(
        message=answer, marker=1, chunk=chunk, source=chunk.source, source_title=chunk.source.title, excerpt=chunk.text
    )
    return conversation


def make_admin() -> User:
    admin = make_user("operator")
    admin.is_staff = admin.is_superuser = True
    admin.save(update_fields=["is_staff", "is_superuser"])
    return admin


def test_every_page_works_under_the_content_security_policy(
    reader: tuple[User, dict[str, int]], scripted_model: ScriptedModel, web_server: str, browser_page: Page
) -> None:
    page = browser_page
    watch = Watch(page)
    user, ids = reader

    # Signed out: sign-up, log-in, the admin's log-in.
    response = page.goto(f"{web_server}/accounts/signup/")
    assert response is not None
    policy = response.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "style-src 'self'" in policy and "frame-ancestors 'none'" in policy
    page.goto(f"{web_server}/accounts/login/")
    sign_up(page, "newcomer")
    # Hashing a password takes ~0.4 s of CPU; on a busy machine, many times that.
    expect(page.get_by_role("heading", name="Write a note")).to_be_visible(timeout=SLOW)
    page.get_by_role("button", name="Log out newcomer").click()
    page.goto(f"{web_server}/admin/login/")
    expect(page.get_by_label("Username")).to_be_visible()

    # Sources: a note written through htmx, processed live over the jobs websocket.
    sign_in(page, web_server, user)
    page.get_by_label("Text").fill("# Shed\n\nThe shed key hangs behind the rain barrel.")
    page.get_by_role("button", name="Save note").click()
    row = page.locator(".source", has_text="Shed")
    expect(row.locator(".job")).to_have_attribute("data-status", "done", timeout=PROCESSED)
    expect(page.get_by_label("Text")).to_have_value("")

    # A source of each kind; the recording's ▶ runs our script.
    page.goto(f"{web_server}/sources/{ids['note']}/")
    expect(page.locator(".passage").first).to_be_visible()
    page.goto(f"{web_server}/sources/{ids['pdf']}/")
    expect(page.get_by_role("link", name="Open the PDF")).to_be_visible()
    page.goto(f"{web_server}/sources/{ids['recording']}/")
    page.get_by_role("button", name="Play from").first.click()
    page.wait_for_function("document.getElementById('player').currentTime >= 2")

    page.goto(f"{web_server}/search/?q=tomatoes")
    expect(page.locator("mark").first).to_be_visible()

    # Chat: an answer streams over the websocket and its card links to the passage.
    page.goto(f"{web_server}/chat/")
    expect(page.locator(".thread[data-socket='open']")).to_have_count(1)
    question = page.get_by_label("Your question")
    question.fill("When do the tomatoes go into the raised bed?")
    question.press("Enter")
    turn = page.locator(".msg--assistant").last
    expect(turn.locator(".citation").first).to_be_visible(timeout=60_000)
    expect(turn.locator(".answer")).to_contain_text("12 May")
    expect(turn.locator(".answer a.cite")).not_to_have_count(0)

    # An address the model wrote is text; the answer's only link is its citation.
    page.goto(f"{web_server}/chat/{ids['conversation']}/")
    answer = page.locator(".msg--assistant .answer").first
    expect(answer).to_contain_text(f"the shop ({EVIL})")
    links = answer.locator("a")
    expect(links).to_have_count(1)
    expect(links.first).to_have_attribute("href", f"/sources/{ids['note']}/#chunk-{ids['chunk']}")
    # A question asked in a conversation that already has answers.
    expect(page.locator(".thread[data-socket='open']")).to_have_count(1)
    page.get_by_label("Your question").fill("And where do the tomatoes go?")
    page.get_by_label("Your question").press("Enter")
    expect(page.locator(".msg--assistant")).to_have_count(2)
    expect(page.locator(".stage[data-event=done]")).to_have_count(1, timeout=60_000)

    page.goto(f"{web_server}/api/docs")
    expect(page.locator(".swagger-ui .opblock").first).to_be_visible()

    page.goto(f"{web_server}/settings/")
    expect(page.get_by_role("heading").first).to_be_visible()
    page.get_by_role("button", name="Log out reader").click()

    # The admin, signed in.
    page.goto(f"{web_server}/admin/login/")
    page.get_by_label("Username").fill("operator")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.locator("#site-name")).to_be_visible(timeout=SLOW)
    page.goto(f"{web_server}/admin/ingestion/source/")
    expect(page.locator("#result_list")).to_be_visible()
    page.goto(f"{web_server}/admin/ingestion/source/{ids['note']}/change/")
    expect(page.locator("#source_form")).to_be_visible()

    assert watch.violations == []
    assert watch.refusals == []
    assert watch.exceptions == []
    assert watch.errors == [], "\n".join(watch.errors)
