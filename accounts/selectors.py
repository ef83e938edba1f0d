import hashlib
from importlib import import_module

from django.conf import settings
from django.contrib.auth import SESSION_KEY
from django.db.models import QuerySet
from django.shortcuts import get_object_or_404

from accounts.models import ApiToken, User


def tokens_of(*, user: User) -> QuerySet[ApiToken]:
    return ApiToken.objects.filter(user=user).order_by("-created_at", "-id")


def token_get(*, user: User, token_id: int) -> ApiToken:
    """The user's token, or Http404 — also for another user's id."""
    return get_object_or_404(ApiToken, pk=token_id, user=user)


def credentials_signed_in(*, session_key: str | None, token: str | None) -> bool:
    """Whether a session key or an API token belongs to an active user: a cheap look-up, without
    the session's password-hash check or a token's last-used write that a request makes."""
    if (
        token
        and ApiToken.objects.filter(key_hash=hashlib.sha256(token.encode()).hexdigest())
        .filter(user__is_active=True)
        .exists()
    ):
        return True
    if not session_key:
        return False
    store = import_module(settings.SESSION_ENGINE).SessionStore(session_key)
    user_id = store.get(SESSION_KEY)
    return user_id is not None and User.objects.filter(pk=user_id, is_active=True).exists()


def user_named(username: str) -> User | None:
    """The active user with this username (the command line names people this way), or None."""
    return User.objects.filter(username=username, is_active=True).first()
