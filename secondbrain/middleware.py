from collections.abc import Callable

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template.loader import render_to_string

from secondbrain.errors import DATABASE_UNREACHABLE, database_unavailable, with_retry_after


class DatabaseUnavailableMiddleware:
    """Answers a request that cannot reach the database with a 503, never a 500 or a traceback.

    The API's own handler answers for its routes; this covers the pages and the layers around
    them. Django turns an exception raised inside another middleware into a 500 before an outer one
    could see it, so the session and user, which load lazily wherever they are first asked for, are
    asked for here. Nothing is kept between requests: when the database is back, so is the app.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        try:
            request.user.is_authenticated  # noqa: B018 — loads the session and the user, see above
        except DATABASE_UNREACHABLE:
            return unavailable_response(request)
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if isinstance(exception, DATABASE_UNREACHABLE):
            return unavailable_response(request)
        return None


def unavailable_response(request: HttpRequest) -> HttpResponse:
    """The 503: the API's error shape under /api/, else a page (rendered without the request: its
    context processors would ask the database for the user again)."""
    error = database_unavailable()
    response: HttpResponse
    if request.path.startswith("/api/"):
        response = JsonResponse({"error": {"code": error.code, "message": error.message}}, status=error.status)
    else:
        page = render_to_string("unavailable.html", {"message": error.message})
        response = HttpResponse(page, status=error.status)
    return with_retry_after(response, error)
