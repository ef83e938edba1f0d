"""However a source goes, its words leave its owner's answers and its file leaves the disk.

Signals, not a `Source.delete()` override: the admin's "delete selected", a queryset's `delete()`
and the cascade from a deleted user never call a model's `delete()`, but Django sends these signals
for every row it deletes. `services.source_delete`, which deletes with one SQL statement, sends the
same two signals itself — so this module is the one place either happens.
"""

from typing import Any

from django.db import transaction
from django.db.models import QuerySet
from django.db.models.signals import post_delete, pre_delete
from django.dispatch import receiver

from accounts.models import User
from ingestion.models import Source


@receiver(pre_delete, sender=Source, dispatch_uid="ingestion.source_forget")
def forget_source_text(sender: type[Source], instance: Source, origin: object = None, **kwargs: Any) -> None:
    if _user_going(origin):  # the user's conversations go in the same deletion: nothing to rewrite
        return
    from chat.services import source_forget  # chat imports ingestion; imported late to keep the apps apart

    source_forget(source=instance)


@receiver(post_delete, sender=Source, dispatch_uid="ingestion.source_file_remove")
def remove_source_file(sender: type[Source], instance: Source, using: str = "default", **kwargs: Any) -> None:
    name, storage = instance.file.name, instance.file.storage
    if not name:
        return
    # After commit: a rolled-back deletion must still find its file.
    transaction.on_commit(lambda: storage.delete(name), using=using)


def _user_going(origin: object) -> bool:
    return isinstance(origin, User) or (isinstance(origin, QuerySet) and origin.model is User)
