from django.contrib import admin
from django.contrib.auth.admin import UserAdmin
from django.db.models import QuerySet
from django.http import HttpRequest

from accounts import services
from accounts.models import ApiToken, User


@admin.register(User)
class SecondBrainUserAdmin(UserAdmin):
    """Deleting a user here is `services.user_delete`: their sessions end and their chunks go in one
    statement. Their files would go without it too (ingestion/signals.py)."""

    def delete_model(self, request: HttpRequest, obj: User) -> None:
        services.user_delete(user=obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[User]) -> None:
        for user in queryset:
            services.user_delete(user=user)


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ["prefix", "user", "name", "created_at", "last_used_at"]
    list_filter = ["user"]
    readonly_fields = ["prefix", "key_hash", "created_at", "last_used_at"]
