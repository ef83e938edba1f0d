from typing import Any

from django import forms

from chat.services import QUESTION_MAX_CHARS
from ingestion.models import Source


class SearchForm(forms.Form):
    """The search page's query: the API's limits (`SearchQuery` in chat/api.py), as a form's errors."""

    q = forms.CharField(
        label="Search your notes",
        required=False,
        max_length=QUESTION_MAX_CHARS,
        error_messages={"max_length": f"Searches are limited to {QUESTION_MAX_CHARS} characters."},
        widget=forms.SearchInput(attrs={"placeholder": "Words you remember, or “what did I add last week?”"}),
    )
    kind = forms.ChoiceField(label="In", required=False, choices=[("", "All sources"), *Source.Kind.choices])
    include_private = forms.BooleanField(label="Include private sources", required=False)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("label_suffix", "")
        super().__init__(*args, **kwargs)
