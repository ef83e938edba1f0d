"""The authorization matrix: every route of the app, called anonymously and as a second user with the
first user's ids.

The routes are not listed by hand but read from where the app declares them: the URL conf (pages, form
posts, the admin), the API's OpenAPI schema (every operation, every method), the websocket router of
the real ASGI application and the apps it mounts beside Django (the MCP server, each of its tools). Each must have an entry in the tables below saying how to fill its ids and
what it answers to someone else; a route the tables do not know fails `test_every_*_is_in_the_matrix`,
naming it. So a new route cannot be forgotten: adding one means deciding here who may call it.

Alice owns everything (a note, a PDF with its file, a job, a conversation with messages and citations,
an API token), each carrying `MARK` in its title or text; Mallory has a note of her own. Anonymously a
page redirects to the log-in and an API operation answers 401; as Mallory with Alice's ids, 404 —
never 403, never Alice's data — and a page or a list that is Mallory's own shows nothing of Alice's.
After every call Alice's rows and file are as they were.
"""

import io
import itertools
import json
import re
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import urlencode, urlsplit

import anyio
import httpx2
import pytest
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator
from django.contrib.admin.options import ModelAdmin
from django.contrib.contenttypes.models import ContentType
from django.db.models import Model
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse
from django.urls.resolvers import RoutePattern
from mcp import Client as McpClient
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult

from accounts.models import ApiToken, AuditEntry, User
from accounts.services import Via, audit_record, token_create
from chat.models import Citation, Conversation, Message
from ingestion import services as ingestion_services
from ingestion.models import Chunk, Job, Source
from mcp_server.tools import server as mcp_server
from secondbrain.api import api
from secondbrain.asgi import Mounts, application
from tests.factories import make_answer, make_source, make_user

# In every title, text, question and name of Alice's: no answer to anyone else may contain it.
MARK = "Zanzibar7Quokka"
ALICE = "alicezq7"
SECRETS = (MARK, ALICE)
GOOD_ORIGIN = (b"origin", b"http://testserver")
FOREIGN_ORIGIN = (b"origin", b"http://evil.example")


@dataclass
class World:
    alice: User
    mallory: User
    note: Source
    pdf: Source
    job: Job  # queued: cancelling it would change it
    conversation: Conversation
    answer: Message
    token: ApiToken
    alice_token: str
    mallory_token: str


def build_world() -> World:
    alice, mallory = make_user(ALICE), make_user("mallory")
    note = make_source(alice, f"{MARK} plan", f"The {MARK} budget is forty-two thousand.")
    pdf = make_source(
        alice, f"{MARK} contract", f"Signed by {MARK}.", file=(f"{MARK}.pdf", f"%PDF-1.4 {MARK}".encode())
    )
    job = Job.objects.create(owner=alice, source=pdf, status=Job.Status.QUEUED, stage=Job.Stage.QUEUED)
    answer = make_answer(alice, [note, pdf], question=f"What is the {MARK} budget?")
    alice_token = token_create(user=alice, name=f"{MARK} laptop")
    audit_record(
        user=alice,
        action=AuditEntry.Action.TOOL_CALL,
        via=Via(AuditEntry.Channel.MCP, ApiToken.objects.get(user=alice)),
        name="search_notes",
        detail={"query": f"the {MARK} budget"},
    )
    make_source(mallory, "Mallory's list", "Buy bread and milk.")
    return World(
        alice=alice,
        mallory=mallory,
        note=note,
        pdf=pdf,
        job=job,
        conversation=answer.conversation,
        answer=answer,
        token=ApiToken.objects.get(user=alice),
        alice_token=alice_token,
        mallory_token=token_create(user=mallory, name="phone"),
    )


@pytest.fixture
def world(db: None) -> World:
    return build_world()


def snapshot(world: World) -> dict[str, Any]:
    """Everything of Alice's, as the database and the disk hold it."""
    alice = world.alice
    return {
        "user": list(User.objects.filter(pk=alice.pk).values("username", "password", "is_active", "time_zone")),
        "sources": list(
            Source.objects.filter(owner=alice).order_by("pk").values("pk", "title", "text", "status", "private")
        ),
        "chunks": list(Chunk.objects.filter(owner=alice).order_by("pk").values("pk", "source_id", "text")),
        "jobs": list(Job.objects.filter(owner=alice).order_by("pk").values("pk", "status", "stage", "attempts")),
        "conversations": list(Conversation.objects.filter(owner=alice).order_by("pk").values("pk", "title")),
        "messages": list(
            Message.objects.filter(conversation__owner=alice).order_by("pk").values("pk", "content", "status")
        ),
        "citations": list(
            Citation.objects.filter(message__conversation__owner=alice)
            .order_by("pk")
            .values("pk", "chunk_id", "source_id", "excerpt")
        ),
        "tokens": list(ApiToken.objects.filter(user=alice).order_by("pk").values("pk", "name", "key_hash")),
        "audit": list(AuditEntry.objects.filter(user=alice).order_by("pk").values("pk", "action", "name", "detail")),
        "file": world.pdf.file.storage.exists(str(world.pdf.file.name)),
    }


