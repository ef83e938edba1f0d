"""Row-level security (secondbrain/rls.py, chat migration 0004): the database itself keeps one
person's rows from another's, whatever a query forgets.

Each test that goes through the app first breaks an owner filter on purpose — the bug RLS is there
for — and shows that the person still gets only their own rows, and that the broken code path is
really taken (their own rows come through it).
"""

import re
from collections.abc import Callable
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.db import DatabaseError, connection, transaction
from django.db.models import Model, QuerySet
from django.test import Client

from accounts.models import AuditEntry, User
from accounts.services import audit_record
from chat import selectors as chat_selectors
from chat.models import Citation, Conversation, Message
from ingestion import pipeline, services
from ingestion import selectors as ingestion_selectors
from ingestion.models import Chunk, Job, Source
from secondbrain import rls
from secondbrain.asgi import application
from tests.factories import ApiClient, make_answer, make_source, make_user
from tests.test_authorization import session_headers

# Each kind of row a person owns, and the path from it to its owner.
OWNED: dict[type[Model], str] = {
    Source: "owner",
    Chunk: "owner",
    Job: "owner",
    Conversation: "owner",
    Message: "conversation__owner",
    Citation: "message__conversation__owner",
    AuditEntry: "user",
}


def build(alice_title: str = "Alice's diary", bob_title: str = "Bob's garden plan") -> tuple[User, User]:
    """Alice and Bob, each with a note (its passage and job) and a conversation citing it."""
    alice, bob = make_user("alice"), make_user("bob")
    make_answer(alice, [make_source(alice, alice_title, "The surprise party is on the ninth.")])
    make_answer(bob, [make_source(bob, bob_title, "Kohlrabi by the greenhouse.")])
    for person in (alice, bob):
        audit_record(user=person, action=AuditEntry.Action.SOURCE_ADD, via=None, name="note")
    return alice, bob


def ids_of(model: type[Model], owner: User) -> set[int]:
    return set(model._default_manager.filter(**{OWNED[model]: owner}).values_list("pk", flat=True))


def all_ids(model: type[Model]) -> set[int]:
    return set(model._default_manager.values_list("pk", flat=True))


@pytest.mark.django_db
def test_a_query_without_an_owner_filter_sees_only_its_owners_rows() -> None:
    alice, bob = build()
    for model in OWNED:
        alices, bobs = ids_of(model, alice), ids_of(model, bob)
        assert alices and bobs, model
        with rls.owner_scope(alice.pk):
            assert all_ids(model) == alices, model
        with rls.owner_scope(None):
            assert not all_ids(model), model
        with rls.privileged():
            assert all_ids(model) == alices | bobs, model


@pytest.mark.django_db
def test_a_persons_work_runs_as_a_role_without_bypassrls() -> None:
    login_role = _role()
    with rls.owner_scope(make_user().pk):
        role, bypass, superuser = _role()
    assert role == rls.APP_ROLE
    assert not bypass and not superuser
    assert _role() == login_role  # and the connection is given back as it was


def _role() -> tuple[str, bool, bool]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT rolname, rolbypassrls, rolsuper FROM pg_roles WHERE rolname = current_user")
        return cursor.fetchone()


@pytest.mark.django_db
def test_it_refuses_to_write_someone_elses_rows() -> None:
    alice, bob = build()
    bobs_source = Source.objects.get(owner=bob)
    bobs_conversation = Conversation.objects.get(owner=bob)
    with rls.owner_scope(alice.pk):
        assert Source.objects.filter(pk=bobs_source.pk).update(title="mine now") == 0
        assert Chunk.objects.filter(source=bobs_source).delete()[0] == 0
        for write in (
            lambda: Source.objects.filter(pk=Source.objects.get(owner=alice).pk).update(owner=bob),
            lambda: Chunk.objects.create(source=bobs_source, owner=alice, ordinal=9, text="x", embedding=[1.0] * 384),
            lambda: Message.objects.create(conversation=bobs_conversation, role=Message.Role.USER, content="x"),
        ):
            with pytest.raises(DatabaseError), transaction.atomic():
                write()
    bobs_source.refresh_from_db()
    assert bobs_source.title == "Bob's garden plan"
    assert Source.objects.filter(owner=alice).count() == 1
    assert Message.objects.filter(conversation=bobs_conversation).count() == 2


