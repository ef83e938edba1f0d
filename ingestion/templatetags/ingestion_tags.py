from typing import Any

from django import template
from django.utils.safestring import SafeString, mark_safe

from ingestion.models import Source
from ingestion.models import anchor_label as _anchor_label

register = template.Library()


@register.filter
def anchor_label(anchor: dict[str, Any]) -> str:
    return _anchor_label(anchor or {})


# A padlock: an emoji would depend on the fonts a machine has.
_LOCK = (
    '<svg class="lock" viewBox="0 0 16 16" width="14" height="14" role="img" aria-label="Private source">'
    "<title>Private source</title>"
    '<path fill="currentColor" d="M4.5 7V5a3.5 3.5 0 0 1 7 0v2H13v8H3V7zm2 0h3V5a1.5 1.5 0 0 0-3 0z"/></svg>'
)


@register.simple_tag
def lock() -> SafeString:
    """The lock beside a private source: its title, a citation of it, a search result."""
    return mark_safe(_LOCK)  # noqa: S308 — a constant


@register.filter
def kind_label(kind: str) -> str:
    """A source kind's value ("pdf") as people read it ("PDF")."""
    return Source.Kind(kind).label if kind in Source.Kind.values else kind
