from collections.abc import Callable
from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from accounts.models import AuditEntry
from accounts.services import Via
from ingestion import services
from ingestion.models import Chunk, Job, Source
from secondbrain.errors import AppError

ADMIN = Via(AuditEntry.Channel.ADMIN)


class ChunkInline(admin.TabularInline):
    model = Chunk
    fields = readonly_fields = ("ordinal", "text", "anchor", "occurred_at")
    extra = 0
    can_delete = False
    show_change_link = False

    def has_add_permission(self, request: object, obj: object = None) -> bool:
        return False


@admin.register(Source)
class SourceAdmin(admin.ModelAdmin):
    list_display = ["title", "owner", "kind", "status", "private", "size", "created_at", "occurred_at"]
    list_filter = ["owner", "status", "kind", "private"]
    list_editable = ["private"]
    search_fields = ["title"]
    # A source's content changes only through the pipeline (sniffed, hashed, counted against the
    # quota, chunked again); and the web server takes no admin form larger than MAX_REQUEST_KB.
    readonly_fields = ["file", "text", "sha256", "size", "mime_type", "created_at"]
    inlines = [ChunkInline]
    actions = ["reprocess", "delete_fast"]

    def delete_model(self, request: HttpRequest, obj: Source) -> None:
        services.source_delete(source=obj, via=ADMIN)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Source]) -> None:
        for source in queryset:
            services.source_delete(source=source, via=ADMIN)

    @admin.action(description="Reprocess the selected sources")
    def reprocess(self, request: HttpRequest, queryset: QuerySet[Source]) -> None:
        _for_each(request, queryset, lambda source: services.source_reprocess(source=source), "queued again")

    @admin.action(description="Delete the selected sources with their files and passages")
    def delete_fast(self, request: HttpRequest, queryset: QuerySet[Source]) -> None:
        _for_each(request, queryset, lambda source: services.source_delete(source=source, via=ADMIN), "deleted")


@admin.register(Job)
class JobAdmin(admin.ModelAdmin):
    list_display = ["id", "source", "owner", "status", "stage", "progress", "attempts", "error_code", "created_at"]
    list_filter = ["owner", "status", "source__kind"]
    search_fields = ["source__title"]
    list_select_related = ["source", "owner"]
    readonly_fields = ["created_at", "started_at", "finished_at", "updated_at"]
    actions = ["cancel", "reprocess"]

    @admin.action(description="Cancel the selected jobs")
    def cancel(self, request: HttpRequest, queryset: QuerySet[Job]) -> None:
        _for_each(request, queryset.select_related("source"), lambda job: services.job_cancel(job=job), "cancelled")

    @admin.action(description="Reprocess the sources of the selected jobs")
    def reprocess(self, request: HttpRequest, queryset: QuerySet[Job]) -> None:
        sources = Source.objects.filter(pk__in=queryset.values("source_id"))
        _for_each(request, sources, lambda source: services.source_reprocess(source=source), "queued again")


def _for_each(request: HttpRequest, items: QuerySet[Any], action: Callable[[Any], object], done: str) -> None:
    """Apply a service to each selected row; report how many it changed and why the others did not."""
    changed, refused = 0, []
    for item in items:
        try:
            action(item)
        except AppError as exc:
            refused.append(f"{item}: {exc.message}")
        else:
            changed += 1
    if changed:
        messages.success(request, f"{changed} {done}.")
    for reason in refused:
        messages.warning(request, reason)
