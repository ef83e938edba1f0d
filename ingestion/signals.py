"""However a source goes, its file leaves the disk (and, in `chat/signals.py`, its words leave its
owner's answers).

Signals, not a `Source.delete()` override: the admin's "delete selected", a queryset's `delete()`
and the cascade from a deleted user never call a model's `delete()`, but Django sends these signals
for every row it deletes. `services.source_delete`, which deletes with one SQL statement, sends the
same two signals itself — so the receivers are the one place either happens. The chat app listens
for itself: ingestion does not know about answers.
"""

from typing import Any

from django.db import transaction
from django.db.models.signals import post_delete
from django.dispatch import receiver

from ingestion.models import Source


@receiver(post_delete, sender=Source, dispatch_uid="ingestion.source_file_remove")
def remove_source_file(sender: type[Source], instance: Source, using: str = "default", **kwargs: Any) -> None:
    name, storage = instance.file.name, instance.file.storage
    if not name:
        return
    # After commit: a rolled-back deletion must still find its file.
    transaction.on_commit(lambda: storage.delete(name), using=using)
