import pytest
from django.test import override_settings

from accounts.models import ApiToken, User
from tests.factories import PASSWORD, ApiClient, assert_error

pytestmark = pytest.mark.django_db


def test_it_registers_a_user_and_returns_a_working_token() -> None:
    response = ApiClient().post("/auth/register", {"username": "bob", "password": PASSWORD})
    assert response.status_code == 201
    token = response.json()["token"]
    assert ApiClient(token).get("/sources").status_code == 200


def test_it_stores_only_the_hash_of_a_token() -> None:
    token = ApiClient().post("/auth/register", {"username": "bob", "password": PASSWORD}).json()["token"]
    stored = ApiToken.objects.get()
    assert token not in {stored.key_hash, stored.prefix}
    assert not ApiToken.objects.filter(key_hash=token).exists()


def test_it_issues_a_token_for_valid_credentials_only(user: User) -> None:
    good = ApiClient().post("/auth/token", {"username": "alice", "password": PASSWORD})
    assert good.status_code == 200
    assert ApiClient(good.json()["token"]).get("/jobs").status_code == 200
    assert_error(
        ApiClient().post("/auth/token", {"username": "alice", "password": "wrong"}), 401, "invalid_credentials"
    )


def test_it_refuses_a_taken_username(user: User) -> None:
    assert_error(ApiClient().post("/auth/register", {"username": "alice", "password": PASSWORD}), 409, "username_taken")


def test_it_refuses_a_weak_password() -> None:
    assert_error(ApiClient().post("/auth/register", {"username": "bob", "password": "123"}), 422, "invalid_credentials")
    assert not User.objects.filter(username="bob").exists()


@override_settings(SIGNUP_OPEN=False)
def test_it_refuses_sign_up_when_closed() -> None:
    assert_error(ApiClient().post("/auth/register", {"username": "bob", "password": PASSWORD}), 403, "signup_closed")
    assert not User.objects.exists()


def test_it_rejects_requests_without_a_valid_token() -> None:
    assert_error(ApiClient().get("/sources"), 401, "unauthorized")
    assert_error(ApiClient("sb_not-a-token").get("/sources"), 401, "unauthorized")


def test_it_answers_malformed_json_with_the_error_shape() -> None:
    response = ApiClient().post("/auth/register", raw="{not json")
    assert response.status_code in {400, 422}
    assert set(response.json()) == {"error"}
