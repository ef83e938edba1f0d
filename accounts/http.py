from django.http import HttpRequest
from django_htmx.middleware import HtmxDetails

from accounts.models import ApiToken, AuditEntry, User
from accounts.services import Via


class AuthedRequest(HttpRequest):
    """The request a view gets behind `login_required`, or an API route behind its authentication:
    its user is signed in (the type checker cannot know that from `HttpRequest`)."""

    user: User
    htmx: HtmxDetails  # django-htmx's middleware


def api_via(request: HttpRequest) -> Via:
    """Where an API request came from for the audit log: the API, with the token it sent (`BearerToken`
    keeps it on the request), or without one from a browser session."""
    token = getattr(request, "api_token", None)
    return Via(AuditEntry.Channel.API, token if isinstance(token, ApiToken) else None)


PAGE = Via(AuditEntry.Channel.PAGE)
