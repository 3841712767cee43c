"""Writing a workspace's files so that a kill at any instant leaves the old file or the new one, never a part: a
replacement (`write_atomic`) and a record made at most once (`create_once`, for records a resumed run must not
write twice)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["create_once", "write_atomic"]


@contextmanager
def _temp_beside(path: Path, data: bytes) -> Iterator[str]:
    """`data` written and fsynced to a temporary file in `path`'s folder; removed afterwards unless it was renamed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        yield temp
    finally:
        Path(temp).unlink(missing_ok=True)


def write_atomic(path: Path, data: bytes) -> None:
    """Replace `path` with `data` through a temporary file, fsync and a rename: a reader sees the old or the new file."""
    with _temp_beside(path, data) as temp:
        os.replace(temp, path)


def create_once(path: Path, data: bytes) -> bool:
    """Create `path` holding `data`, atomically and only if it does not exist: False (the file unchanged) when it
    does. A hard link is made only if none exists, so two writers cannot both win."""
    if path.exists():
        return False
    with _temp_beside(path, data) as temp:
        try:
            os.link(temp, path)
        except FileExistsError:
            return False
    return True