def forgetful(monkeypatch: pytest.MonkeyPatch, module: Any, name: str, model: type[Model]) -> None:
    """Break `module.name`: it returns every row of `model`, its owner filter forgotten."""

    def every_row(**_: Any) -> QuerySet[Any]:
        return model._default_manager.all()

    monkeypatch.setattr(module, name, every_row)


@pytest.mark.django_db
def test_a_page_that_forgets_its_owner_filter_shows_nothing_of_anyone_else(monkeypatch: pytest.MonkeyPatch) -> None:
    alice, bob = build()
    forgetful(monkeypatch, ingestion_selectors, "sources_of", Source)
    client = Client()
    client.force_login(bob)
    page = client.get("/").content.decode()
    assert "Bob&#x27;s garden plan" in page
    assert "Alice" not in page


@pytest.mark.django_db
def test_an_api_call_that_forgets_its_owner_filter_gives_nothing_of_anyone_else(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    alice, bob = build()
    forgetful(monkeypatch, ingestion_selectors, "sources_of", Source)
    titles = [source["title"] for source in ApiClient.for_user(bob).get("/sources").json()]
    assert titles == ["Bob's garden plan"]


@pytest.fixture
def committed(transactional_db: None) -> tuple[User, User]:
    """Alice and Bob committed, for the consumer's threads to read."""
    return build()


@pytest.mark.asyncio
async def test_a_chat_that_forgets_its_owner_filter_cannot_enter_someone_elses_conversation(
    committed: tuple[User, User], monkeypatch: pytest.MonkeyPatch
) -> None:
    alice, bob = committed
    forgetful(monkeypatch, chat_selectors, "conversations_of", Conversation)

    def broken_for_the_login_role() -> int:
        """Outside a person's scope the broken selector hands Bob Alice's conversation."""
        return chat_selectors.conversations_of(owner=bob).get(owner=alice).pk

    alices = await database_sync_to_async(broken_for_the_login_role)()
    socket = WebsocketCommunicator(application, "/ws/chat/", headers=await session_headers(bob))
    assert (await socket.connect())[0]
    try:
        for message in (
            {"question": "When is the party?", "conversation_id": str(alices)},
            {"action": "regenerate", "conversation_id": str(alices)},
        ):
            await socket.send_json_to(message)
            assert 'data-code="not_found"' in await socket.receive_from(timeout=20)
    finally:
        await socket.disconnect()
    assert await database_sync_to_async(Message.objects.filter(conversation_id=alices).count)() == 2


@pytest.mark.django_db
def test_a_job_sees_only_its_owners_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    alice, bob = build()
    seen: list[set[int]] = []
    extract: Callable[..., Any] = pipeline._extract

    def extract_and_look(job: Job) -> Any:
        seen.append(set(Source.objects.values_list("owner_id", flat=True)))
        return extract(job)

    monkeypatch.setattr(pipeline, "_extract", extract_and_look)
    job = services.note_create(owner=alice, text="Dentist on Friday at nine.")
    pipeline.job_process(job_id=job.pk)
    job.refresh_from_db()
    assert job.status == Job.Status.DONE, job.error_message
    assert seen == [{alice.pk}]


# Each of 20 people's 1,000 passages; one in 200 holds "budget" and "roofer".
_MANY_PASSAGES = """
INSERT INTO ingestion_chunk (source_id, owner_id, ordinal, text, anchor, occurred_at, embedding)
SELECT c.source_id, c.owner_id, n,
       'note ' || n || ' about the ' || (ARRAY['garden', 'piano', 'lisbon', 'dentist', 'printer'])[1 + n % 5]
       || CASE WHEN n = 20 AND c.source_id % 5 = 0 THEN ' budget for the roofer' ELSE '' END,
       '{}', c.occurred_at, c.embedding
FROM ingestion_chunk c CROSS JOIN generate_series(1, 40) AS n
"""


def _many_passages() -> list[User]:
    """20 people with 1,000 passages each, in 25 sources of 41 (a person's passages all in one source
    made the planner read all of them once, at times, to find twenty passages' neighbours)."""
    owners = [make_user() for _ in range(20)]
    for owner in owners:
        for number in range(25):
            make_source(owner, f"Notes {number}", f"A first note, number {number}.")
    with connection.cursor() as cursor:
        cursor.execute(_MANY_PASSAGES)
        cursor.execute("ANALYZE ingestion_chunk")
    return owners


def _searched_by_its_owner(query: str) -> str:
    """The plan of the hybrid search's statement for `query`, by its owner under the policies, over 20
    people's 1,000 passages each (seq scans off: at this size the planner would read the table whole)."""
    owners = _many_passages()
    statements: list[tuple[str, Any]] = []

    def keep(execute: Callable[..., Any], sql: str, params: Any, many: bool, context: dict[str, Any]) -> Any:
        statements.append((sql, params))
        return execute(sql, params, many, context)

    with rls.owner_scope(owners[0].pk):
        with connection.execute_wrapper(keep):
            hits = chat_selectors.search(owner_id=owners[0].pk, query=query, k=5)
        assert hits
        sql, params = next((sql, params) for sql, params in statements if "postings" in sql)
        return _plan(sql, params)


def _plan(sql: str, params: Any) -> str:
    """The plan of `sql` where neither reading the table whole nor reading all of the owner's passages
    by the owner's own index is a choice (seq scans off; that index dropped for the test's transaction):
    what is asked is whether the policy lets an index answer the condition, and at 1,000 passages an
    owner's index may cost about as much as the terms index, which made the planner's pick flip between
    runs."""
    with rls.privileged(), connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexname FROM pg_indexes WHERE tablename = 'ingestion_chunk' AND indexdef LIKE '%(owner_id)'"
        )
        for (index,) in cursor.fetchall():
            cursor.execute(f'DROP INDEX "{index}"')
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute(f"EXPLAIN {sql}", params)
        return "\n".join(row[0] for row in cursor.fetchall())


