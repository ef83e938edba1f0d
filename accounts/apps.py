from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "accounts"

    def ready(self) -> None:
        from django.contrib.auth.signals import user_login_failed

        from secondbrain import rls  # noqa: F401 — every connection takes its unit of work's scope
        from secondbrain.limits import login_failed

        # A failed log-in counts against its account (the page, the admin, the API's token route).
        user_login_failed.connect(login_failed, dispatch_uid="secondbrain.limits.login_failed")
