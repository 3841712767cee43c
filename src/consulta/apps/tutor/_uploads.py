"""A student's file put into the upload folder by a front end (web, desktop, MCP): checked with the folder's own
rules (a plain file name, an accepted type, at most MAX_UPLOAD_BYTES) before a byte is written, counted while it is
written, and put in place atomically — a refused or broken upload leaves nothing behind."""

from __future__ import annotations

import os
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType

from pydantic import BaseModel

from ...runtime import ToolError
from ._datasets import MAX_UPLOAD_BYTES, check_file_name, check_file_size, check_file_type, uploaded_files

__all__ = ["FIELD", "UploadWriter", "UploadedFile", "check_upload", "list_uploads", "save_upload"]

FIELD = "file"
"""The field an upload's errors name (the file a person picked)."""


class UploadedFile(BaseModel):
    """A file of the upload folder."""

    name: str
    size: int
    modified: str
    """When it was last written (ISO 8601, UTC)."""


def _described(path: Path) -> UploadedFile:
    stat = path.stat()
    return UploadedFile(name=path.name, size=stat.st_size, modified=datetime.fromtimestamp(stat.st_mtime, UTC).isoformat())


def list_uploads(folder: Path) -> list[UploadedFile]:
    """The folder's files, by name."""
    return [_described(folder / name) for name in uploaded_files(folder)]


def check_upload(name: str | None, size: int | None = None) -> str:
    """`name` if a file of that name (and `size` bytes, when known) may be uploaded; else ToolError:
    `missing_file_name`, `path_outside_uploads`, `unsupported_file_type`, `file_too_large`."""
    if not name:
        raise ToolError("missing_file_name", "The upload has no file name.", hint="Pick a file to upload.", field=FIELD)
    check_file_name(name, field=FIELD)
    check_file_type(name, field=FIELD)
    if size is not None:
        check_file_size(name, size, field=FIELD)
    return name


class UploadWriter:
    """One upload being written into `folder` as `name` (checked at once: nothing is written for a refused name).
    `write` chunks into a hidden temporary file, refusing the chunk that takes it over the limit; `commit` puts it
    in place atomically (replacing an earlier file of that name). Used as a context manager, an upload not committed
    is removed."""

    def __init__(self, folder: Path, name: str | None, *, limit: int = MAX_UPLOAD_BYTES) -> None:
        self.name = check_upload(name)
        self.folder = folder
        self.limit = limit
        self.size = 0
        fd, temp = tempfile.mkstemp(dir=folder, prefix=f".{self.name}.", suffix=".part")
        self._file = os.fdopen(fd, "wb")
        self._temp = Path(temp)

    def write(self, chunk: bytes) -> None:
        self.size += len(chunk)
        if self.size > self.limit:
            self.abort()
            raise ToolError("file_too_large", f"{self.name} is over {self.limit // (1024 * 1024)} MB.", field=FIELD)
        self._file.write(chunk)

    def commit(self) -> UploadedFile:
        if self.size == 0:
            self.abort()
            raise ToolError("empty_file", f"{self.name} is empty.", hint="Upload a file with the data in it.", field=FIELD)
        self._file.flush()
        os.fsync(self._file.fileno())
        self._file.close()
        target = self.folder / self.name
        os.replace(self._temp, target)
        return _described(target)

    def abort(self) -> None:
        """Drop what was written (idempotent)."""
        if not self._file.closed:
            self._file.close()
        self._temp.unlink(missing_ok=True)

    def __enter__(self) -> UploadWriter:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        if self._temp.exists():
            self.abort()


def save_upload(folder: Path, name: str | None, data: bytes) -> UploadedFile:
    """Put `data` in the upload folder as `name` (the checks of `UploadWriter`)."""
    check_upload(name, len(data))
    with UploadWriter(folder, name) as writer:
        writer.write(data)
        return writer.commit()
