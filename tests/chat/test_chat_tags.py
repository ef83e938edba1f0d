"""Answers reach the page as Markdown rendered and sanitized: hostile model output stays text."""

from html.parser import HTMLParser

import pytest

from chat.templatetags.chat_tags import after_title, cite_links, excerpt, sanitize

SAFE_TAGS = {"p", "br", "strong", "em", "code", "pre", "a", "ul", "ol", "li", "blockquote"}


class Elements(HTMLParser):
    """The elements and attributes a browser would build from the HTML, and the text it would show."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.found: list[tuple[str, dict[str, str]]] = []
        self.text = ""
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.found.append((tag, {name: value or "" for name, value in attrs}))

    def handle_data(self, data: str) -> None:
        self.text += data


CITATIONS = [{"marker": 1, "source_id": 7, "chunk_id": 42, "source_title": "Garden <plan>"}]


@pytest.mark.parametrize(
    "hostile",
    [
        "<script>alert(1)</script>",
        '<img src="x" onerror="alert(1)">',
        "[click](javascript:alert(1))",
        "[click](JaVaScRiPt:alert(1))",
        "[click](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
        '<a href="javascript:alert(1)">x</a>',
        "![x](javascript:alert(1))",
        '<svg onload="alert(1)"></svg>',
        '<iframe src="https://example.org"></iframe>',
        '[x](https://example.org "a" onmouseover="alert(1)")',
        "[1]: javascript:alert(1)\n\nSee [1].",
    ],
)
def test_hostile_markdown_is_inert(hostile: str) -> None:
    html = str(cite_links(f"The tomatoes go in on 12 May [1].\n\n{hostile}", CITATIONS))
    for tag, attributes in Elements(html).found:
        assert tag in SAFE_TAGS, html
        assert not any(name.startswith("on") for name in attributes), html
        href = attributes.get("href", "/")
        assert href.startswith(("/", "#", "https://", "http://", "mailto:")), html


def test_markdown_is_rendered_and_markers_link_to_their_passage() -> None:
    html = str(cite_links("**Bold** claim [1].\n\n- one\n- two [3]\n\n`code [1]`", CITATIONS))
    assert "<strong>Bold</strong>" in html and "<li>one</li>" in html
    assert 'href="/sources/7/#chunk-42"' in html and 'title="Source 1: Garden &lt;plan&gt;"' in html
    assert "[3]" not in html  # a marker with no citation points nowhere: dropped
    assert "<code>code [1]</code>" in html  # code stays as written


@pytest.mark.parametrize(
    ("written", "shown"),
    [
        ("[your bank](http://evil.example/login)", "your bank (http://evil.example/login)"),
        ("<https://evil.example/x>", "https://evil.example/x"),
        ("https://evil.example/bare", "https://evil.example/bare"),
        ("[mail](mailto:me@example.org)", "mail (mailto:me@example.org)"),
        ("[protocol-relative](//evil.example)", "protocol-relative (//evil.example)"),
        ("[a passage](/sources/7/#chunk-42)", "a passage (/sources/7/#chunk-42)"),
        ('<a href="https://evil.example">raw</a>', '<a href="https://evil.example">raw</a>'),
    ],
)
def test_links_the_model_wrote_are_shown_as_text(written: str, shown: str) -> None:
    """An answer's only links are its citations: whatever address the model writes stays readable text."""
    page = Elements(str(cite_links(f"The tomatoes go in on 12 May [1]. {written}", CITATIONS)))
    links = [attributes["href"] for tag, attributes in page.found if tag == "a"]
    assert links == ["/sources/7/#chunk-42"], page.found
    assert page.text.strip() == f"The tomatoes go in on 12 May [1]. {shown}"


@pytest.mark.parametrize("href", ["https://evil.example", "//evil.example", "/\\evil.example", "mailto:me@example.org"])
def test_the_sanitizer_drops_any_address_off_this_site(href: str) -> None:
    """Should a link ever slip past the renderer, its address still goes (defence in depth)."""
    links = [attributes for _, attributes in Elements(str(sanitize(f'<a class="cite" href="{href}">[1]</a>'))).found]
    assert links and "href" not in links[0], links
    assert (
        Elements(str(sanitize('<a href="/sources/7/#chunk-42">[1]</a>'))).found[0][1]["href"] == "/sources/7/#chunk-42"
    )


def test_a_citation_card_keeps_the_lines_of_a_note_typed_line_by_line() -> None:
    note = "Car service 12 Nov\nbrakes done, €262\ntyres need replacing <soon>\n\nasked about the wipers"
    shown = excerpt(note, 40)
    assert (
        shown
        == "Car service 12 Nov<br>brakes done, €262<br>tyres need replacing &lt;soon&gt;<br>asked about the wipers"
    )


def test_a_long_passage_is_cut_at_the_word_budget_with_an_ellipsis() -> None:
    assert excerpt("one two three\nfour five six\nseven", 4) == "one two three<br>four …"
    assert excerpt("one two three\nfour\nfive", 4) == "one two three<br>four …"
    assert excerpt("one two three four", 4) == "one two three four"


def test_a_card_does_not_repeat_the_title_it_shows_above_the_passage() -> None:
    note = "Kitchen reno\nquote came in at 9,400 incl fitting\ndeposit is 30% of the total"
    assert after_title(note, "Kitchen reno") == "quote came in at 9,400 incl fitting\ndeposit is 30% of the total"
    assert after_title("# Books\nTom recommended Piranesi.", "Books") == "Tom recommended Piranesi."
    # A passage further into the note, or one that is nothing but its title, is shown as it is.
    assert after_title("deposit is 30% of the total", "Kitchen reno") == "deposit is 30% of the total"
    assert after_title("Kitchen reno", "Kitchen reno") == "Kitchen reno"