def body_of(response: Any) -> str:
    """The response's body as text; a zip archive (the export) with each member's name and content."""
    raw = b"".join(response.streaming_content) if response.streaming else response.content
    if raw.startswith(b"PK\x03\x04"):
        with zipfile.ZipFile(io.BytesIO(raw)) as archive:
            raw = b"\n".join(name.encode() + b"\n" + archive.read(name) for name in archive.namelist())
    return raw.decode(errors="replace")


def assert_nothing_of_alice(response: Any, route: str) -> None:
    body = body_of(response)
    for secret in SECRETS:
        assert secret not in body, f"{route} answered with Alice's {secret!r}: {body[:500]}"
    for header, value in response.items():
        assert MARK not in value, f"{route} answered with Alice's {MARK!r} in its {header} header"


Ids = Callable[[World], dict[str, int]]


def no_ids(world: World) -> dict[str, int]:
    return {}


# ---------------------------------------------------------------------------------------------------
# Pages and form posts (the URL conf outside /api/ and /admin/)


@dataclass(frozen=True)
class Page:
    """How a page or form post is called, and what Mallory gets: `not_found` for a route naming one
    of Alice's objects, `own` for a route that is about Mallory herself (she sees only her things)."""

    methods: tuple[Literal["GET", "POST"], ...]
    mallory: Literal["not_found", "own"]
    ids: Ids = no_ids
    data: dict[str, str] = field(default_factory=dict)


PAGES: dict[str, Page] = {
    "": Page(("GET",), "own"),
    "notes/": Page(("POST",), "own", data={"title": "Mallory's", "text": "Mallory's own note."}),
    "uploads/": Page(("POST",), "own"),
    "web-pages/": Page(("POST",), "own", data={"url": "https://example.org/mallorys-page"}),
    "jobs/<int:job_id>/cancel/": Page(("POST",), "not_found", lambda w: {"job_id": w.job.pk}),
    "sources/<int:source_id>/": Page(("GET",), "not_found", lambda w: {"source_id": w.note.pk}),
    "sources/<int:source_id>/file": Page(("GET",), "not_found", lambda w: {"source_id": w.pdf.pk}),
    "sources/<int:source_id>/reprocess/": Page(("POST",), "not_found", lambda w: {"source_id": w.note.pk}),
    "sources/<int:source_id>/delete/": Page(("POST",), "not_found", lambda w: {"source_id": w.pdf.pk}),
    "sources/<int:source_id>/private/": Page(
        ("POST",), "not_found", lambda w: {"source_id": w.note.pk}, data={"private": "true"}
    ),
    # Words of Alice's note, not the mark: the page shows the query it was asked.
    "search/": Page(("GET",), "own", data={"q": "budget forty-two thousand"}),
    "chat/": Page(("GET",), "own"),
    "chat/<int:conversation_id>/": Page(("GET",), "not_found", lambda w: {"conversation_id": w.conversation.pk}),
    "chat/<int:conversation_id>/delete/": Page(
        ("POST",), "not_found", lambda w: {"conversation_id": w.conversation.pk}
    ),
    "chat/messages/<int:message_id>/remember/": Page(("POST",), "not_found", lambda w: {"message_id": w.answer.pk}),
    "settings/": Page(("GET", "POST"), "own", data={"time_zone": "Europe/Berlin"}),
    "settings/password/": Page(
        ("POST",), "own", data={"old_password": "not-hers", "new_password": "b-long-enough-Passw0rd"}
    ),
    "settings/tokens/<int:token_id>/revoke/": Page(("POST",), "not_found", lambda w: {"token_id": w.token.pk}),
    "settings/export/": Page(("GET",), "own"),
    "settings/delete-account/": Page(("POST",), "own", data={"password": "not-hers"}),
}

# Reachable without an account, each with what an anonymous GET answers. Static files are served by
# WhiteNoise before the URL conf, so they are checked on their own below.
PUBLIC_PAGES: dict[str, int] = {
    "accounts/login/": 200,
    "accounts/signup/": 200,
    "accounts/logout/": 405,  # POST only; it ends the caller's own session and shows nothing
    "api/openapi.json": 200,  # the API's description: operations, no data
    "api/docs": 200,
    "api/": 404,  # django-ninja's root: it only names the API's prefix and answers every request 404
    # Off by default; on, only with METRICS_TOKEN or from loopback, and never anyone's data (tests/test_metrics.py).
    "metrics": 404,
    "favicon.ico": 301,  # to the static icon, for pages without our <link rel="icon"> (the admin, the API's docs)
}

