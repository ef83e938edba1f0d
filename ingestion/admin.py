from django.contrib import admin

from ingestion.models import Chunk, Job, Source


class ChunkInline(admin.TabularInline):
    model = Chunk
    fields = ["ordinal", "text", "anchor", "occurred_at"]
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = False

    def has_add_permission(self, request: object, obj: object = None) -> bool:
        return False


@admin.register(Source)
class SourceAdmin(admin.ModelAdmin):
    list_display = ["title", "owner", "kind", "status", "size", "created_at", "occurred_at"]
    list_filter = ["owner", "status", "kind"]
    search_fields = ["title"]
    readonly_fields = ["sha256", "size", "mime_type", "created_at"]
    inlines = [ChunkInline]


@admin.register(Job)
class JobAdmin(admin.ModelAdmin):
    list_display = ["id", "source", "owner", "status", "stage", "progress", "attempts", "error_code", "created_at"]
    list_filter = ["owner", "status", "source__kind"]
    search_fields = ["source__title"]
    list_select_related = ["source", "owner"]
    readonly_fields = ["created_at", "started_at", "finished_at", "updated_at"]
