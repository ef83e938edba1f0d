"""The settings page: a signed-in person chooses the time zone their questions are read in."""

import pytest
from django.test import Client

from accounts.models import User
from tests.factories import PASSWORD

pytestmark = pytest.mark.django_db


def signed_in(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_the_settings_page_offers_every_zone_with_the_current_one_selected(user: User) -> None:
    User.objects.filter(pk=user.pk).update(time_zone="Asia/Tokyo")
    response = signed_in(user).get("/settings/")
    assert response.status_code == 200
    page = response.content.decode()
    assert '<option value="Asia/Tokyo" selected>Asia/Tokyo</option>' in page
    assert '<option value="America/New_York">America/New York</option>' in page
    assert page.index('value="Africa/Abidjan"') < page.index('value="Europe/Berlin"') < page.index('value="UTC"')


def test_the_nav_links_to_settings(user: User) -> None:
    assert b'href="/settings/"' in signed_in(user).get("/chat/").content


def test_choosing_a_zone_saves_it_for_this_user_only(user: User, other_user: User) -> None:
    response = signed_in(user).post("/settings/", {"time_zone": "America/Los_Angeles"}, follow=True)
    assert response.redirect_chain[-1][0] == "/settings/"
    assert b"Saved." in response.content and b"America/Los_Angeles" in response.content
    user.refresh_from_db()
    other_user.refresh_from_db()
    assert (user.time_zone, other_user.time_zone) == ("America/Los_Angeles", "UTC")


@pytest.mark.parametrize("zone", ["Mars/Olympus_Mons", "", "../../etc/passwd", "utc+2"])
def test_an_unknown_zone_is_refused_and_nothing_changes(user: User, zone: str) -> None:
    response = signed_in(user).post("/settings/", {"time_zone": zone})
    assert response.status_code == 422
    assert b"errorlist" in response.content
    user.refresh_from_db()
    assert user.time_zone == "UTC"


def test_settings_require_log_in() -> None:
    response = Client().get("/settings/")
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
    assert Client().post("/settings/", {"time_zone": "Europe/Berlin"}).status_code == 302


def test_sign_up_takes_the_browsers_zone() -> None:
    page = Client().get("/accounts/signup/").content.decode()
    assert 'name="time_zone"' in page and "data-browser-zone" in page
    Client().post(
        "/accounts/signup/",
        {"username": "dana", "password": PASSWORD, "password_again": PASSWORD, "time_zone": "Europe/Lisbon"},
    )
    assert User.objects.get(username="dana").time_zone == "Europe/Lisbon"


@pytest.mark.parametrize("zone", ["", "Not/AZone", "<script>"])
def test_sign_up_falls_back_to_utc_for_a_missing_or_unknown_zone(zone: str) -> None:
    Client().post(
        "/accounts/signup/", {"username": "erin", "password": PASSWORD, "password_again": PASSWORD, "time_zone": zone}
    )
    assert User.objects.get(username="erin").time_zone == "UTC"


def test_pages_show_times_in_the_chosen_zone(user: User) -> None:
    from datetime import UTC, datetime

    from ingestion import services

    when = datetime(2026, 3, 1, 23, 30, tzinfo=UTC)
    services.note_create(owner=user, title="Night shift", text="Logged at the depot.", occurred_at=when)
    client = signed_in(user)
    assert "1 Mar 2026, 23:30" in client.get("/").content.decode()
    User.objects.filter(pk=user.pk).update(time_zone="Asia/Tokyo")
    assert "2 Mar 2026, 08:30" in client.get("/").content.decode()
