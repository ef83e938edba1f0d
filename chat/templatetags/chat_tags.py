import re

from django import template
from django.utils.html import escape, format_html
from django.utils.safestring import SafeString, mark_safe

register = template.Library()

_MARKER = re.compile(r"\[(\d{1,3})\]")


@register.filter
def cite_links(text: str, turn: int) -> SafeString:
    """Escape an answer and turn its `[n]` markers into links to the citation cards below it."""

    def link(match: re.Match[str]) -> str:
        number = match.group(1)
        return str(format_html('<a class="cite" href="#cite-{}-{}">[{}]</a>', turn, number, number))

    paragraphs = [_MARKER.sub(link, str(escape(part))) for part in text.split("\n\n") if part.strip()]
    return mark_safe("".join(f"<p>{part.replace(chr(10), '<br>')}</p>" for part in paragraphs))  # noqa: S308 — built from escaped text
