from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from django.conf import settings
from django.contrib.auth.models import AbstractUser
from django.db import models

UTC = ZoneInfo("UTC")


def zone_named(name: str) -> ZoneInfo:
    """The zone called `name`, or UTC when there is no such zone (a stale or hand-edited value)."""
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return UTC


class User(AbstractUser):
    time_zone = models.CharField(max_length=64, default="UTC")

    @property
    def zone(self) -> ZoneInfo:
        """The zone the person reads and asks in: pages, questions, dates shown to the model."""
        return zone_named(self.time_zone)


class ApiToken(models.Model):
    """A bearer token for the API. Only its sha256 is stored; the token is shown once."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100, blank=True)
    prefix = models.CharField(max_length=12)
    key_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.user})"
