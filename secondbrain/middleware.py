from collections.abc import Callable, Mapping, Sequence

from django.conf import settings
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


HEALTH_PATH = "/healthz"


class HealthCheckMiddleware:
    """Answers `GET /healthz` with 200 before anything else looks at the request.

    A container's health check calls the web process directly over plain http, by its own address:
    ahead of SecurityMiddleware it is not redirected to https, and ahead of CommonMiddleware its Host
    (127.0.0.1:8000) need not be in ALLOWED_HOSTS. It says the process serves requests; it reads
    nothing, so a database outage shows as 503s on the pages, not as a web container restarted.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.path == HEALTH_PATH and request.method in {"GET", "HEAD"}:
            return HttpResponse("ok", content_type="text/plain")
        return self.get_response(request)


def csp_header(policy: Mapping[str, Sequence[str]]) -> str:
    """`{"default-src": ["'self'"], "object-src": ["'none'"]}` → "default-src 'self'; object-src 'none'"."""
    return "; ".join(" ".join([directive, *sources]) for directive, sources in policy.items())


class ContentSecurityPolicyMiddleware:
    """Sends settings.SECURE_CSP as every response's Content-Security-Policy (unless it has one).

    Django 6 has this built in (`django.middleware.csp`, reading a setting of the same name and
    shape); on Django 5.2 it is these few lines rather than a dependency. With DEBUG on, Django's
    technical 404 and 500 pages (inline style and script) go without it, so `make run` shows them whole.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response
        self.header = csp_header(settings.SECURE_CSP)

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if self.header and not (settings.DEBUG and response.status_code in {404, 500}):
            response.headers.setdefault("Content-Security-Policy", self.header)
        return response
