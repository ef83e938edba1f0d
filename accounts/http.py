from django.http import HttpRequest
from django_htmx.middleware import HtmxDetails

from accounts.models import User


class AuthedRequest(HttpRequest):
    """The request a view gets behind `login_required`, or an API route behind its authentication:
    its user is signed in (the type checker cannot know that from `HttpRequest`)."""

    user: User
    htmx: HtmxDetails  # django-htmx's middleware
