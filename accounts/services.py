import functools
import hashlib
import secrets
import zoneinfo
from datetime import timedelta

from django.conf import settings
from django.contrib.auth import authenticate, password_validation
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

from accounts.models import ApiToken, User
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
    """Create an API token for `user` and return the raw token; only its hash is kept."""
    raw = TOKEN_PREFIX + secrets.token_urlsafe(32)
    ApiToken.objects.create(user=user, name=name, prefix=raw[:8], key_hash=_hash(raw))
    return raw


def token_for_credentials(*, username: str, password: str) -> str:
    user = authenticate(username=username, password=password)
    if user is None:
        raise AppError("invalid_credentials", "Wrong user name or password.", status=401)
    assert isinstance(user, User)
    return token_create(user=user, name="api")


def token_user(*, raw: str) -> User | None:
    """The active user a raw token belongs to, or None."""
    token = ApiToken.objects.select_related("user").filter(key_hash=_hash(raw)).first()
    if token is None or not token.user.is_active:
        return None
    now = timezone.now()
    if token.last_used_at is None or now - token.last_used_at > LAST_USED_RESOLUTION:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
    return token.user
