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


class AuditEntry(models.Model):
    """One thing done to a person's data or asked of it from outside: an MCP tool call, a source added
    or deleted. The person reads them on the settings page; they go with the account.

    `detail` holds ids, kinds and the words of a query, never a source's text or title: a deleted
    source's words leave the log with it (titles are looked up while the source exists).
    """

    class Channel(models.TextChoices):
        PAGE = "page", "the web page"
        API = "api", "the API"
        MCP = "mcp", "MCP"
        STDIO = "stdio", "MCP over stdio"
        COMMAND = "command", "the command line"
        ADMIN = "admin", "the admin"
        APP = "app", "the app"

    class Action(models.TextChoices):
        TOOL_CALL = "tool_call", "called"
        SOURCE_ADD = "source_add", "added"
        SOURCE_DELETE = "source_delete", "deleted"

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="audit_entries")
    created_at = models.DateTimeField(auto_now_add=True)
    action = models.CharField(max_length=20, choices=Action.choices)
    name = models.CharField(max_length=64, blank=True)  # the tool's name, or the source's kind
    channel = models.CharField(max_length=10, choices=Channel.choices)
    # The token a call came with; its label stays when the token is revoked.
    token = models.ForeignKey(ApiToken, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    token_label = models.CharField(max_length=120, blank=True)
    detail = models.JSONField(default=dict, blank=True)
    error = models.CharField(max_length=300, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["user", "-created_at"])]

    def __str__(self) -> str:
        return f"{self.user} {self.action} {self.name} via {self.channel}"

    @property
    def source_id(self) -> int | None:
        value = self.detail.get("source_id")
        return value if isinstance(value, int) else None
