"""What every app's uploads share, whatever the app accepts: a file written into a folder in chunks with its size
limit held while it is written, its content checked before it is put in place, put in place atomically (a refused or
broken upload leaves nothing behind: `FileUpload`); and one file read from a multipart/form-data request body in a
bounded stream (`receive_file`). The app says which names and contents it accepts and in what words it refuses
(the tutor's datasets, the modeling app's problem); a refusal is the app's own exception, or a `ToolError` with the
codes named below."""

from __future__ import annotations

import asyncio
import os
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any, Protocol

from ..runtime import ToolError

__all__ = ["MULTIPART_SLACK", "FileUpload", "Refuse", "UploadSink", "receive_file", "too_large", "zip_unpacked"]

MULTIPART_SLACK = 64 * 1024
"""What a multipart body may hold besides the file itself (boundaries, part headers, small fields)."""

Refuse = Callable[[str, str, str | None], Exception]
"""`(code, English message, hint)` → the app's refusal (`file_too_large`, `empty_file`)."""


def _mb(limit: int) -> str:
    return f"{limit // (1024 * 1024)} MB" if limit >= 1024 * 1024 else f"{max(limit // 1024, 1)} kB"


class FileUpload:
    """One file being written into `folder` under the (already accepted) name `name`: `write` puts chunks into a
    hidden temporary file in the folder, refusing the chunk that takes it over `limit` bytes; `commit` refuses an
    empty file, runs `check(temporary path, name)` (the app's content check: it raises the app's refusal) and
    renames it to `folder/target` (`name` when not given) atomically, replacing an earlier file of that name.
    Used as a context manager, an upload not committed is removed."""

    def __init__(
        self,
        folder: Path,
        name: str,
        *,
        limit: int,
        refuse: Refuse,
        check: Callable[[Path, str], None] | None = None,
        target: str | None = None,
    ) -> None:
        self.name = name
        self.folder = Path(folder)
        self.limit = limit
        self.size = 0
        self._refuse = refuse
        self._check = check
        self._target = target or name
        fd, temp = tempfile.mkstemp(dir=self.folder, prefix=f".{name}.", suffix=".part")
        self._file = os.fdopen(fd, "wb")
        self.temp = Path(temp)

    def write(self, chunk: bytes) -> None:
        self.size += len(chunk)
        if self.size > self.limit:
            self.abort()
            raise self._refuse("file_too_large", f"{self.name} is over {_mb(self.limit)}.", None)
        self._file.write(chunk)

    def commit(self) -> Path:
        """The file, checked and in place (its path); the app's refusal, nothing left, when it is not accepted."""
        if self.size == 0:
            self.abort()
            raise self._refuse("empty_file", f"{self.name} is empty.", "Upload a file with the data in it.")
        self._file.flush()
        try:
            if self._check is not None:
                self._check(self.temp, self.name)
        except BaseException:
            self.abort()
            raise
        os.fsync(self._file.fileno())
        self._file.close()
        target = self.folder / self._target
        os.replace(self.temp, target)
        return target

    def abort(self) -> None:
        """Drop what was written (idempotent)."""
        if not self._file.closed:
            self._file.close()
        self.temp.unlink(missing_ok=True)

    def __enter__(self) -> FileUpload:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        if self.temp.exists():
            self.abort()


def zip_unpacked(path: Path) -> tuple[int, int]:
    """How many members the zip archive at `path` has and how many bytes they unpack to, as its directory declares
    them (Python's zipfile never unpacks a member past its declared size): what a zipped upload (an Excel workbook)
    is bounded by before any library unpacks it, since a few kB can unpack to gigabytes. zipfile.BadZipFile (or
    OSError) when it is not a zip archive."""
    with zipfile.ZipFile(path) as archive:
        members = archive.infolist()
        return len(members), sum(member.file_size for member in members)


class UploadSink(Protocol):
    """Where `receive_file` writes the file (a `FileUpload`, or an app's writer over one)."""

    def write(self, chunk: bytes) -> None: ...

    def commit(self) -> Any: ...

    def abort(self) -> None: ...


