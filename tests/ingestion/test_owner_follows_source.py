"""`Chunk.owner` and `Job.owner` always equal their source's owner: the database keeps them so
(migrations 0012 and 0013, issue 21)."""

import pytest
from django.conf import settings
from django.http import Http404

from accounts.models import User
from chat import selectors as chat_selectors
from ingestion import selectors
from ingestion.models import Chunk, Job, Source
from tests.factories import make_source

pytestmark = pytest.mark.django_db

VECTOR = [0.0] * (settings.EMBEDDING_DIMENSIONS - 1) + [1.0]


def _chunk(source: Source, owner: User, ordinal: int) -> Chunk:
    return Chunk(
        source=source, owner=owner, ordinal=ordinal, text="t", occurred_at=source.occurred_at, embedding=VECTOR
    )


def test_a_passage_written_with_another_owner_gets_its_sources_owner(user: User, other_user: User) -> None:
    source = make_source(user, "Budget", "The budget is forty-two thousand.")
    created = Chunk.objects.create(
        source=source, owner=other_user, ordinal=1, text="t", occurred_at=source.occurred_at, embedding=VECTOR
    )
    Chunk.objects.bulk_create([_chunk(source, other_user, 2), _chunk(source, other_user, 3)])
    Chunk.objects.filter(pk=source.chunks.get(ordinal=0).pk).update(owner=other_user)
    created.refresh_from_db()
    assert created.owner_id == user.pk
    assert set(Chunk.objects.filter(source=source).values_list("owner_id", flat=True)) == {user.pk}


def test_a_passage_moved_to_another_source_takes_that_sources_owner(user: User, other_user: User) -> None:
    mine = make_source(user, "Budget", "The budget is forty-two thousand.")
    theirs = make_source(other_user, "Garden", "Tomatoes go in on 12 May.")
    chunk = mine.chunks.get()
    Chunk.objects.filter(pk=chunk.pk).update(source=theirs, ordinal=1)
    chunk.refresh_from_db()
    assert chunk.owner_id == other_user.pk


def test_reassigning_a_source_moves_its_passages_to_the_new_owner(user: User, other_user: User) -> None:
    """What the admin's change form does: the former owner no longer finds the passages, the new one does."""
    source = make_source(user, "Budget", "The budget is forty-two thousand.")
    make_source(user, "Garden", "Tomatoes go in on 12 May.")
    chunk = source.chunks.get()
    source.owner = other_user
    source.save()
    assert list(Chunk.objects.filter(source=source).values_list("owner_id", flat=True)) == [other_user.pk]
    with pytest.raises(Http404):
        selectors.chunk_get(owner=user, chunk_id=chunk.pk)
    assert selectors.chunk_get(owner=other_user, chunk_id=chunk.pk) == chunk
    assert [hit.chunk_id for hit in chat_selectors.recent(owner_id=other_user.pk, k=10)] == [chunk.pk]
    assert chunk.pk not in [hit.chunk_id for hit in chat_selectors.recent(owner_id=user.pk, k=10)]
    assert Chunk.objects.filter(owner=user).count() == 1  # the other source's passage stays with its owner


def test_a_job_written_with_another_owner_gets_its_sources_owner(user: User, other_user: User) -> None:
    source = make_source(user, "Budget", "The budget is forty-two thousand.")
    job = Job.objects.create(owner=other_user, source=source)
    job.refresh_from_db()
    assert job.owner_id == user.pk
    Job.objects.filter(pk=job.pk).update(owner=other_user)
    job.refresh_from_db()
    assert job.owner_id == user.pk


def test_reassigning_a_source_moves_its_jobs_to_the_new_owner(user: User, other_user: User) -> None:
    """The former owner no longer lists, reads or cancels them (nor follows their progress)."""
    source = make_source(user, "Budget", "The budget is forty-two thousand.")
    running = Job.objects.create(owner=user, source=source, status=Job.Status.RUNNING)
    source.owner = other_user
    source.save(update_fields=["owner"])
    assert set(Job.objects.filter(source=source).values_list("owner_id", flat=True)) == {other_user.pk}
    assert not selectors.jobs_of(owner=user).exists()
    with pytest.raises(Http404):
        selectors.job_get(owner=user, job_id=running.pk)
    assert selectors.job_get(owner=other_user, job_id=running.pk) == running