# The admin: everything under it refuses whoever is not staff, except its own log-in and log-out.
ADMIN_PUBLIC = {"login", "logout"}


@dataclass(frozen=True)
class Route:
    template: str  # the path as the URL conf spells it, without the leading slash
    name: str | None  # namespaced: "admin:login"
    pattern: URLPattern


def url_routes() -> Iterator[Route]:
    """Every URL pattern of the URL conf, included ones (the admin's, the API's) too."""

    def walk(patterns: list[Any], prefix: str, namespace: str | None) -> Iterator[Route]:
        for pattern in patterns:
            if isinstance(pattern, URLResolver):
                inner = ":".join(part for part in (namespace, pattern.namespace) if part) or None
                yield from walk(pattern.url_patterns, prefix + str(pattern.pattern), inner)
            else:
                name = f"{namespace}:{pattern.name}" if namespace and pattern.name else pattern.name
                yield Route(prefix + str(pattern.pattern), name, pattern)

    return walk(get_resolver().url_patterns, "", None)


def page_url(template: str, ids: dict[str, int]) -> str:
    return "/" + re.sub(r"<(?:\w+:)?(\w+)>", lambda match: str(ids[match.group(1)]), template)


def call_page(client: Client, method: str, url: str, data: dict[str, str], *, htmx: bool = False) -> Any:
    """A page as a browser asks for it: a whole page, or with `htmx` the fragment htmx swaps in."""
    headers = {"HX-Request": "true"} if htmx else {}
    return client.get(url, data, headers=headers) if method == "GET" else client.post(url, data, headers=headers)


def test_every_page_is_in_the_matrix() -> None:
    templates = {route.template for route in url_routes() if not route.template.startswith(("admin/", "api/"))}
    unknown = templates - PAGES.keys() - PUBLIC_PAGES.keys()
    assert not unknown, f"routes the authorization matrix does not know (add them to PAGES or PUBLIC_PAGES): {unknown}"
    gone = (PAGES.keys() | {t for t in PUBLIC_PAGES if not t.startswith("api/")}) - templates
    assert not gone, f"the matrix lists routes the URL conf no longer has: {gone}"


@pytest.mark.parametrize("template", sorted(PAGES))
def test_a_page_sends_the_anonymous_to_log_in(world: World, template: str) -> None:
    page, client = PAGES[template], Client()
    url = page_url(template, page.ids(world))
    before = snapshot(world)
    for method, htmx in itertools.product(("GET", "POST"), (False, True)):
        response = call_page(client, method, url, page.data, htmx=htmx)
        route = f"{method} {url}{' (htmx)' if htmx else ''}"
        assert response.status_code == 302, f"{route} answered {response.status_code}, not a redirect"
        assert urlsplit(response["Location"]).path == reverse("login"), f"{route} → {response['Location']}"
        assert_nothing_of_alice(response, route)
    assert snapshot(world) == before


@pytest.mark.parametrize("template", sorted(PAGES))
def test_a_page_shows_another_user_nothing_of_alices(world: World, template: str) -> None:
    page, client = PAGES[template], Client()
    client.force_login(world.mallory)
    url = page_url(template, page.ids(world))
    before = snapshot(world)
    for method, htmx in itertools.product(("GET", "POST"), (False, True)):
        response = call_page(client, method, url, page.data, htmx=htmx)
        route = f"{method} {url} as Mallory{' (htmx)' if htmx else ''}"
        if page.mallory == "own":
            assert response.status_code < 500, f"{route} answered {response.status_code}"
        elif method in page.methods:
            assert response.status_code == 404, f"{route} answered {response.status_code}, not 404"
        else:  # a form post asked for with GET, say: refused before the id is looked at, or not found
            assert response.status_code in (404, 405), f"{route} answered {response.status_code}"
        assert_nothing_of_alice(response, route)
        assert snapshot(world) == before, f"{route} changed Alice's data"


@pytest.mark.parametrize("template", sorted(t for t, page in PAGES.items() if page.mallory == "not_found"))
def test_the_owner_reaches_each_page_of_hers(world: World, template: str) -> None:
    """The control: the ids the matrix fills in are Alice's real ones, so Mallory's 404 means refused."""
    page, client = PAGES[template], Client()
    client.force_login(world.alice)
    response = call_page(client, page.methods[0], page_url(template, page.ids(world)), page.data)
    assert response.status_code in (200, 302), response.status_code


