from typing import Any

from django import template

from ingestion.models import anchor_label as _anchor_label

register = template.Library()


@register.filter
def anchor_label(anchor: dict[str, Any]) -> str:
    return _anchor_label(anchor or {})
