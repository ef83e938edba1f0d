from datetime import datetime
from typing import Any

from django.contrib.auth import SESSION_KEY, update_session_auth_hash
from django.http import FileResponse, HttpRequest
from ninja import Router, Schema, Status
from ninja.security import HttpBearer

from accounts import export, selectors, services
from accounts.http import AuthedRequest
from secondbrain import limits, rls, timing

router = Router(tags=["auth"])
# Routes about everything of the signed-in person, under /api/ itself: `GET /api/export`.
data_router = Router(tags=["your data"])


class BearerToken(HttpBearer):
    def authenticate(self, request: HttpRequest, token: str) -> Any:
        with timing.span("auth"):
            found = services.token_find(raw=token)
        if found is None:
            return None
        request.user = found.user
        request.api_token = found  # type: ignore[attr-defined]  # named in the audit log (`api_via`)
        # Until RowLevelSecurityMiddleware's end of the request, which took it for anonymous.
        rls.enter(found.user.pk)
        return found.user


class CredentialsIn(Schema):
    username: str
    password: str


class TokenOut(Schema):
    token: str


class PasswordChangeIn(Schema):
    old_password: str
    new_password: str


class PasswordIn(Schema):
    password: str


class ApiTokenOut(Schema):
    """A token as it is listed: never the token itself, which is shown once and not stored."""

    id: int
    name: str
    prefix: str
    created_at: datetime
    last_used_at: datetime | None


@router.post("/register", auth=None, response={201: TokenOut})
def register(request: HttpRequest, payload: CredentialsIn) -> Status[dict[str, str]]:
    limits.rate_spend("signup_address", limits.client_address(request))
    user = services.user_register(username=payload.username, password=payload.password)
    return Status(201, {"token": services.token_create(user=user, name="api")})


@router.post("/token", auth=None, response=TokenOut)
def token(request: HttpRequest, payload: CredentialsIn) -> dict[str, str]:
    return {
        "token": services.token_for_credentials(username=payload.username, password=payload.password, request=request)
    }


@router.post("/password", response={204: None})
def password_change(request: AuthedRequest, payload: PasswordChangeIn) -> Status[None]:
    """A new password; other browser sessions are signed out, this one (if it is one) stays."""
    services.password_change(user=request.user, old_password=payload.old_password, new_password=payload.new_password)
    if request.session.get(SESSION_KEY) == str(request.user.pk):
        update_session_auth_hash(request, request.user)
    return Status(204, None)


@router.get("/tokens", response=list[ApiTokenOut])
def token_list(request: AuthedRequest) -> Any:
    return selectors.tokens_of(user=request.user)


@router.delete("/tokens/{token_id}", response={204: None})
def token_revoke(request: AuthedRequest, token_id: int) -> Status[None]:
    services.token_revoke(token=selectors.token_get(user=request.user, token_id=token_id))
    return Status(204, None)


@router.delete("/account", response={204: None})
def account_delete(request: AuthedRequest, payload: PasswordIn) -> Status[None]:
    """The account and everything of it — sources, files, conversations, tokens — after the password."""
    services.account_delete(user=request.user, password=payload.password)
    request.session.flush()
    return Status(204, None)


@data_router.get("/export", response={200: None}, summary="Everything of yours as one zip archive")
def export_archive(request: AuthedRequest) -> FileResponse:
    """Notes as Markdown with front matter, uploaded files as uploaded, conversations with their
    citations as JSON, and a manifest."""
    return FileResponse(
        export.export_file(user=request.user),
        as_attachment=True,
        filename=export.export_filename(user=request.user),
        content_type="application/zip",
    )