@pytest.mark.parametrize("template", sorted(PUBLIC_PAGES))
def test_a_public_page_answers_the_anonymous(db: None, settings: Any, template: str) -> None:
    settings.SIGNUP_OPEN = True
    response = Client().get(page_url(template, {}))
    assert response.status_code == PUBLIC_PAGES[template], response.status_code


def test_static_files_are_public(db: None) -> None:
    response = Client().get("/static/css/app.css")
    assert response.status_code == 200
    b"".join(response.streaming_content)  # type: ignore[attr-defined]


# ---------------------------------------------------------------------------------------------------
# The admin


def admin_ids(world: World, route: Route) -> dict[str, Any]:
    """Alice's object for a model admin's `object_id`; any valid value for the other parameters."""
    model_admin = getattr(route.pattern.callback, "model_admin", None)
    model: type[Model] | None = model_admin.model if isinstance(model_admin, ModelAdmin) else None
    alices: dict[type[Model], Model] = {
        Source: world.note,
        Job: world.job,
        Conversation: world.conversation,
        Message: world.answer,
        ApiToken: world.token,
        User: world.alice,
        Chunk: world.note.chunks.get(),
        Citation: world.answer.citations.first() or world.answer,
    }
    params = route.pattern.pattern.regex.groupindex.keys()
    values = {
        "object_id": str(alices[model].pk) if model in alices else "1",
        "id": str(world.alice.pk),
        "app_label": "ingestion",
        "content_type_id": str(ContentType.objects.get_for_model(Source).pk),
        "url": "no-such-page/",
    }
    if "content_type_id" in params:
        values["object_id"] = str(world.note.pk)
    return {name: values[name] for name in params}


def admin_url(world: World, route: Route) -> str:
    if isinstance(route.pattern.pattern, RoutePattern):  # also the unnamed ones: `<path:object_id>/`
        return page_url(route.template, admin_ids(world, route))
    if route.name is None:  # the catch-all, a regular expression without a name
        return "/admin/no-such-page/"
    return reverse(route.name, kwargs=admin_ids(world, route))


def test_the_admin_refuses_whoever_is_not_staff(world: World) -> None:
    routes = [route for route in url_routes() if route.template.startswith("admin/")]
    assert routes and all(route.name is None or route.name.startswith("admin:") for route in routes)
    login = reverse("admin:login")
    anonymous, mallory = Client(), Client()
    mallory.force_login(world.mallory)
    before = snapshot(world)
    checked = 0
    for route in routes:
        if route.name and route.name.removeprefix("admin:") in ADMIN_PUBLIC:
            continue
        url = admin_url(world, route)
        for who, client in (("anonymous", anonymous), ("Mallory", mallory)):
            for method, data in (("GET", {}), ("POST", {"post": "yes", "title": "x"})):
                response = client.generic(method, url, urlencode(data), "application/x-www-form-urlencoded")
                where = f"{method} {url} ({route.template}) as {who}"
                assert response.status_code == 302, f"{where} answered {response.status_code}"
                assert urlsplit(response["Location"]).path == login, f"{where} → {response['Location']}"
                assert_nothing_of_alice(response, where)
                checked += 1
    assert snapshot(world) == before
    assert checked > 40  # every model admin's list, add, change, delete and history


def test_the_admin_log_in_is_public(db: None) -> None:
    assert Client().get(reverse("admin:login")).status_code == 200


# ---------------------------------------------------------------------------------------------------
# The API: every operation of the OpenAPI schema, with every method


@dataclass(frozen=True)
class Operation:
    """How an operation is called, and what Mallory gets (see `Page`). `listed` names the ids of
    Alice's that a list of Mallory's must not hold."""

    mallory: Literal["not_found", "own"]
    ids: Ids = no_ids
    body: dict[str, Any] | None = None
    query: dict[str, Any] = field(default_factory=dict)
    multipart: bool = False
    listed: Callable[[World], set[int]] | None = None


def _ask(world: World) -> dict[str, Any]:
    return {"question": "What is the budget?", "conversation_id": world.conversation.pk}


