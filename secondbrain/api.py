from typing import Any

from django.http import Http404, HttpRequest, HttpResponse
from ninja import NinjaAPI
from ninja.errors import AuthenticationError, HttpError, ValidationError
from ninja.security import django_auth

from accounts.api import BearerToken, data_router
from accounts.api import router as accounts_router
from chat.api import router as chat_router
from ingestion.api import router as ingestion_router
from secondbrain.errors import DATABASE_UNREACHABLE, AppError, with_retry_after
from secondbrain.middleware import unavailable_response

api = NinjaAPI(
    title="Second Brain",
    version="1",
    auth=[BearerToken(), django_auth],
    urls_namespace="api",
)
api.add_router("/auth/", accounts_router)
api.add_router("/", data_router)
api.add_router("/", ingestion_router)
api.add_router("/", chat_router)


def error_response(
    request: HttpRequest, code: str, message: str, status: int, extra: dict[str, object] | None = None
) -> HttpResponse:
    return api.create_response(request, {"error": {"code": code, "message": message, **(extra or {})}}, status=status)


@api.exception_handler(AppError)
def on_app_error(request: HttpRequest, exc: AppError) -> HttpResponse:
    return with_retry_after(error_response(request, exc.code, exc.message, exc.status, exc.extra), exc)


def on_database_unreachable(request: HttpRequest, exc: Exception) -> HttpResponse:
    return unavailable_response(request)


for _unreachable in DATABASE_UNREACHABLE:
    api.exception_handler(_unreachable)(on_database_unreachable)


@api.exception_handler(ValidationError)
def on_validation_error(request: HttpRequest, exc: ValidationError) -> HttpResponse:
    return error_response(request, "invalid_request", _describe(exc.errors), 422)


@api.exception_handler(AuthenticationError)
def on_authentication_error(request: HttpRequest, exc: AuthenticationError) -> HttpResponse:
    return error_response(request, "unauthorized", "Log in or send a valid API token.", 401)


@api.exception_handler(Http404)
def on_not_found(request: HttpRequest, exc: Http404) -> HttpResponse:
    return error_response(request, "not_found", "Not found.", 404)


@api.exception_handler(HttpError)
def on_http_error(request: HttpRequest, exc: HttpError) -> HttpResponse:
    code = "malformed_request" if exc.status_code == 400 else "http_error"
    return error_response(request, code, str(exc), exc.status_code)


def _describe(errors: list[dict[str, Any]]) -> str:
    parts = []
    for error in errors:
        location = ".".join(str(part) for part in error.get("loc", ()) if part not in {"body", "payload"})
        parts.append(f"{location}: {error.get('msg', 'invalid')}" if location else str(error.get("msg")))
    return "; ".join(parts) or "The request is invalid."
