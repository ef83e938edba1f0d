from typing import Any

from django import template

from ingestion.models import Source
from ingestion.models import anchor_label as _anchor_label

register = template.Library()


@register.filter
def anchor_label(anchor: dict[str, Any]) -> str:
    return _anchor_label(anchor or {})


@register.filter
def kind_label(kind: str) -> str:
    """A source kind's value ("pdf") as people read it ("PDF")."""
    return Source.Kind(kind).label if kind in Source.Kind.values else kind
