from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from accounts import services
from accounts.forms import SignupForm, TimeZoneForm
from accounts.models import User
from secondbrain.errors import AppError


def signup(request: HttpRequest) -> HttpResponse:
    if not settings.SIGNUP_OPEN:
        return render(request, "accounts/signup.html", {"closed": True}, status=403)
    form = SignupForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
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


@login_required
def settings_page(request: HttpRequest) -> HttpResponse:
    user = request.user
    assert isinstance(user, User)  # login_required
    form = TimeZoneForm(request.POST or None, initial={"time_zone": user.time_zone})
    if request.method == "POST" and form.is_valid():
        services.user_time_zone_set(user=user, time_zone=form.cleaned_data["time_zone"])
        messages.success(request, f"Saved. Your questions are now read in {form.cleaned_data['time_zone']} time.")
        return redirect("settings")
    return render(request, "accounts/settings.html", {"form": form}, status=422 if form.errors else 200)
