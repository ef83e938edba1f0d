from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login, logout, update_session_auth_hash
from django.contrib.auth.decorators import login_required
from django.http import FileResponse, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from accounts import export, selectors, services
from accounts.forms import AccountDeleteForm, PasswordChangeForm, SignupForm, TimeZoneForm
from accounts.http import AuthedRequest
from secondbrain import limits
from secondbrain.errors import AppError

SETTINGS = "accounts/settings.html"


def signup(request: HttpRequest) -> HttpResponse:
    if not settings.SIGNUP_OPEN:
        return render(request, "accounts/signup.html", {"closed": True}, status=403)
    form = SignupForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        limits.rate_spend("signup_address", limits.client_address(request))
        try:
            user = services.user_register(
                username=form.cleaned_data["username"],
                password=form.cleaned_data["password"],
                time_zone=form.cleaned_data["time_zone"],
            )
        except AppError as exc:
            form.add_error("username" if exc.code == "username_taken" else "password", exc.message)
        else:
            login(request, user, backend="django.contrib.auth.backends.ModelBackend")
            return redirect("home")
    return render(request, "accounts/signup.html", {"form": form})


def _settings(request: AuthedRequest, **forms: Any) -> HttpResponse:
    """The settings page, with `forms` (as posted, with their errors) in place of fresh ones."""
    context = {
        "form": TimeZoneForm(initial={"time_zone": request.user.time_zone}),
        "password_form": PasswordChangeForm(),
        "delete_form": AccountDeleteForm(),
        "tokens": selectors.tokens_of(user=request.user),
        "audit": selectors.audit_entries_of(user=request.user),
        **forms,
    }
    failed = any(form.errors for form in forms.values())
    return render(request, SETTINGS, context, status=422 if failed else 200)


@login_required
def settings_page(request: AuthedRequest) -> HttpResponse:
    if request.method != "POST":
        return _settings(request)
    form = TimeZoneForm(request.POST)
    if not form.is_valid():
        return _settings(request, form=form)
    services.user_time_zone_set(user=request.user, time_zone=form.cleaned_data["time_zone"])
    messages.success(request, f"Saved. Your questions are now read in {form.cleaned_data['time_zone']} time.")
    return redirect("settings")


@login_required
@require_POST
def password_change(request: AuthedRequest) -> HttpResponse:
    """A new password: other browsers are signed out, this one stays signed in."""
    form = PasswordChangeForm(request.POST)
    if form.is_valid():
        try:
            services.password_change(
                user=request.user,
                old_password=form.cleaned_data["old_password"],
                new_password=form.cleaned_data["new_password"],
            )
        except AppError as exc:
            form.add_error("old_password" if exc.code == "wrong_password" else "new_password", exc.message)
        else:
            update_session_auth_hash(request, request.user)
            messages.success(request, "Password changed. Other browsers signed in as you are signed out.")
            return redirect("settings")
    return _settings(request, password_form=form)


@login_required
@require_POST
def token_revoke(request: AuthedRequest, token_id: int) -> HttpResponse:
    token = selectors.token_get(user=request.user, token_id=token_id)
    services.token_revoke(token=token)
    messages.success(request, f"Revoked the token {token.prefix}…: it no longer works.")
    return redirect("settings")


@login_required
def export_archive(request: AuthedRequest) -> FileResponse:
    return FileResponse(
        export.export_file(user=request.user),
        as_attachment=True,
        filename=export.export_filename(user=request.user),
        content_type="application/zip",
    )


@login_required
@require_POST
def account_delete(request: AuthedRequest) -> HttpResponse:
    form = AccountDeleteForm(request.POST)
    if form.is_valid():
        try:
            services.account_delete(user=request.user, password=form.cleaned_data["password"])
        except AppError as exc:
            form.add_error("password", exc.message)
        else:
            logout(request)
            return redirect("login")
    return _settings(request, delete_form=form)
