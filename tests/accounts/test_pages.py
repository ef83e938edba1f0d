import pytest
from django.test import Client, override_settings

from accounts.models import User
from tests.factories import PASSWORD

pytestmark = pytest.mark.django_db


def test_a_person_signs_up_and_lands_on_their_sources() -> None:
    client = Client()
    response = client.post(
        "/accounts/signup/", {"username": "carol", "password": PASSWORD, "password_again": PASSWORD}, follow=True
    )
    assert response.redirect_chain[-1][0] == "/"
    assert b"Write a note" in response.content
    assert User.objects.filter(username="carol").exists()


def test_sign_up_explains_mismatched_passwords() -> None:
    response = Client().post("/accounts/signup/", {"username": "carol", "password": PASSWORD, "password_again": "x"})
    assert b"The two passwords differ." in response.content
    assert not User.objects.exists()


@override_settings(SIGNUP_OPEN=False)
def test_sign_up_page_says_when_it_is_closed() -> None:
    response = Client().get("/accounts/signup/")
    assert response.status_code == 403
    assert b"Sign-up is closed" in response.content


def test_log_in_and_log_out(user: User) -> None:
    client = Client()
    response = client.post("/accounts/login/", {"username": "alice", "password": PASSWORD}, follow=True)
    assert b"Log out alice" in response.content
    client.post("/accounts/logout/")
    assert client.get("/").status_code == 302


def test_pages_require_log_in() -> None:
    for path in ["/", "/chat/", "/sources/1/"]:
        response = Client().get(path)
        assert response.status_code == 302
        assert response["Location"].startswith("/accounts/login/")


def test_another_users_conversation_and_source_pages_are_404(user: User, other_user: User) -> None:
    from chat.models import Conversation
    from ingestion.models import Source

    conversation = Conversation.objects.create(owner=user, title="Private")
    source = Source.objects.create(
        owner=user, kind="note", title="Private", text="t", mime_type="text/markdown", size=1, sha256="0" * 64
    )
    client = Client()
    client.force_login(other_user)
    assert client.get(f"/chat/{conversation.pk}/").status_code == 404
    assert client.get(f"/sources/{source.pk}/").status_code == 404
    client.force_login(user)
    assert client.get(f"/chat/{conversation.pk}/").status_code == 200
    assert client.get(f"/sources/{source.pk}/").status_code == 200
