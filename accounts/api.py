from typing import Any

from django.http import HttpRequest
from ninja import Router, Schema, Status
from ninja.security import HttpBearer

from accounts import services
from secondbrain import timing

router = Router(tags=["auth"])


class BearerToken(HttpBearer):
    def authenticate(self, request: HttpRequest, token: str) -> Any:
        with timing.span("auth"):
            user = services.token_user(raw=token)
        if user is not None:
            request.user = user
        return user


class CredentialsIn(Schema):
    username: str
    password: str


class TokenOut(Schema):
    token: str


@router.post("/register", auth=None, response={201: TokenOut})
def register(request: HttpRequest, payload: CredentialsIn) -> Status[dict[str, str]]:
    user = services.user_register(username=payload.username, password=payload.password)
    return Status(201, {"token": services.token_create(user=user, name="api")})


@router.post("/token", auth=None, response=TokenOut)
def token(request: HttpRequest, payload: CredentialsIn) -> dict[str, str]:
    return {"token": services.token_for_credentials(username=payload.username, password=payload.password)}
