"""Answers reach the page as Markdown rendered and sanitized: hostile model output stays text."""

from html.parser import HTMLParser

import pytest

from chat.templatetags.chat_tags import cite_links

SAFE_TAGS = {"p", "br", "strong", "em", "code", "pre", "a", "ul", "ol", "li", "blockquote"}


class Elements(HTMLParser):
    """The elements and attributes a browser would build from the HTML (text is not looked at)."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.found: list[tuple[str, dict[str, str]]] = []
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.found.append((tag, {name: value or "" for name, value in attrs}))


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


def test_links_keep_only_safe_schemes() -> None:
    html = str(cite_links("[site](https://example.org) and [mail](mailto:me@example.org)"))
    assert 'href="https://example.org"' in html and 'href="mailto:me@example.org"' in html
    assert 'rel="noopener noreferrer"' in html