class _Multipart:
    """A multipart/form-data body read chunk by chunk: its part named `field` (with a file name) goes to the sink
    `open(file name)` makes (so a refused name writes nothing and a body over the limit stops being read); other
    parts are skipped."""

    def __init__(self, boundary: bytes, open_sink: Callable[[str], UploadSink], *, field: str, limit: int) -> None:
        from python_multipart.multipart import MultipartParser

        self.open_sink = open_sink
        self.field = field
        self.limit = limit
        self.sink: UploadSink | None = None
        self.saved: Any = None
        self.error: Exception | None = None
        self._headers: dict[bytes, bytes] = {}
        self._name = b""
        self._value = b""
        self._in_file = False
        self._pending: list[bytes] = []
        self.parser = MultipartParser(
            boundary,
            callbacks={
                "on_part_begin": self._part_begin,
                "on_header_field": lambda data, start, end: self._header_bytes("_name", data[start:end]),
                "on_header_value": lambda data, start, end: self._header_bytes("_value", data[start:end]),
                "on_header_end": self._header_end,
                "on_headers_finished": self._headers_finished,
                "on_part_data": self._part_data,
                "on_part_end": self._part_end,
            },
        )
        self.read = 0

    def _part_begin(self) -> None:
        self._headers = {}

    def _header_bytes(self, which: str, data: bytes) -> None:
        setattr(self, which, getattr(self, which) + data)

    def _header_end(self) -> None:
        self._headers[self._name.lower()] = self._value
        self._name, self._value = b"", b""

    def _headers_finished(self) -> None:
        from python_multipart.multipart import parse_options_header

        _, params = parse_options_header(self._headers.get(b"content-disposition", b""))
        self._in_file = params.get(b"name") == self.field.encode() and b"filename" in params
        if self._in_file and self.sink is None and self.saved is None and self.error is None:
            try:
                self.sink = self.open_sink(_decoded(params[b"filename"]))
            except Exception as error:  # the app's refusal of the name
                self.error = error

    def _part_data(self, data: bytes, start: int, end: int) -> None:
        if self._in_file and self.sink is not None:
            self._pending.append(data[start:end])

    def _part_end(self) -> None:
        if self._in_file:
            self.flush()
        if self._in_file and self.sink is not None:
            sink, self.sink = self.sink, None
            try:
                self.saved = sink.commit()
            except Exception as error:
                self.error = error
        self._in_file = False

    def flush(self) -> None:
        """Write what the parser has read of the file so far (the sink refuses what goes over its limit)."""
        chunks, self._pending = self._pending, []
        if self.sink is None or self.error is not None:
            return
        try:
            for chunk in chunks:
                self.sink.write(chunk)
        except Exception as error:
            self.error, self.sink = error, None

    def feed(self, chunk: bytes) -> None:
        self.read += len(chunk)
        if self.read > self.limit + MULTIPART_SLACK:  # whatever the parts: the body is too big to be one upload
            self.error = too_large(self.limit, self.field)
            return
        self.parser.write(chunk)
        self.flush()

    def close(self) -> None:
        if self.sink is not None:
            self.sink.abort()
            self.sink = None


def _decoded(raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


def too_large(limit: int, field: str) -> ToolError:
    """The body is too large (its file's name is not known yet): `file_too_large`."""
    return ToolError("file_too_large", f"The upload is over {_mb(limit)}.", field=field)


async def receive_file(request: Any, open_sink: Callable[[str], UploadSink], *, field: str, limit: int) -> Any:
    """The file of a multipart/form-data request (a Starlette `Request`), part `field`, written through the sink
    `open_sink(file name)` makes, read in a bounded stream (disk writes off the event loop); what the sink's
    `commit` returned. Refused, nothing written: the sink's (the app's) refusal, or a ToolError `file_too_large`
    (a Content-Length or a body over `limit` + the multipart's slack), `unsupported_media_type` (not
    multipart/form-data), `invalid_request` (a body that is not multipart), `missing_file` (no part `field`)."""
    from python_multipart.exceptions import FormParserError
    from python_multipart.multipart import parse_options_header

    length = request.headers.get("content-length")
    if length is not None and length.isdigit() and int(length) > limit + MULTIPART_SLACK:
        raise too_large(limit, field)
    content_type, params = parse_options_header(request.headers.get("content-type"))
    if content_type != b"multipart/form-data" or not params.get(b"boundary"):
        raise ToolError("unsupported_media_type", "This route reads a multipart/form-data body.", field=field)
    reader = _Multipart(params[b"boundary"], open_sink, field=field, limit=limit)
    try:
        async for chunk in request.stream():
            await asyncio.to_thread(reader.feed, chunk)  # the disk writes (and the commit's fsync) off the loop
            if reader.error is not None:
                break
        else:
            await asyncio.to_thread(reader.parser.finalize)
    except FormParserError as error:
        reader.error = reader.error or ToolError(
            "invalid_request", f"The multipart body could not be read: {error}", field=field
        )
    finally:
        reader.close()
    if reader.error is not None:
        raise reader.error
    if reader.saved is None:
        raise ToolError("missing_file", f"The form has no file: send it in a part named {field}.", field=field)
    return reader.saved