@pytest.mark.django_db
def test_a_search_under_row_level_security_still_reads_the_terms_index() -> None:
    """The policy must not cost the passage search its GIN index: PostgreSQL lets an index answer a
    condition under a policy only when the condition is leakproof (chat migration 0004, the search's
    `terms`). Without it every search reads all of its owner's passages."""
    plan = _searched_by_its_owner("the roofer's budget")
    assert "Index Scan on chunk_owner_terms_gin" in plan, plan


@pytest.mark.django_db
def test_a_search_under_row_level_security_looks_up_each_passages_neighbours_by_their_place() -> None:
    """The neighbours that share a found passage's score are read by (source, ordinal), and the passage
    itself by its id — not among all of the owner's passages, nor all of its source's: under a policy
    neither a coalesce() nor `ordinal - 1` may choose an index's rows (chat.selectors, `spread`)."""
    plan = _searched_by_its_owner("the roofer's budget")
    passage = re.search(
        r"Index Scan using ingestion_chunk_pkey on ingestion_chunk h\s.*\n\s+Index Cond: \(id = f\.id\)", plan
    )
    neighbours = re.search(
        # "Bitmap Index Scan on …" or "Index Scan using …": either reads the neighbours by (source, ordinal).
        r"(?:on|using) chunk_source_ordinal_unique\s.*\n\s+Index Cond: \(\(source_id = h\.source_id\) AND \(ordinal >= ",
        plan,
    )
    assert passage and neighbours, plan


@pytest.mark.django_db
def test_finding_who_speaks_under_row_level_security_reads_the_terms_index() -> None:
    """Which names of a question label lines in the owner's passages (`chat.selectors._speakers`) is
    looked up in the same index, under the policy too; and only in the owner's passages."""
    owners = _many_passages()
    make_source(owners[0], "Call", "Caroline: the roofer comes on Friday.\nMelanie: and the budget?")
    make_source(owners[1], "Call", "Gina: the budget is spent.")
    with rls.owner_scope(owners[0].pk):
        visible = chat_selectors._visible(owner_id=owners[0].pk, include_private=False)
        assert chat_selectors._speakers(visible=visible, names=["Caroline", "Gina", "Roofer"]) == ["Caroline"]
        statement = chat_selectors._SPEAKERS_SQL.format(visible=" AND ".join(visible[0]))
        plan = _plan(statement, visible[1] | {"names": ["Caroline"]})
    assert "Index Scan on chunk_owner_terms_gin" in plan, plan
