from django.db import InterfaceError, OperationalError
from django.http import HttpResponse


class AppError(Exception):
    """A failure the user can act on: a stable machine code, a sentence for a person, an HTTP status.

    Services raise it; the API turns it into `{"error": {"code", "message"}}` and pages show the
    message. The code is part of the API contract.
    """

    def __init__(
        self,
        code: str,
        message: str,
        *,
        status: int = 400,
        extra: dict[str, object] | None = None,
        retry_after: int | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status
        # Facts a client can act on, sent beside code and message (the id of the duplicate, say).
        self.extra = extra or {}
        # Seconds after which the same request may succeed: sent as the Retry-After header.
        self.retry_after = retry_after


def with_retry_after(response: HttpResponse, error: AppError) -> HttpResponse:
    """`response` with the Retry-After header `error` asks for, if any."""
    if error.retry_after is not None:
        response["Retry-After"] = str(error.retry_after)
    return response


# What psycopg raises, as Django wraps it, when the database cannot be reached: the server is down
# or restarting, a connection broke, or no pooled connection came free within DB_POOL_TIMEOUT.
DATABASE_UNREACHABLE = (OperationalError, InterfaceError)
RETRY_AFTER_SECONDS = 5


def as_app_error(exc: Exception) -> AppError:
    """What a stream tells its reader when `exc` (an AppError, or DATABASE_UNREACHABLE) ends it."""
    return exc if isinstance(exc, AppError) else database_unavailable()


def database_unavailable() -> AppError:
    return AppError(
        "database_unavailable",
        "The database can't be reached right now. Nothing was lost; try again in a moment.",
        status=503,
        retry_after=RETRY_AFTER_SECONDS,
    )