OPERATIONS: dict[tuple[str, str], Operation] = {
    ("POST", "/api/auth/password"): Operation(
        "own", body={"old_password": "not-hers", "new_password": "b-long-enough-Passw0rd"}
    ),
    ("GET", "/api/auth/tokens"): Operation("own", listed=lambda w: {w.token.pk}),
    ("DELETE", "/api/auth/tokens/{token_id}"): Operation("not_found", lambda w: {"token_id": w.token.pk}),
    ("DELETE", "/api/auth/account"): Operation("own", body={"password": "not-hers"}),
    ("GET", "/api/export"): Operation("own"),
    ("POST", "/api/notes"): Operation("own", body={"title": "Mallory's", "text": "Mallory's own note."}),
    ("POST", "/api/uploads"): Operation("own", multipart=True),
    ("POST", "/api/web-pages"): Operation("own", body={"url": "https://example.org/mallorys-page"}),
    ("POST", "/api/jobs/{job_id}/cancel"): Operation("not_found", lambda w: {"job_id": w.job.pk}),
    ("GET", "/api/jobs"): Operation(
        "own", listed=lambda w: set(Job.objects.filter(owner=w.alice).values_list("pk", flat=True))
    ),
    ("GET", "/api/jobs/{job_id}"): Operation("not_found", lambda w: {"job_id": w.job.pk}),
    ("GET", "/api/sources"): Operation("own", listed=lambda w: {w.note.pk, w.pdf.pk}),
    ("GET", "/api/sources/{source_id}"): Operation("not_found", lambda w: {"source_id": w.note.pk}),
    ("PATCH", "/api/sources/{source_id}"): Operation(
        "not_found", lambda w: {"source_id": w.note.pk}, body={"private": True}
    ),
    ("DELETE", "/api/sources/{source_id}"): Operation("not_found", lambda w: {"source_id": w.pdf.pk}),
    ("POST", "/api/sources/{source_id}/reprocess"): Operation("not_found", lambda w: {"source_id": w.note.pk}),
    ("GET", "/api/chunks/{chunk_id}"): Operation("not_found", lambda w: {"chunk_id": w.note.chunks.get().pk}),
    ("GET", "/api/search"): Operation("own", query={"q": "budget forty-two thousand"}),
    ("POST", "/api/ask"): Operation("not_found", body={}),  # the body names Alice's conversation: `_ask`
    ("POST", "/api/messages/{message_id}/remember"): Operation("not_found", lambda w: {"message_id": w.answer.pk}),
    ("DELETE", "/api/conversations/{conversation_id}"): Operation(
        "not_found", lambda w: {"conversation_id": w.conversation.pk}
    ),
}
BODIES: dict[tuple[str, str], Callable[[World], dict[str, Any]]] = {("POST", "/api/ask"): _ask}

# Operations without authentication: they create an account or trade a password for a token.
PUBLIC_OPERATIONS = {("POST", "/api/auth/register"), ("POST", "/api/auth/token")}
# Routes of the API that are not operations: its description and its root (see PUBLIC_PAGES).
API_DOCUMENTS = {"api/openapi.json", "api/docs", "api/"}


def operations() -> dict[tuple[str, str], dict[str, Any]]:
    schema = api.get_openapi_schema()
    return {
        (method.upper(), path): operation
        for path, methods in schema["paths"].items()
        for method, operation in methods.items()
    }


def test_every_api_operation_is_in_the_matrix() -> None:
    known = OPERATIONS.keys() | PUBLIC_OPERATIONS
    unknown = operations().keys() - known
    assert not unknown, f"API operations the authorization matrix does not know (add them to OPERATIONS): {unknown}"
    assert not known - operations().keys(), (
        f"the matrix lists operations the API no longer has: {known - operations().keys()}"
    )
    unauthenticated = {key for key, operation in operations().items() if not operation.get("security")}
    assert unauthenticated == PUBLIC_OPERATIONS, "only the PUBLIC_OPERATIONS may do without authentication"


def test_every_api_route_is_an_operation_of_the_schema() -> None:
    """An operation left out of the schema (`include_in_schema=False`) would escape the matrix."""
    in_conf = {
        "/" + re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", route.template)
        for route in url_routes()
        if route.template.startswith("api/") and route.template not in API_DOCUMENTS
    }
    assert in_conf == {path for _, path in operations()}


def call_api(client: Client, world: World, key: tuple[str, str], headers: dict[str, str]) -> Any:
    method, path = key
    operation = OPERATIONS[key]
    url = path.format(**operation.ids(world))
    if operation.query:
        url += "?" + urlencode(operation.query)
    if operation.multipart:
        return client.post(url, {"title": "Mallory's"}, headers=headers)
    body = BODIES[key](world) if key in BODIES else operation.body
    data = json.dumps(body) if body is not None else ""
    return client.generic(method, url, data, "application/json", headers=headers)


@pytest.mark.parametrize("key", sorted(OPERATIONS), ids=" ".join)
def test_an_api_operation_answers_the_anonymous_401(world: World, key: tuple[str, str]) -> None:
    before = snapshot(world)
    for headers in ({}, {"Authorization": "Bearer sb_not-a-token"}):
        response = call_api(Client(), world, key, headers)
        assert response.status_code == 401, f"{key} answered {response.status_code} to {headers or 'nobody'}"
        assert response.json()["error"]["code"] == "unauthorized"
        assert_nothing_of_alice(response, " ".join(key))
    assert snapshot(world) == before


