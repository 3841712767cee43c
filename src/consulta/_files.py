"""Writing a file so that a kill at any instant leaves the old file or the new one, never a part.

- `write_atomic(path, data)` replaces `path`'s bytes; `replacing(path)` is the same for a writer that needs a path
  of its own to write to (a stream, a C library).
- `create_once(path, data)` makes a file at most once (a record a resumed run must not write twice, a default copied
  in by servers starting together): the first writer stands.
- `append_durable(path, lines)` adds lines to a journal (a log, a queue): durable when it returns; a kill mid-write
  leaves at most one torn last line, which the journal's reader skips and the next append does not continue.

The first two write a temporary file `.<name>.<8 random characters>.tmp` beside the target (a crash before the rename may
leave one; whoever cleans a folder may remove such drafts), fsync it, and rename or link it into place, then fsync
the folder so that the rename itself survives a crash. They need nothing but the standard library, so that every
layer (models, asks, runtime, apps) can use them.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

__all__ = ["append_durable", "create_once", "fsync_dir", "replacing", "write_atomic"]


def fsync_dir(folder: Path) -> None:
    """fsync a folder, so that files created or renamed in it survive a crash."""
    _fsync(folder)


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextlib.contextmanager
def _draft(path: Path) -> Iterator[Path]:
    """An empty temporary file beside `path` (mode 0600, as `mkstemp` makes it), removed when the block ends unless
    the block renamed it; what the block wrote there is fsynced before the block's code after the yield runs."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    draft = Path(name)
    try:
        yield draft
    finally:
        draft.unlink(missing_ok=True)


def _refuse_read_only(path: Path) -> int | None:
    """The permission bits of `path` (None if it does not exist); PermissionError if its mode has no write bit."""
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        return None
    if not mode & 0o222 or not os.access(path, os.W_OK):
        raise PermissionError(errno.EACCES, f"{path.name} is read-only (mode {mode:o})", str(path))
    return mode


@contextlib.contextmanager
def replacing(
    path: Path,
    *,
    mode: int | None = None,
    mode_like: Path | None = None,
    before_replace: Callable[[], None] | None = None,
) -> Iterator[Path]:
    """A temporary path beside `path` for the block to write; when the block ends without an error, what it wrote
    replaces `path` (fsynced, renamed, folder fsynced). If the block raises, `path` is left as it was and the draft is
    removed. The block may also leave the draft empty or write it itself by name (e.g. a C library).

    Permissions: `mode` if given, else those of `mode_like` (default: `path` itself, if it exists), else 0600. A file
    whose permissions make it read-only (no write bit) is not replaced: PermissionError before anything is written
    (the rename would replace it all the same; the mode says its owner wants it unchanged). `before_replace` runs
    just before the rename (a step of the caller's, e.g. a crash point). Missing parent folders are created."""
    path = Path(path)
    _refuse_read_only(path)
    like = Path(mode_like) if mode_like is not None else path
    with _draft(path) as draft:
        yield draft
        _fsync(draft)
        if mode is not None:
            os.chmod(draft, mode)
        else:
            with contextlib.suppress(FileNotFoundError):
                os.chmod(draft, stat.S_IMODE(like.stat().st_mode))
        if before_replace is not None:
            before_replace()
        os.replace(draft, path)
    fsync_dir(path.parent)


def write_atomic(
    path: Path,
    data: bytes,
    *,
    mode: int | None = None,
    mode_like: Path | None = None,
    before_replace: Callable[[], None] | None = None,
) -> None:
    """Replace `path` with `data` so that a reader sees either the old or the new bytes, never a mix (see
    `replacing` for permissions, read-only files and `before_replace`)."""
    with replacing(path, mode=mode, mode_like=mode_like, before_replace=before_replace) as draft:
        draft.write_bytes(data)


def create_once(path: Path, data: bytes, *, mode: int | None = None) -> bool:
    """Create `path` holding `data`, whole and only if it does not exist yet: True if this call made it, False (the
    file unchanged) if it already existed. The draft is hard-linked into place, so of two writers exactly one wins.
    On a file system without hard links the check and the rename are two steps (a writer racing in between may be
    replaced). Permissions: `mode` if given, else 0600. Missing parent folders are created."""
    path = Path(path)
    if path.exists():
        return False
    with _draft(path) as draft:
        draft.write_bytes(data)
        _fsync(draft)
        if mode is not None:
            os.chmod(draft, mode)
        try:
            os.link(draft, path)
        except FileExistsError:
            return False
        except OSError:  # no hard links here
            if path.exists():
                return False
            os.replace(draft, path)
    fsync_dir(path.parent)
    return True


def append_durable(path: Path, lines: bytes, *, mode: int = 0o600) -> None:
    """Append `lines` (whole lines, each ending in a newline) to `path` in one `write` of an `O_APPEND` file, fsynced
    (and the folder, when this call made the file) before returning. Appenders in several threads or processes take
    turns (an exclusive `flock` on the file while it writes), so each adds whole lines, never mixed with another's.

    If the file ends in a torn line (no final newline: a kill mid-write), a newline is written first, so that the new
    lines never continue it: the torn line stays one line a reader can skip. `mode` is the new file's permissions
    (less the umask). Missing parent folders are created. ValueError if `lines` does not end in a newline."""
    if not lines.endswith(b"\n"):
        raise ValueError("append_durable writes whole lines: the data must end with a newline")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    created = not path.exists()
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, mode)
    try:
        # Appenders take turns: another's write under way may have grown the file by part of its line, which the
        # look at the last byte would take for a torn line.
        fcntl.flock(fd, fcntl.LOCK_EX)
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            lines = b"\n" + lines
        if os.write(fd, lines) != len(lines):  # a full disk: the part written is a torn line, skipped and not continued
            raise OSError(errno.ENOSPC, f"only part of the lines could be appended to {path.name}", str(path))
        os.fsync(fd)
    finally:
        os.close(fd)
    if created:
        fsync_dir(path.parent)
