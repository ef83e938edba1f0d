from collections.abc import Callable

from django.http import HttpRequest, HttpResponse
from django.utils import timezone


class UserTimeZoneMiddleware:
    """Pages show times in the signed-in person's zone (chosen under Settings); UTC otherwise."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated:
            timezone.activate(user.zone)
        else:
            timezone.deactivate()
        try:
            return self.get_response(request)
        finally:
            timezone.deactivate()