@pytest.mark.parametrize("auth", ["token", "session"])
@pytest.mark.parametrize("key", sorted(OPERATIONS), ids=" ".join)
def test_an_api_operation_shows_another_user_nothing_of_alices(world: World, key: tuple[str, str], auth: str) -> None:
    operation, client = OPERATIONS[key], Client()
    headers = {"Authorization": f"Bearer {world.mallory_token}"} if auth == "token" else {}
    if auth == "session":
        client.force_login(world.mallory)
    before = snapshot(world)
    response = call_api(client, world, key, headers)
    route = f"{' '.join(key)} as Mallory ({auth})"
    if operation.mallory == "not_found":
        assert response.status_code == 404, f"{route} answered {response.status_code}, not 404"
        assert response.json()["error"]["code"] == "not_found"
    else:
        assert response.status_code < 500, f"{route} answered {response.status_code}"
    assert_nothing_of_alice(response, route)
    if operation.listed is not None:
        assert response.status_code == 200
        assert not {item["id"] for item in response.json()} & operation.listed(world), route
    assert snapshot(world) == before, f"{route} changed Alice's data"


def test_an_undeclared_method_is_refused_without_data(world: World) -> None:
    """Every API path with the methods it does not declare: refused before anything is read or written."""
    declared: dict[str, set[str]] = {}
    for method, path in operations():
        declared.setdefault(path, set()).add(method)
    mallory = {"Authorization": f"Bearer {world.mallory_token}"}
    before = snapshot(world)
    for path, methods in declared.items():
        ids = next((op.ids(world) for (_, p), op in OPERATIONS.items() if p == path), {})
        for method in {"GET", "POST", "PUT", "PATCH", "DELETE"} - methods:
            for who, headers in (("anonymous", {}), ("Mallory", mallory)):
                response = Client().generic(method, path.format(**ids), "{}", "application/json", headers=headers)
                route = f"{method} {path} as {who}"
                assert response.status_code in (401, 404, 405), f"{route} answered {response.status_code}"
                assert_nothing_of_alice(response, route)
    assert snapshot(world) == before


@pytest.mark.parametrize("key", sorted(k for k, op in OPERATIONS.items() if op.mallory == "not_found"), ids=" ".join)
def test_the_owner_reaches_each_operation_of_hers(transactional_db: None, world: World, key: tuple[str, str]) -> None:
    """The control: Alice's own token on the same call is not refused. (Committed: her question is
    answered in threads of the answer pipeline's own.)"""
    response = call_api(Client(), world, key, {"Authorization": f"Bearer {world.alice_token}"})
    assert response.status_code not in (401, 403, 404), (response.status_code, response.content[:300])
    assert response.status_code < 500, response.content[:300]


def test_the_public_operations_give_nothing_for_wrong_credentials(world: World, settings: Any) -> None:
    def post(path: str, username: str, password: str) -> Any:
        return Client().post(path, {"username": username, "password": password}, content_type="application/json")

    before = snapshot(world)
    wrong = post("/api/auth/token", ALICE, "not-hers")
    assert wrong.status_code == 401 and "token" not in wrong.json()
    settings.SIGNUP_OPEN = True
    taken = post("/api/auth/register", ALICE, "c-long-enough-Passw0rd")
    assert taken.status_code == 409 and taken.json()["error"]["code"] == "username_taken"
    assert_nothing_of_alice(taken, "POST /api/auth/register")
    settings.SIGNUP_OPEN = False
    closed = post("/api/auth/register", "newcomer", "c-long-enough-Passw0rd")
    assert closed.status_code == 403 and closed.json()["error"]["code"] == "signup_closed"
    assert Client().get(reverse("signup")).status_code == 403
    assert not User.objects.filter(username="newcomer").exists()
    assert snapshot(world) == before


# ---------------------------------------------------------------------------------------------------
# Websockets: the routes of the real ASGI application


def websocket_routes() -> list[str]:
    """The path of every websocket route, read from inside the middleware around the router."""
    app: Any = application.application_mapping["websocket"]
    while not isinstance(app, URLRouter):
        app = getattr(app, "inner", None) or app.application

    def walk(router: URLRouter, prefix: str) -> Iterator[str]:
        for route in router.routes:
            if isinstance(route.callback, URLRouter):
                yield from walk(route.callback, prefix + str(route.pattern))
            else:
                yield prefix + str(route.pattern)

    return list(walk(app, ""))


