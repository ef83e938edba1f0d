"""The search page: the owner's passages for what they type, with the words marked and nothing else's."""

from datetime import UTC, datetime, timedelta

import pytest
from django.test import Client
from django.utils import timezone

from accounts.models import User
from chat.services import QUESTION_MAX_CHARS
from chat.templatetags.chat_tags import highlight
from ingestion.models import Chunk
from ingestion.pipeline import job_process
from ingestion.services import note_create

pytestmark = pytest.mark.django_db


def add_note(owner: User, title: str, text: str, occurred_at: datetime | None = None) -> int:
    """A processed note (chunks and embeddings stored by the real pipeline)."""
    job = note_create(owner=owner, title=title, text=text, occurred_at=occurred_at)
    job_process(job_id=job.pk)
    return job.source_id


@pytest.fixture
def client(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def results(response: object) -> list[tuple[str, str]]:
    """The results as (title, link) pairs, in the order shown."""
    hits = response.context["retrieval"].hits  # type: ignore[attr-defined]
    return [(hit.source_title, f"/sources/{hit.source_id}/#chunk-{hit.chunk_id}") for hit in hits]


def test_it_finds_the_owners_passage_and_links_to_it(user: User, client: Client) -> None:
    plumber = add_note(user, "Diary", "Mon: called the plumber about the leaking tap\nTue: paid the council tax")
    add_note(user, "Recipe", "Soak the beans overnight, then simmer them with garlic for two hours.")

    response = client.get("/search/", {"q": "plumber leaking tap"})

    assert response.status_code == 200
    chunk = Chunk.objects.filter(source_id=plumber).get(text__contains="plumber")
    assert results(response)[0] == ("Diary", f"/sources/{plumber}/#chunk-{chunk.pk}")
    html = response.content.decode()
    assert f'href="/sources/{plumber}/#chunk-{chunk.pk}"' in html
    assert "called the <mark>plumber</mark> about the <mark>leaking</mark> <mark>tap</mark>" in html
    assert 'aria-current="page">Search</a>' in html


def test_it_hides_other_users_sources(user: User, other_user: User, client: Client) -> None:
    add_note(user, "My tap", "The kitchen tap drips a little.")
    theirs = add_note(other_user, "Their tap", "Called the plumber about the leaking tap in the kitchen.")

    response = client.get("/search/", {"q": "plumber leaking tap kitchen"})

    assert response.status_code == 200
    assert [title for title, _ in results(response)] == ["My tap"]
    assert "Their tap" not in response.content.decode()
    assert f"/sources/{theirs}/" not in response.content.decode()


def test_a_passage_holding_markup_is_shown_as_text(user: User, client: Client) -> None:
    add_note(user, "Snippet", 'Paste this in the page: <script>alert("tap")</script> and the tap runs.')

    response = client.get("/search/", {"q": "tap"})

    html = response.content.decode()
    assert "<script>alert" not in html
    assert "&lt;script&gt;alert(&quot;<mark>tap</mark>&quot;)&lt;/script&gt;" in html


def test_it_shows_where_and_when_in_the_users_zone(user: User, client: Client) -> None:
    user.time_zone = "Asia/Tokyo"
    user.save(update_fields=["time_zone"])
    add_note(
        user, "Boiler", "# Heating\n\nThe boiler pressure dropped to 0.5 bar.", datetime(2026, 3, 1, 23, 30, tzinfo=UTC)
    )

    html = client.get("/search/", {"q": "boiler pressure"}).content.decode()

    assert "Note · 2 Mar 2026, 08:30" in html  # 23:30 UTC is the next morning in Tokyo
    assert "· Heating" in html


def test_the_kind_filter_keeps_only_that_kind(user: User, client: Client) -> None:
    add_note(user, "Tap note", "Called the plumber about the leaking tap.")

    response = client.get("/search/", {"q": "plumber", "kind": "pdf"})

    assert response.context["retrieval"].hits == []
    assert "Nothing in your PDF sources matches “plumber”." in response.content.decode()


def test_the_range_the_question_names_is_shown(user: User, client: Client) -> None:
    add_note(user, "Tap", "Called the plumber about the leaking tap.", timezone.now() - timedelta(days=1))

    response = client.get("/search/", {"q": "what did I note about the plumber yesterday?"})

    retrieval = response.context["retrieval"]
    assert retrieval.label
    assert f'data-clock="{retrieval.date_range.clock}">{retrieval.label}</span>' in response.content.decode()
    assert results(response)[0][0] == "Tap"


def test_an_empty_query_shows_only_the_form(user: User, client: Client) -> None:
    add_note(user, "Tap", "Called the plumber about the leaking tap.")

    for params in [{}, {"q": ""}, {"q": "   ", "kind": "note"}]:
        response = client.get("/search/", params)
        assert response.status_code == 200
        assert response.context["retrieval"] is None
        html = response.content.decode()
        assert 'name="q"' in html
        assert 'class="results"' not in html and "no-results" not in html and 'role="alert"' not in html


def test_with_nothing_found_it_says_so(client: Client) -> None:
    response = client.get("/search/", {"q": "plumber"})

    assert response.status_code == 200
    assert "Nothing in your sources matches “plumber”." in response.content.decode()


def test_bad_input_is_explained_not_searched(user: User, client: Client) -> None:
    add_note(user, "Tap", "Called the plumber about the leaking tap.")

    too_long = client.get("/search/", {"q": "tap " * (QUESTION_MAX_CHARS // 4 + 1)})
    unknown_kind = client.get("/search/", {"q": "tap", "kind": "video"})

    assert too_long.status_code == 200
    assert too_long.context["retrieval"] is None
    assert f"Searches are limited to {QUESTION_MAX_CHARS} characters." in too_long.content.decode()
    assert unknown_kind.status_code == 200
    assert unknown_kind.context["retrieval"] is None
    assert "Select a valid choice" in unknown_kind.content.decode()


def test_the_page_requires_log_in() -> None:
    response = Client().get("/search/", {"q": "tap"})

    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


@pytest.mark.parametrize(
    ("text", "query", "expected"),
    [
        ("The Tap drips; tap it.", "tap", "The <mark>Tap</mark> drips; <mark>tap</mark> it."),
        ("Taps and a tapestry", "tap", "Taps and a tapestry"),  # whole words only
        ("What is the tap?", "what is the tap", "What is the <mark>tap</mark>?"),  # common words stay plain
        ("<b>tap</b> & co", "tap", "&lt;b&gt;<mark>tap</mark>&lt;/b&gt; &amp; co"),
        ("Fish &amp; chips", "amp", "Fish &amp;<mark>amp</mark>; chips"),  # the text's own words, not entities
        ("Room 3, floor 12", "3", "Room <mark>3</mark>, floor 12"),
        ("anything", "", "anything"),
    ],
)
def test_highlight_marks_whole_query_words_in_escaped_text(text: str, query: str, expected: str) -> None:
    assert highlight(text, query) == expected
