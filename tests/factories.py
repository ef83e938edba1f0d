import itertools
import json
import time
from typing import Any

from django.test import Client

from accounts.models import User
from accounts.services import token_create

PASSWORD = "a-long-enough-Passw0rd"
_serial = itertools.count(1)


def make_user(username: str | None = None) -> User:
    user = User(username=username or f"user{next(_serial)}")
    user.set_password(PASSWORD)
    user.save()
    return user


class ApiClient:
    """Django's test client speaking JSON to /api/ with a bearer token — the way an API user does."""

    def __init__(self, token: str | None = None) -> None:
        self.client = Client()
        self.token = token

    @classmethod
    def for_user(cls, user: User) -> "ApiClient":
        return cls(token_create(user=user))

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}

    def get(self, path: str, **params: Any) -> Any:
        return self.client.get(f"/api{path}", params, headers=self._headers())

    def post(self, path: str, body: Any = None, *, raw: str | None = None) -> Any:
        data = raw if raw is not None else json.dumps(body if body is not None else {})
        return self.client.post(f"/api{path}", data, content_type="application/json", headers=self._headers())

    def delete(self, path: str) -> Any:
        return self.client.delete(f"/api{path}", headers=self._headers())

    def wait_for_job(self, job_id: int, timeout: float = 120.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            job = self.get(f"/jobs/{job_id}").json()
            if job["status"] in {"done", "failed"}:
                return job
            if time.monotonic() > deadline:
                raise AssertionError(f"job {job_id} still {job['status']} after {timeout} s: {job}")
            time.sleep(0.2)


def assert_error(response: Any, status: int, code: str) -> None:
    assert response.status_code == status, response.content
    body = response.json()
    assert set(body) == {"error"}, body
    assert body["error"]["code"] == code, body
    assert body["error"]["message"], body