async def _chat_probe(world: World, mallory: WebsocketCommunicator) -> list[str]:
    """Mallory asks in Alice's conversation, asks for its answer again, and asks about text of Alice's
    note: all are not found."""
    received = []
    for message in (
        {"question": "What is the budget?", "conversation_id": str(world.conversation.pk)},
        {"action": "regenerate", "conversation_id": str(world.conversation.pk)},
        {"question": "What is this?", "source_id": str(world.note.pk), "selection": "budget is forty-two"},
    ):
        await mallory.send_json_to(message)
        received.append(await mallory.receive_from(timeout=20))
        assert 'data-code="not_found"' in received[-1], received[-1]
    return received


async def _jobs_probe(world: World, mallory: WebsocketCommunicator) -> list[str]:
    """Alice's job progress, sent through the real channel layer, reaches her socket and not Mallory's;
    what a socket is sent on connecting (its owner's jobs changed lately) is its owner's alone."""
    received = await _drain(mallory)
    alice = WebsocketCommunicator(application, "/ws/jobs/", headers=await session_headers(world.alice))
    assert (await alice.connect())[0]
    try:
        caught_up = await _drain(alice)
        assert any(MARK in message for message in caught_up)  # her PDF's job, just made: the probe can see
        event = await database_sync_to_async(ingestion_services.job_event)(world.job, world.pdf.title)
        await get_channel_layer().group_send(
            ingestion_services.jobs_group(world.alice.pk), {"type": "job.update", "job": event}
        )
        assert MARK in await alice.receive_from(timeout=10)
        assert await mallory.receive_nothing(timeout=1)
    finally:
        await alice.disconnect()
    return received


async def _drain(socket: WebsocketCommunicator) -> list[str]:
    """What the socket was sent until it falls quiet."""
    messages = []
    while not await socket.receive_nothing(timeout=1):
        messages.append(await socket.receive_from())
    return messages


WEBSOCKETS: dict[str, Callable[[World, WebsocketCommunicator], Any]] = {
    "ws/chat/": _chat_probe,
    "ws/jobs/": _jobs_probe,
}


def test_every_websocket_route_is_in_the_matrix() -> None:
    routes = set(websocket_routes())
    assert routes, "no websocket route found inside the ASGI application"
    assert not routes - WEBSOCKETS.keys(), f"websocket routes the matrix does not know: {routes - WEBSOCKETS.keys()}"
    assert not WEBSOCKETS.keys() - routes, f"the matrix lists websocket routes gone: {WEBSOCKETS.keys() - routes}"


async def session_headers(user: User, origin: tuple[bytes, bytes] = GOOD_ORIGIN) -> list[tuple[bytes, bytes]]:
    def login() -> str:
        client = Client()
        client.force_login(user)
        return client.cookies["sessionid"].value

    return [(b"cookie", f"sessionid={await database_sync_to_async(login)()}".encode()), origin]


@pytest.fixture
def shared_world(transactional_db: None) -> World:
    """The world committed, for consumers that read it from threads of their own."""
    return build_world()


@pytest.mark.asyncio
@pytest.mark.parametrize("route", sorted(WEBSOCKETS))
async def test_a_websocket_refuses_the_anonymous_and_a_foreign_origin(shared_world: World, route: str) -> None:
    attempts = {
        "anonymous": [GOOD_ORIGIN],
        "Alice from a foreign origin": await session_headers(shared_world.alice, FOREIGN_ORIGIN),
        "Alice without an origin": (await session_headers(shared_world.alice))[:1],
    }
    for who, headers in attempts.items():
        communicator = WebsocketCommunicator(application, f"/{route}", headers=headers)
        connected, _ = await communicator.connect()
        # Ended either way: a refused socket's application task left pending made the event loop's
        # close wait for ever at the end of the module (a hang seen in two runs, not a failure).
        await communicator.disconnect()
        assert not connected, f"{route} accepted {who}"


@pytest.mark.asyncio
@pytest.mark.parametrize("route", sorted(WEBSOCKETS))
async def test_a_websocket_gives_another_user_nothing_of_alices(shared_world: World, route: str) -> None:
    world = shared_world
    before = await database_sync_to_async(snapshot)(world)
    mallory = WebsocketCommunicator(application, f"/{route}", headers=await session_headers(world.mallory))
    assert (await mallory.connect())[0]
    try:
        received = await WEBSOCKETS[route](world, mallory)
    finally:
        await mallory.disconnect()
    for message in received:
        assert not any(secret in message for secret in SECRETS), message
    assert await database_sync_to_async(snapshot)(world) == before


