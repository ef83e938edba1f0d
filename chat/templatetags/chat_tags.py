"""Answers as HTML: the model's Markdown rendered and sanitized, its `[n]` markers linked to their passages;
search results with the query's words marked.

Model output is hostile text (a note it read may hold anything), so the HTML is built by a Markdown
parser with raw HTML off and then cleaned by an allow-list sanitizer: a `<script>`, an `onerror`
attribute or a `javascript:` link never reaches the page as live HTML. Nor does a link the model
wrote: an answer's only links are its citations, to passages of this site. A phishing address in a
note ("your bank wants you to log in at …") stays text a person can read, not a click away.
"""

import re
from collections.abc import Iterable, Mapping
from functools import cache
from typing import Any

import nh3
from django import template
from django.urls import reverse
from django.utils.html import escape, format_html
from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt
from markdown_it.token import Token

from chat.grounding import content_words

register = template.Library()

_MARKER = re.compile(r"(\s?)\[(\d{1,3})\]")
_TAGS = {
    *"p br strong em del code pre blockquote ul ol li a hr h1 h2 h3 h4 h5 h6".split(),
    *"table thead tbody tr th td".split(),
}
_ATTRIBUTES = {"a": {"href", "class", "title"}, "ol": {"start"}}
_SITE_PATH = re.compile(r"/(?![/\\])")  # "/sources/…", not "//evil.example" (another host, this scheme)
_WORD = re.compile(r"\w+")  # a word as `content_words` reads one, so a query word finds itself


@register.filter
def cite_links(text: str, citations: Iterable[Any] | None = None) -> SafeString:
    """Render an answer's Markdown safely; each `[n]` becomes a link to the passage its citation names.

    `citations` are Citation rows or the `citations` event's dicts. A marker with no citation is
    dropped: it would point nowhere.
    """
    targets = {int(_field(citation, "marker")): citation for citation in citations or []}
    html = _markdown().render(text or "", {"targets": targets})
    return sanitize(html)


def sanitize(html: str) -> SafeString:
    """`html` with only the answer's allowed tags and attributes, and links only to this site's pages."""
    clean = nh3.clean(html, tags=_TAGS, attributes=_ATTRIBUTES, attribute_filter=_site_links_only, url_schemes=set())
    return mark_safe(clean)  # noqa: S308 — sanitized


@register.filter
def passage_url(item: Any) -> str:
    """Where a citation or a nearest passage opens: its source's page, scrolled to the passage."""
    source_id, chunk_id = _field(item, "source_id"), _field(item, "chunk_id")
    if not source_id:
        return ""
    url = reverse("source_detail", args=[source_id])
    return f"{url}#chunk-{chunk_id}" if chunk_id else url


@register.filter
def highlight(text: str, query: str = "") -> SafeString:
    """`text` escaped, with each whole word of `query` in it marked (`<mark>`), whatever its case.

    Common words ("the", "what") and single letters are not marked: in a question they carry no
    topic, and marked they would light up every passage.
    """
    text = text or ""
    words = {word for word in content_words(query or "") if len(word) > 1 or word.isdigit()}
    parts: list[str] = []
    position = 0
    for match in _WORD.finditer(text):
        if match.group().lower() in words:
            parts.append(escape(text[position : match.start()]))
            parts.append(format_html("<mark>{}</mark>", match.group()))
            position = match.end()
    parts.append(escape(text[position:]))
    return mark_safe("".join(parts))  # noqa: S308 — every part escaped above


@register.filter
def excerpt(text: str, words: int = 40) -> SafeString:
    """A passage's first `words` words, escaped, its line breaks kept: a note typed line by line reads
    as its lines (Django's `truncatewords` joins them into one run-on line), with "…" where it was cut."""
    kept: list[str] = []
    left = words
    for line in (text or "").splitlines():
        line_words = line.split()
        if not line_words:
            continue
        if left <= 0:  # the budget ended with the line before
            kept[-1] += " …"
            break
        kept.append(" ".join(line_words[:left]))
        left -= len(line_words)
        if left < 0:
            kept[-1] += " …"
            break
    return mark_safe("<br>".join(str(escape(line)) for line in kept))  # noqa: S308 — every line escaped


@register.filter
def after_title(text: str, title: str) -> str:
    """A passage without its source's title where it opens with it (after a Markdown "#"): a note's first
    line is its title, which a card shows above the passage and a listing before it ("Kitchen reno" twice).
    A passage that is nothing but its title is left as it is."""
    opening = (text or "").lstrip("# \n")
    title = (title or "").strip()
    rest = opening[len(title) :]
    if title and opening[: len(title)].casefold() == title.casefold() and rest.strip() and not rest[:1].isalnum():
        return rest.lstrip()
    return text


@cache
def _markdown() -> MarkdownIt:
    # CommonMark with tables and strikethrough, raw HTML off. Reference definitions are off too:
    # "[1]: https://…" in an answer must not turn the citation markers into links elsewhere.
    md = MarkdownIt("commonmark", {"html": False, "breaks": True}).enable(["table", "strikethrough"])
    md.disable(["reference", "image"])
    md.add_render_rule("text", _render_text)
    md.add_render_rule("link_open", _render_link_open)
    md.add_render_rule("link_close", _render_link_close)
    return md


def _render_link_open(self: Any, tokens: list[Token], idx: int, options: Any, env: Mapping[str, Any]) -> str:
    return ""  # a link the model wrote is shown as its text, followed by its address (below)


def _render_link_close(self: Any, tokens: list[Token], idx: int, options: Any, env: Mapping[str, Any]) -> str:
    """` (address)` after a link's text, as text; nothing when the text is the address (`<https://…>`)."""
    start = next(i for i in range(idx - 1, -1, -1) if tokens[i].type == "link_open")
    address = str(tokens[start].attrGet("href") or "")
    text = "".join(token.content for token in tokens[start + 1 : idx])
    return "" if text in {address, address.removeprefix("mailto:")} else f" ({escape(address)})"


def _site_links_only(element: str, attribute: str, value: str) -> str | None:
    """Behind the renderer, the sanitizer's rule too: an `href` leads to a page of this site or goes."""
    if element == "a" and attribute == "href" and not _SITE_PATH.match(value):
        return None
    return value


def _render_text(self: Any, tokens: list[Token], idx: int, options: Any, env: Mapping[str, Any]) -> str:
    """Text with its markers as links; markers inside code spans stay text (they are other tokens)."""
    targets: Mapping[int, Any] = env.get("targets", {})
    parts: list[str] = []
    position = 0
    content = tokens[idx].content
    for match in _MARKER.finditer(content):
        parts.append(str(escape(content[position : match.start()])))
        space, number = match.groups()
        citation = targets.get(int(number))
        if citation is not None and (url := passage_url(citation)):
            label = f"Source {number}: {_field(citation, 'source_title')}"
            link = format_html('{}<a class="cite" href="{}" title="{}">[{}]</a>', space, url, label, number)
            parts.append(str(link))
        position = match.end()
    parts.append(str(escape(content[position:])))
    return "".join(parts)


def _field(item: Any, name: str) -> Any:
    return item.get(name) if isinstance(item, Mapping) else getattr(item, name, None)
