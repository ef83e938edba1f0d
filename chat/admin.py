from django.contrib import admin

from chat.models import Citation, Conversation, Message


class MessageInline(admin.TabularInline):
    model = Message
    fields = readonly_fields = ("role", "route", "content", "abstained", "status", "created_at")
    extra = 0
    can_delete = False


@admin.register(Conversation)
class ConversationAdmin(admin.ModelAdmin):
    list_display = ["title", "owner", "updated_at"]
    list_filter = ["owner"]
    search_fields = ["title"]
    inlines = [MessageInline]


class CitationInline(admin.TabularInline):
    model = Citation
    fields = readonly_fields = ("marker", "source_title", "anchor", "excerpt")
    extra = 0
    can_delete = False


@admin.register(Message)
class MessageAdmin(admin.ModelAdmin):
    list_display = ["conversation", "role", "route", "abstained", "status", "created_at"]
    list_filter = ["role", "route", "abstained", "status"]
    readonly_fields = ["trace"]
    inlines = [CitationInline]