# ---------------------------------------------------------------------------------------------------
# ASGI apps mounted beside Django (secondbrain/asgi.py): the MCP server's streamable HTTP endpoint


def mounted_paths() -> set[str]:
    """The paths of the apps the real ASGI application mounts beside Django."""
    app: Any = application.application_mapping["http"]
    while not isinstance(app, Mounts):
        app = app.app
    return set(app.mounts)


@dataclass(frozen=True)
class ToolCall:
    """A tool called by Mallory with Alice's ids: `not_found` must be refused as such, `own` answers
    about Mallory alone."""

    mallory: Literal["not_found", "own"]
    arguments: Callable[[World], dict[str, Any]]


MCP_TOOLS: dict[str, ToolCall] = {
    "search_notes": ToolCall("own", lambda w: {"query": "budget forty-two thousand"}),
    "get_source": ToolCall("not_found", lambda w: {"source_id": w.pdf.pk}),
    "recent_activity": ToolCall("own", lambda w: {"since": "2000-01-01T00:00:00Z", "limit": 100}),
    "add_note": ToolCall("own", lambda w: {"title": "Mallory's", "text": "Mallory's own note."}),
    "ask": ToolCall("not_found", lambda w: {"question": "What is the budget?", "conversation_id": w.conversation.pk}),
}
MOUNTS = {"/mcp": MCP_TOOLS}


def test_every_mounted_app_and_tool_is_in_the_matrix() -> None:
    assert mounted_paths() == MOUNTS.keys(), f"apps mounted beside Django: {mounted_paths()}"
    tools = {tool.name for tool in anyio.run(mcp_server.list_tools)}
    assert tools == MCP_TOOLS.keys(), f"MCP tools the authorization matrix does not know (or no longer has): {tools}"


def mcp_http(token: str | None) -> httpx2.AsyncClient:
    """An HTTP client of the real ASGI application, in this process, sending `token` if any."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx2.AsyncClient(
        transport=httpx2.ASGITransport(app=application), base_url="http://testserver", headers=headers
    )


def tool_text(result: CallToolResult) -> str:
    return json.dumps(result.structured_content) + " ".join(getattr(block, "text", "") for block in result.content)


@pytest.mark.asyncio
async def test_the_mcp_endpoint_answers_the_anonymous_401(shared_world: World) -> None:
    before = await database_sync_to_async(snapshot)(shared_world)
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "get_source", "arguments": {}}}
    for token in (None, "sb_not-a-token"):
        async with mcp_http(token) as http:
            for method in ("GET", "POST", "DELETE"):
                response = await http.request(method, "/mcp", json=call, headers={"Accept": "application/json"})
                assert response.status_code == 401, (method, token, response.status_code)
                assert response.json()["error"]["code"] == "unauthorized"
                assert not any(secret in response.text for secret in SECRETS)
    assert await database_sync_to_async(snapshot)(shared_world) == before


@pytest.mark.asyncio
async def test_the_mcp_tools_give_another_user_nothing_of_alices(shared_world: World) -> None:
    world = shared_world
    before = await database_sync_to_async(snapshot)(world)
    async with (
        mcp_http(world.mallory_token) as http,
        McpClient(streamable_http_client("http://testserver/mcp", http_client=http)) as client,
    ):
        listed = await client.list_tools()
        assert {tool.name for tool in listed.tools} == MCP_TOOLS.keys()
        for name, call in MCP_TOOLS.items():
            result = await client.call_tool(name, call.arguments(world))
            text = tool_text(result)
            if call.mallory == "not_found":
                assert result.is_error and "Not found" in text, (name, text)
            else:
                assert not result.is_error, (name, text)
            assert not any(secret in text for secret in SECRETS), f"{name} answered Mallory with Alice's data: {text}"
    assert await database_sync_to_async(snapshot)(world) == before
    calls = await database_sync_to_async(list)(
        AuditEntry.objects.filter(user=world.mallory, action=AuditEntry.Action.TOOL_CALL).values_list("name", flat=True)
    )
    assert sorted(calls) == sorted(MCP_TOOLS)  # in Mallory's own log, none in Alice's (the snapshot)


@pytest.mark.asyncio
async def test_the_owner_reaches_her_own_through_the_mcp_tools(shared_world: World) -> None:
    """The control: Alice's token on the same ids is not refused."""
    world = shared_world
    async with (
        mcp_http(world.alice_token) as http,
        McpClient(streamable_http_client("http://testserver/mcp", http_client=http)) as client,
    ):
        read = await client.call_tool("get_source", {"source_id": world.pdf.pk})
        found = await client.call_tool("search_notes", {"query": "budget forty-two thousand"})
    assert not read.is_error and MARK in tool_text(read)
    assert MARK in tool_text(found)
