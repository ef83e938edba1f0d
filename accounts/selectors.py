import hashlib
from dataclasses import dataclass
from importlib import import_module

from django.conf import settings
from django.contrib.auth import SESSION_KEY
from django.db.models import QuerySet
from django.shortcuts import get_object_or_404

from accounts.models import ApiToken, AuditEntry, User


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


AUDIT_SHOWN = 100  # the settings page shows the newest entries


@dataclass(frozen=True)
class AuditRow:
    entry: AuditEntry
    source_title: str | None  # the source's title while it exists (the log keeps no titles itself)


def audit_entries_of(*, user: User, limit: int = AUDIT_SHOWN) -> list[AuditRow]:
    """The person's newest audit entries, newest first, each with the title of its source if it still exists."""
    from ingestion.models import Source  # ingestion's models import this app's

    entries = list(AuditEntry.objects.filter(user=user).select_related("token").order_by("-created_at", "-id")[:limit])
    ids = {entry.source_id for entry in entries if entry.source_id is not None}
    titles = dict(Source.objects.filter(owner=user, pk__in=ids).values_list("pk", "title"))
    return [AuditRow(entry, titles.get(entry.source_id) if entry.source_id else None) for entry in entries]
