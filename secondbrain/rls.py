"""Row-level security: whose rows the database lets a unit of work see.

Every query the app filters by owner; PostgreSQL checks it again. Sources, passages, jobs,
conversations, messages and citations carry policies (migrations `chat.0004`, and `accounts.0003` for the audit log)
that let the role `secondbrain_app`, which has no BYPASSRLS and owns no table, see and write only
the rows of the owner named by the session setting `secondbrain.owner` — none when it is empty. A
query that forgets its owner filter returns nothing of anyone else.

A unit of work says whose it is: a request (`RowLevelSecurityMiddleware`, and the API's token
check once it knows the person), a websocket answer (`chat.consumers`), a job (`ingestion.pipeline`).
Outside one (migrations, management commands, the stuck-job sweeper, the admin's pages for staff)
the connection keeps the role it logged in as, the tables' owner, which the policies do not bind.

The scope lives in a context variable, so it follows the work into the threads asgiref and
Channels hand the ORM to; every statement Django sends first brings its connection's role and
setting in line with it (`_align`). That costs a round trip only when the connection's scope must
change, or inside a transaction: a setting changed there is undone by a rollback, so it is not
trusted to have lasted.
"""

import contextlib
import weakref
from collections.abc import Callable, Iterator
from contextvars import ContextVar, Token
from typing import Any, Final

from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.backends.signals import connection_created
from django.dispatch import receiver
from django.http import HttpRequest, HttpResponse
from psycopg import pq

APP_ROLE: Final = "secondbrain_app"
OWNER_SETTING: Final = "secondbrain.owner"


class _Privileged:
    """The scope of work done for no one in particular: the login role, which the policies do not bind."""

    def __repr__(self) -> str:
        return "PRIVILEGED"


PRIVILEGED: Final = _Privileged()
# An owner's id; None for a request of no one (anonymous: sees no row); PRIVILEGED for the rest.
Scope = int | None | _Privileged
_scope: ContextVar[Scope] = ContextVar("rls_scope", default=PRIVILEGED)
# What each open connection was last told, and whether it was told outside a transaction (so it lasts).
_applied: "weakref.WeakKeyDictionary[Any, tuple[Scope, bool]]" = weakref.WeakKeyDictionary()


def current() -> Scope:
    return _scope.get()


def enter(scope: Scope) -> Token[Scope]:
    """Make `scope` the current unit of work's, until `leave(token)` (or the end of its context)."""
    return _scope.set(scope)


def leave(token: Token[Scope]) -> None:
    try:
        _scope.reset(token)
    except ValueError:
        # Left in another context than it was entered in: an async generator closed by the event
        # loop's finalizer, in a task of its own. That context ends with it.
        pass


@contextlib.contextmanager
def owner_scope(owner_id: int | None) -> Iterator[None]:
    """The database sees only `owner_id`'s rows in this block (no one's when None)."""
    token = enter(owner_id)
    try:
        yield
    finally:
        leave(token)


@contextlib.contextmanager
def privileged() -> Iterator[None]:
    """Work for no one in particular (the admin, the sweeper): every owner's rows, by the login role."""
    token = enter(PRIVILEGED)
    try:
        yield
    finally:
        leave(token)


def _settings_for(scope: Scope) -> tuple[str, str]:
    if isinstance(scope, _Privileged):
        return "none", ""  # `SET role = none` is RESET ROLE: back to the login role
    return APP_ROLE, "" if scope is None else str(scope)


def _align(execute: Callable[..., Any], sql: str, params: Any, many: bool, context: dict[str, Any]) -> Any:
    """Django's execute wrapper: set the connection's role and owner to the scope's before `sql`."""
    scope = _scope.get()
    raw = context["connection"].connection
    status = raw.info.transaction_status
    # Outside a transaction in autocommit the setting is committed with itself; else a rollback may undo it.
    lasting = raw.autocommit and status == pq.TransactionStatus.IDLE
    # In a failed transaction only a rollback may run, and it needs no scope.
    if status != pq.TransactionStatus.INERROR and _applied.get(raw) != (scope, True):
        role, owner = _settings_for(scope)
        # Wrapped as Django wraps its own: a database gone away is Django's OperationalError (a 503).
        with context["connection"].wrap_database_errors:
            context["cursor"].cursor.execute(
                "SELECT set_config('role', %s, false), set_config(%s, %s, false)", [role, OWNER_SETTING, owner]
            )
        _applied[raw] = (scope, lasting)
    return execute(sql, params, many, context)


@receiver(connection_created)
def _install(sender: Any, connection: BaseDatabaseWrapper, **_: Any) -> None:
    if connection.vendor == "postgresql" and _align not in connection.execute_wrappers:
        connection.execute_wrappers.append(_align)


class RowLevelSecurityMiddleware:
    """A request sees its signed-in person's rows only — an anonymous one none; staff in the admin all.

    After AuthenticationMiddleware and DatabaseUnavailableMiddleware. An API request signed with a
    token is anonymous here; the token check names its person (`accounts.api.BearerToken`).
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        token = enter(self.scope_of(request))
        try:
            return self.get_response(request)
        finally:
            leave(token)

    @staticmethod
    def scope_of(request: HttpRequest) -> Scope:
        user = request.user
        if not user.is_authenticated:
            return None
        if request.path.startswith("/admin/") and user.is_active and user.is_staff:
            return PRIVILEGED
        return user.pk
