"""Where a web or MCP session's uploads land: `apps/tutor/sessions/<key>/uploads` in the data dir, one per session."""

from __future__ import annotations

from pathlib import Path


def session_folders(home: Path) -> list[Path]:
    """Every session's upload folder under data dir `home`."""
    return sorted((home / "apps" / "tutor" / "sessions").glob("*/uploads"))


def session_uploads(home: Path) -> Path:
    """The upload folder of the one session a test made (a path that does not exist before any)."""
    folders = session_folders(home)
    assert len(folders) <= 1, folders
    return folders[0] if folders else home / "apps" / "tutor" / "sessions" / "none" / "uploads"
