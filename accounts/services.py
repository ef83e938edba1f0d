import functools
import hashlib
import secrets
import zoneinfo
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth import SESSION_KEY, authenticate, password_validation
from django.contrib.sessions.models import Session
from django.core.exceptions import ValidationError
from django.db import IntegrityError, connection, transaction
from django.http import HttpRequest
from django.utils import timezone

from accounts.models import ApiToken, AuditEntry, User
from secondbrain import limits
from secondbrain.errors import AppError

TOKEN_PREFIX = "sb_"
# Writing last_used_at on every request would turn each API read into a write.
LAST_USED_RESOLUTION = timedelta(minutes=5)


def _hash(raw: str) -> str:
    return hashlib.sha256(raw.encode()).hexdigest()


@functools.cache  # the zone database does not change while the process runs, and listing it reads the disk
def time_zone_names() -> list[str]:
    """The IANA zone names a user may choose, sorted."""
    return sorted(zoneinfo.available_timezones())


def is_time_zone(name: str) -> bool:
    return name in time_zone_names()


def user_register(*, username: str, password: str, time_zone: str = "UTC") -> User:
    """Create a user, enforcing the sign-up switch and Django's password validators.

    `time_zone` comes from the sign-up page's browser; anything that is not a known zone becomes UTC.
    """
    if not settings.SIGNUP_OPEN:
        raise AppError("signup_closed", "Sign-up is closed on this server.", status=403)
    username = username.strip()
    if not username:
        raise AppError("invalid_username", "Choose a user name.", status=422)
    candidate = User(username=username, time_zone=time_zone if is_time_zone(time_zone) else "UTC")
    try:
        User.username_validator(username)
        password_validation.validate_password(password, user=candidate)
    except ValidationError as exc:
        raise AppError("invalid_credentials", " ".join(exc.messages), status=422) from None
    candidate.set_password(password)
    try:
        with transaction.atomic():
            candidate.save()
    except IntegrityError:
        raise AppError("username_taken", "That user name is taken.", status=409) from None
    return candidate


def user_time_zone_set(*, user: User, time_zone: str) -> None:
    """Set the zone the user's questions are read in ("yesterday" starts at their midnight)."""
    if not is_time_zone(time_zone):
        raise AppError("invalid_time_zone", f"{time_zone!r} is not a time zone.", status=422)
    user.time_zone = time_zone
    user.save(update_fields=["time_zone"])


def token_create(*, user: User, name: str = "") -> str:
    """Create an API token for `user` and return the raw token; only its hash is kept.

    At most RATE_LIMITS["token"] per user (RateLimited past it).
    """
    limits.rate_spend("token", user.pk)
    raw = TOKEN_PREFIX + secrets.token_urlsafe(32)
    ApiToken.objects.create(user=user, name=name, prefix=raw[:8], key_hash=_hash(raw))
    return raw


def token_for_credentials(*, username: str, password: str, request: HttpRequest | None = None) -> str:
    """A new token for valid credentials. `request` gives the log-in throttle its client's address."""
    user = authenticate(request, username=username, password=password)
    if user is None:
        raise AppError("invalid_credentials", "Wrong user name or password.", status=401)
    assert isinstance(user, User)
    return token_create(user=user, name="api")


def token_user(*, raw: str) -> User | None:
    """The active user a raw token belongs to, or None."""
    token = token_find(raw=raw)
    return token.user if token is not None else None


def token_find(*, raw: str) -> ApiToken | None:
    """The token of an active user that `raw` is (its `user` loaded), or None; notes when it was used."""
    token = ApiToken.objects.select_related("user").filter(key_hash=_hash(raw)).first()
    if token is None or not token.user.is_active:
        return None
    now = timezone.now()
    if token.last_used_at is None or now - token.last_used_at > LAST_USED_RESOLUTION:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
    return token


def password_change(*, user: User, old_password: str, new_password: str) -> None:
    """Set a new password after checking the current one and Django's validators.

    Every session signed in with the old password ends at its next request (Django keeps a hash of
    the password in the session); the caller keeps its own with `update_session_auth_hash`. API
    tokens stay: they are listed and revoked on their own.
    """
    _password_confirm(user=user, password=old_password)
    try:
        password_validation.validate_password(new_password, user=user)
    except ValidationError as exc:
        raise AppError("invalid_password", " ".join(exc.messages), status=422) from None
    user.set_password(new_password)
    user.save(update_fields=["password"])


def token_revoke(*, token: ApiToken) -> None:
    """Delete the token: the next request that sends it gets 401 (each request looks its hash up)."""
    token.delete()


def account_delete(*, user: User, password: str) -> None:
    """Delete the account after its password is confirmed, with everything of it (see `user_delete`)."""
    _password_confirm(user=user, password=password)
    user_delete(user=user)


def user_delete(*, user: User) -> None:
    """Delete the user and all that is theirs: sources with their chunks, jobs and files on disk,
    conversations with their messages and citations, API tokens and sessions.

    The files go once the deletion is committed (ingestion/signals.py).
    """
    with transaction.atomic():
        # The ORM would load every chunk, vector and all, to cascade; one statement instead.
        with connection.cursor() as cursor:
            cursor.execute("DELETE FROM ingestion_chunk WHERE owner_id = %s", [user.pk])
        _sessions_end(user=user)
        user.delete()


def _sessions_end(*, user: User) -> None:
    # Sessions are not indexed by user: each live one is read. Deleting them rather than waiting for
    # them to expire leaves no row that names the user.
    user_id = str(user.pk)
    for session in Session.objects.filter(expire_date__gt=timezone.now()).iterator():
        if session.get_decoded().get(SESSION_KEY) == user_id:
            session.delete()


def _password_confirm(*, user: User, password: str) -> None:
    if not user.check_password(password):
        raise AppError("wrong_password", "That is not your current password.", status=403)


@dataclass(frozen=True)
class Via:
    """Where a change or a call came from, as the audit log names it: the interface and, when one was
    sent, the API token."""

    channel: AuditEntry.Channel
    token: ApiToken | None = None


def audit_record(
    *, user: User, action: AuditEntry.Action, via: Via | None, name: str = "", detail: Any = None, error: str = ""
) -> AuditEntry:
    """Write one entry of the person's audit log. `via` None: done by the app itself (a test, a
    benchmark), with no interface to name."""
    via = via or Via(AuditEntry.Channel.APP)
    token = via.token
    return AuditEntry.objects.create(
        user=user,
        action=action,
        name=name[:64],
        channel=via.channel,
        token=token,
        token_label=_token_label(token),
        detail=detail or {},
        error=error[:300],
    )


def _token_label(token: ApiToken | None) -> str:
    if token is None:
        return ""
    return f"{token.name} ({token.prefix}…)" if token.name else f"{token.prefix}…"
