from django.conf import settings
from django.contrib.auth import login
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from accounts import services
from accounts.forms import SignupForm
from secondbrain.errors import AppError


def signup(request: HttpRequest) -> HttpResponse:
    if not settings.SIGNUP_OPEN:
        return render(request, "accounts/signup.html", {"closed": True}, status=403)
    form = SignupForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            user = services.user_register(
                username=form.cleaned_data["username"], password=form.cleaned_data["password"]
            )
        except AppError as exc:
            form.add_error("username" if exc.code == "username_taken" else "password", exc.message)
        else:
            login(request, user, backend="django.contrib.auth.backends.ModelBackend")
            return redirect("home")
    return render(request, "accounts/signup.html", {"form": form})
