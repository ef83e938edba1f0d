from django.db.models import QuerySet
from django.shortcuts import get_object_or_404

from accounts.models import ApiToken, User


def tokens_of(*, user: User) -> QuerySet[ApiToken]:
    return ApiToken.objects.filter(user=user).order_by("-created_at", "-id")


def token_get(*, user: User, token_id: int) -> ApiToken:
    """The user's token, or Http404 — also for another user's id."""
    return get_object_or_404(ApiToken, pk=token_id, user=user)


def user_named(username: str) -> User | None:
    """The active user with this username (the command line names people this way), or None."""
    return User.objects.filter(username=username, is_active=True).first()
