from django import forms


class NoteForm(forms.Form):
    title = forms.CharField(max_length=120, required=False)
    text = forms.CharField(widget=forms.Textarea(attrs={"rows": 6, "placeholder": "Write a note… Markdown works."}))
    occurred_at = forms.DateTimeField(
        required=False,
        label="When did it happen?",
        widget=forms.DateTimeInput(attrs={"type": "datetime-local"}),
    )
    private = forms.BooleanField(
        required=False,
        label="Private",
        help_text="Left out of search and answers unless you include private sources.",
    )


class WebPageForm(forms.Form):
    # A CharField, not a URLField: the address is checked in one place, `web.url_normalize`.
    url = forms.CharField(
        label="Address",
        max_length=2048,
        widget=forms.URLInput(attrs={"placeholder": "https://…", "autocomplete": "url"}),
    )
    private = forms.BooleanField(
        required=False,
        label="Private",
        help_text="Left out of search and answers unless you include private sources.",
    )
