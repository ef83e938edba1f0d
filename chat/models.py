from django.conf import settings
from django.db import models


class Conversation(models.Model):
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="conversations")
    title = models.CharField(max_length=200)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-updated_at", "-id"]
        indexes = [models.Index(fields=["owner", "-updated_at"])]

    def __str__(self) -> str:
        return self.title


class Message(models.Model):
    class Role(models.TextChoices):
        USER = "user", "You"
        ASSISTANT = "assistant", "Second Brain"

    class Status(models.TextChoices):
        COMPLETE = "complete", "Complete"
        FAILED = "failed", "Failed"  # the model failed mid-answer: `content` is what arrived before
        STOPPED = "stopped", "Stopped"  # the person stopped it: `content` is what arrived before

    class Route(models.TextChoices):
        """The path that answered (chat/intent.py): the question's type decides it."""

        QUESTION = "question", "Question"  # searched and answered from the passages by the model
        LISTING = "listing", "Listing by time"  # a time named and nothing else: that time's sources
        CONVERSATION = "conversation", "Conversation"  # a greeting, thanks, "what can you do?"
        SELECTION = "selection", "About a selection"  # "Ask about this": from text selected in a source

    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="messages")
    role = models.CharField(max_length=16, choices=Role.choices)
    route = models.CharField(max_length=16, choices=Route.choices, blank=True)  # answers only
    content = models.TextField()
    abstained = models.BooleanField(default=False)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.COMPLETE)
    error_code = models.CharField(max_length=64, blank=True)
    # How the answer came about: passages retrieved with their scores, timings, the query mode,
    # the passages nearest to an abstained question, how many earlier messages did not fit. A question
    # asked about a selection keeps it here too (`selection`: source, text, the passages it lies in).
    trace = models.JSONField(default=dict, blank=True)
    # The citation check's outcome: each sentence, the markers it claimed and kept, its support.
    citation_check = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]

    def __str__(self) -> str:
        return f"{self.role}: {self.content[:40]}"


class Citation(models.Model):
    """A `[marker]` of an answer and the passage it points to.

    The excerpt and title are copied so an answer reads without its source; deleting the source blanks
    them (`services.source_forget`): what a person deletes leaves their answers too.
    """

    message = models.ForeignKey(Message, on_delete=models.CASCADE, related_name="citations")
    marker = models.PositiveSmallIntegerField()
    chunk = models.ForeignKey("ingestion.Chunk", on_delete=models.SET_NULL, null=True, related_name="+")
    source = models.ForeignKey("ingestion.Source", on_delete=models.SET_NULL, null=True, related_name="+")
    source_title = models.CharField(max_length=300)
    anchor = models.JSONField(default=dict)
    excerpt = models.TextField()

    class Meta:
        ordering = ["marker"]
        constraints = [models.UniqueConstraint(fields=["message", "marker"], name="citation_message_marker_unique")]
