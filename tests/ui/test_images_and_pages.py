"""A person drops a photographed page with a caption and adds a web page by its address, and sees each
one on its source page: the image itself (served under the page's Content-Security-Policy) with its
caption, the page's title, text and a link to where it came from."""

import base64
import ipaddress
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from accounts.models import User
from tests.factories import make_user
from tests.ingestion.test_images import photographed_page
from tests.ingestion.test_web_pages import site_fixture  # noqa: F401 — the loopback web site (`site`)
from tests.ui.test_drop import DROP_SCRIPT, sign_in
from tests.ui.test_walkthrough import SCREENSHOTS


@pytest.fixture
def person(celery_worker: None) -> User:
    """Made before the browser starts: Playwright's sync API runs the test in a greenlet with a
    database connection of its own, which the worker fixture's teardown would leave broken."""
    return make_user("photographer")


def test_a_captioned_photo_shows_on_its_source_page(person: User, web_server: str, browser_page: Page) -> None:
    page = browser_page
    sign_in(page, web_server, person)
    page.get_by_label("Caption for the next images").fill("The boiler's service record, kept in the blue folder")
    photo = {"name": "IMG_2041.jpg", "type": "image/jpeg", "data": base64.b64encode(photographed_page()).decode()}
    page.evaluate(DROP_SCRIPT, [photo])

    row = page.locator("#sources .source").filter(has_text="The boiler's service record")
    expect(row.locator(".job")).to_have_attribute("data-status", "done", timeout=120_000)
    expect(row).to_contain_text("Image · ")
    expect(page.get_by_label("Caption for the next images")).to_have_value("")  # used: not for the next drop
    row.get_by_role("link").click()

    image = page.get_by_role("img", name="The boiler's service record, kept in the blue folder")
    expect(image).to_be_visible()
    page.wait_for_function("(img) => img.complete && img.naturalWidth > 1000", arg=image.element_handle())
    expect(page.locator("figcaption")).to_have_text("The boiler's service record, kept in the blue folder")
    # The caption and the text read in the photo are its passages.
    expect(page.locator(".passage h3.anchor")).to_have_text(["Caption", "Text in the image"])
    expect(page.locator(".passage").nth(1)).to_contain_text("Nordic Plumbing")
    page.screenshot(path=SCREENSHOTS / "image-source.png", full_page=True)


def test_a_web_page_added_by_its_address_gets_its_title_live(
    person: User,
    web_server: str,
    browser_page: Page,
    site: str,
    settings: Any,
) -> None:
    # The worker runs in this process: the site on loopback is open to it, as WEB_FETCH_ALLOWED_NETWORKS
    # would open it; the web process only checks the address, a name here.
    settings.WEB_FETCH_ALLOWED_NETWORKS = (ipaddress.ip_network("127.0.0.0/8"), ipaddress.ip_network("::1"))
    address = f"http://localhost:{site.rsplit(':', 1)[1]}/article"
    page = browser_page
    sign_in(page, web_server, person)
    page.get_by_label("Address").fill(address)
    page.get_by_role("button", name="Add page").click()

    row = page.locator("#sources .source").first
    expect(row.locator(".job")).to_have_attribute("data-status", "done", timeout=120_000)
    # The placeholder (the address) gave way to the page's own title and date, without a reload.
    expect(row.get_by_role("link")).to_have_text("Growing tomatoes on a balcony")
    expect(row).to_contain_text("Web page · 14 Mar 2026")
    expect(page.get_by_label("Address")).to_have_value("")
    page.screenshot(path=SCREENSHOTS / "web-page-added.png", full_page=True)

    row.get_by_role("link").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Growing tomatoes on a balcony")
    link = page.get_by_role("link", name=address)
    expect(link).to_have_attribute("href", address)
    expect(page.locator(".source-url")).to_contain_text("The Patient Gardener")
    expect(page.locator(".passage").filter(has_text="comfrey tea")).to_have_count(1)
    page.screenshot(path=SCREENSHOTS / "web-page-source.png", full_page=True)

    page.goto(f"{web_server}/")
    page.get_by_label("Address").fill("http://169.254.169.254/latest/meta-data/")
    page.get_by_role("button", name="Add page").click()
    expect(page.locator("#web-page-form .error")).to_contain_text("does not fetch")
