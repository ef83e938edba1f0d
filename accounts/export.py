"""Everything of one person as one zip archive: what they added, as they added it, and their conversations.

Written to a file, never built in memory: uploaded files are copied into the archive block by block.
"""

import json
import re
import shutil
import tempfile
import zipfile
from datetime import datetime
from pathlib import PurePath
from typing import IO, Any

from django.utils import timezone

from accounts.models import AuditEntry, User
from chat.models import Conversation
from ingestion.models import Source

COPY_BLOCK_BYTES = 2**20
README = """# Your Second Brain export

Exported {exported_at} for {username}.

- `notes/` — each typed or uploaded text note as Markdown, with YAML front matter: title, date (when it
  happened), created_at (when you added it), kind, and `private: true` for a private one; and each web
  page's text, with its `url`.
- `files/` — each uploaded PDF, recording and image, byte for byte as you uploaded it (an image's
  caption is in the manifest).
- `conversations/` — each conversation as JSON: its messages in order, each answer with its citations
  (the source, where in it, and the passage quoted).
- `manifest.json` — every source with its kind, dates, sha256, whether it is private and where it is in
  this archive.
- `activity.json` — your audit log: each MCP tool call and each source added or deleted, with when,
  how and with which API token.

Passages and their vectors are not included: adding these files again rebuilds them.
"""


def export_file(*, user: User) -> IO[bytes]:
    """The user's archive in a temporary file, read from its start; closing it deletes it."""
    handle = tempfile.TemporaryFile()
    try:
        export_write(user=user, into=handle)
    except BaseException:
        handle.close()
        raise
    handle.seek(0)
    return handle


def export_filename(*, user: User) -> str:
    return f"second-brain-{_slug(user.username)}-{timezone.localdate():%Y-%m-%d}.zip"


def export_write(*, user: User, into: IO[bytes]) -> None:
    """Write the user's archive to `into` (a file opened for binary writing; it is not closed)."""
    now = timezone.now()
    with zipfile.ZipFile(into, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("README.md", README.format(exported_at=now.isoformat(), username=user.username))
        sources = [_source_write(archive, source) for source in Source.objects.filter(owner=user).order_by("id")]
        conversations = Conversation.objects.filter(owner=user).order_by("id").prefetch_related("messages__citations")
        for conversation in conversations:
            archive.writestr(
                f"conversations/{conversation.pk}-{_slug(conversation.title)}.json",
                json.dumps(_conversation(conversation), indent=2, ensure_ascii=False),
            )
        manifest = {"username": user.username, "exported_at": now.isoformat(), "sources": sources}
        archive.writestr("manifest.json", json.dumps(manifest, indent=2, ensure_ascii=False))
        activity = AuditEntry.objects.filter(user=user).order_by("created_at", "id")
        archive.writestr(
            "activity.json", json.dumps([_activity(entry) for entry in activity], indent=2, ensure_ascii=False)
        )


def _source_write(archive: zipfile.ZipFile, source: Source) -> dict[str, Any]:
    """Add the source to the archive; its line of the manifest."""
    filename = str(source.metadata.get("filename") or "")
    if source.file:
        path = f"files/{source.pk}-{_slug(filename or source.title + PurePath(source.file.name or '').suffix)}"
        # PDFs and audio are compressed already: stored as they are.
        info = zipfile.ZipInfo(path, date_time=_zip_time(source.created_at))
        info.compress_type = zipfile.ZIP_STORED
        with source.file.open("rb") as handle, archive.open(info, "w", force_zip64=source.size >= 2**31) as out:
            shutil.copyfileobj(handle, out, COPY_BLOCK_BYTES)
    else:
        path = f"notes/{source.pk}-{_slug(source.title)}.md"
        archive.writestr(path, _note_markdown(source))
    return {
        "id": source.pk,
        "path": path,
        "title": source.title,
        "kind": source.kind,
        "filename": filename or None,
        "mime_type": source.mime_type,
        "size": source.size,
        "sha256": source.sha256,
        "created_at": source.created_at.isoformat(),
        "occurred_at": source.occurred_at.isoformat(),
        "status": source.status,
        "private": source.private,
        **({"caption": source.text} if source.file and source.text else {}),
    }


def _note_markdown(source: Source) -> str:
    # Strings as JSON strings (a valid YAML scalar whatever a title holds: colons, quotes, #); dates
    # bare, so YAML readers (Obsidian, static-site generators) take them as timestamps.
    fields = {
        "title": json.dumps(source.title, ensure_ascii=False),
        "date": source.occurred_at.isoformat(),
        "created_at": source.created_at.isoformat(),
        "kind": source.kind,
    }
    if source.private:  # read back by ingestion.notes: a private note added again stays private
        fields["private"] = "true"
    for key in ("filename", "url"):
        if source.metadata.get(key):
            fields[key] = json.dumps(str(source.metadata[key]), ensure_ascii=False)
    front = "\n".join(f"{key}: {value}" for key, value in fields.items())
    return f"---\n{front}\n---\n\n{source.text}\n"


def _activity(entry: AuditEntry) -> dict[str, Any]:
    return {
        "at": entry.created_at.isoformat(),
        "action": entry.action,
        "name": entry.name,
        "channel": entry.channel,
        "token": entry.token_label,
        "detail": entry.detail,
        "error": entry.error,
    }


def _conversation(conversation: Conversation) -> dict[str, Any]:
    return {
        "id": conversation.pk,
        "title": conversation.title,
        "created_at": conversation.created_at.isoformat(),
        "updated_at": conversation.updated_at.isoformat(),
        "messages": [
            {
                "role": message.role,
                "content": message.content,
                "created_at": message.created_at.isoformat(),
                "status": message.status,
                "abstained": message.abstained,
                # What a question was asked about ("Ask about this"): the source and the text selected in it.
                "selection": _selection(message.trace.get("selection")),
                "citations": [
                    {
                        "marker": citation.marker,
                        "source_id": citation.source_id,
                        "source_title": citation.source_title,
                        "anchor": citation.anchor,
                        "excerpt": citation.excerpt,
                    }
                    for citation in message.citations.all()
                ],
            }
            for message in conversation.messages.all()
        ],
    }


def _selection(selection: dict[str, Any] | None) -> dict[str, Any] | None:
    if not selection:
        return None
    return {key: selection.get(key) for key in ("source_id", "source_title", "text")}


def _slug(text: str) -> str:
    """A file name part that is safe in any archive tool: no separators, no dot-dot, not empty."""
    return re.sub(r"[^\w.-]+", "-", text).strip("-.")[:60] or "untitled"


def _zip_time(moment: datetime) -> tuple[int, int, int, int, int, int]:
    local = timezone.localtime(moment)
    return (max(local.year, 1980), local.month, local.day, local.hour, local.minute, local.second)
