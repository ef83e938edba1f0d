from django.contrib.auth import views as auth_views
from django.urls import path

from accounts import views

urlpatterns = [
    path("signup/", views.signup, name="signup"),
    path("login/", auth_views.LoginView.as_view(template_name="accounts/login.html"), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
]

# Under /settings/: the page and what it posts to.
settings_urlpatterns = [
    path("", views.settings_page, name="settings"),
    path("password/", views.password_change, name="password_change"),
    path("tokens/<int:token_id>/revoke/", views.token_revoke, name="token_revoke"),
    path("export/", views.export_archive, name="export"),
    path("delete-account/", views.account_delete, name="account_delete"),
]
