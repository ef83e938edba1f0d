from typing import Any

from django import forms

from accounts.services import time_zone_names


class SignupForm(forms.Form):
    username = forms.CharField(
        max_length=150, widget=forms.TextInput(attrs={"autocomplete": "username", "autofocus": True})
    )
    password = forms.CharField(widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}))
    password_again = forms.CharField(
        label="Password (again)", widget=forms.PasswordInput(attrs={"autocomplete": "new-password"})
    )
    # Filled in by static/js/app.js from the browser; the service checks it and falls back to UTC.
    time_zone = forms.CharField(
        required=False, max_length=64, widget=forms.HiddenInput(attrs={"data-browser-zone": ""})
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("label_suffix", "")
        super().__init__(*args, **kwargs)

    def clean(self) -> dict[str, object]:
        data = super().clean() or {}
        if data.get("password") and data.get("password") != data.get("password_again"):
            self.add_error("password_again", "The two passwords differ.")
        return data


class TimeZoneForm(forms.Form):
    time_zone = forms.ChoiceField(
        label="Time zone",
        choices=lambda: [(name, name.replace("_", " ")) for name in time_zone_names()],
        help_text="Questions such as “what did I add yesterday?” are read in this zone.",
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("label_suffix", "")
        super().__init__(*args, **kwargs)


class PasswordChangeForm(forms.Form):
    old_password = forms.CharField(
        label="Current password", widget=forms.PasswordInput(attrs={"autocomplete": "current-password"})
    )
    new_password = forms.CharField(
        label="New password", widget=forms.PasswordInput(attrs={"autocomplete": "new-password"})
    )
    new_password_again = forms.CharField(
        label="New password (again)", widget=forms.PasswordInput(attrs={"autocomplete": "new-password"})
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("label_suffix", "")
        super().__init__(*args, **kwargs)

    def clean(self) -> dict[str, object]:
        data = super().clean() or {}
        if data.get("new_password") and data.get("new_password") != data.get("new_password_again"):
            self.add_error("new_password_again", "The two passwords differ.")
        return data


class AccountDeleteForm(forms.Form):
    password = forms.CharField(
        label="Your password, to confirm",
        widget=forms.PasswordInput(attrs={"autocomplete": "current-password"}),
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("label_suffix", "")
        kwargs.setdefault("prefix", "delete")  # its password field apart from the password form's
        super().__init__(*args, **kwargs)
