"""The tutor's part of the web API: the student's uploads (listed; one file uploaded as multipart/form-data, read in
a bounded stream) and a turn's cards (the instruction packet and the consultations, read from the store).

(No `from __future__ import annotations`: FastAPI reads the routes' annotations, which name the kit's local types.)"""

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from pydantic import BaseModel
from python_multipart.exceptions import FormParserError
from python_multipart.multipart import MultipartParser, parse_options_header

from ...i18n import catalog, normalize_lang, t
from ...runtime import NotFoundError, ToolError
from .._def import AppView, WebKit
from ._datasets import ACCEPTED_SUFFIXES, MAX_UPLOAD_BYTES
from ._turn import TurnView, turn_view
from ._uploads import FIELD, UploadedFile, UploadRefused, UploadWriter, list_uploads

__all__ = ["router"]

MULTIPART_SLACK = 64 * 1024
"""What a multipart body may hold besides the file itself (boundaries, part headers, small fields)."""
_STATUS = {"file_too_large": 413, "unsupported_file_type": 415, "unsupported_media_type": 415}
_NAMELESS = {"file_too_large": "tutor.web.error.body_too_large"}
"""The catalog's words for a refusal before the file's name is known (its code's own words name the file)."""
_FORM = {
    "type": "object",
    "properties": {FIELD: {"type": "string", "format": "binary", "minLength": 1}},
    "required": [FIELD],
}
_ENCODING = {FIELD: {"headers": {"Content-Disposition": {
    "description": "The file's name: it says its type (a suffix of `accepted` in GET /api/tutor/uploads).",
    "schema": {"type": "string"},
    "example": f'form-data; name="{FIELD}"; filename="survey.csv"',
}}}}  # fmt: skip
"""The upload's form, for the API's docs (the body is read by hand, in a bounded stream)."""
_RECENT_RUNS = 50
"""How far back the runs are searched for the turn an assistant's run belongs to."""


class Uploads(BaseModel):
    files: list[UploadedFile]
    max_bytes: int
    accepted: list[str]


class _Upload:
    """A multipart/form-data body read chunk by chunk: its part named `file` goes through an UploadWriter (so a
    refused name writes nothing and a body over the limit stops being read); other parts are skipped."""

    def __init__(self, folder: Path, boundary: bytes) -> None:
        self.folder = folder
        self.writer: UploadWriter | None = None
        self.saved: UploadedFile | None = None
        self.error: ToolError | None = None
        self._headers: dict[bytes, bytes] = {}
        self._field = b""
        self._value = b""
        self._in_file = False
        self._pending: list[bytes] = []
        self.parser = MultipartParser(
            boundary,
            callbacks={
                "on_part_begin": self._part_begin,
                "on_header_field": lambda data, start, end: self._header_bytes("_field", data[start:end]),
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
        self._headers[self._field.lower()] = self._value
        self._field, self._value = b"", b""

    def _headers_finished(self) -> None:
        _, params = parse_options_header(self._headers.get(b"content-disposition", b""))
        self._in_file = params.get(b"name") == FIELD.encode() and b"filename" in params
        if self._in_file and self.writer is None and self.saved is None and self.error is None:
            try:
                self.writer = UploadWriter(self.folder, _decoded(params[b"filename"]))
            except ToolError as error:
                self.error = error

    def _part_data(self, data: bytes, start: int, end: int) -> None:
        if self._in_file and self.writer is not None:
            self._pending.append(data[start:end])

    def _part_end(self) -> None:
        if self._in_file:
            self.flush()
        if self._in_file and self.writer is not None:
            writer, self.writer = self.writer, None
            try:
                self.saved = writer.commit()
            except ToolError as error:
                self.error = error
        self._in_file = False

    def flush(self) -> None:
        """Write what the parser has read of the file so far (the writer refuses what goes over the limit)."""
        chunks, self._pending = self._pending, []
        if self.writer is None or self.error is not None:
            return
        try:
            for chunk in chunks:
                self.writer.write(chunk)
        except ToolError as error:
            self.error, self.writer = error, None

    def feed(self, chunk: bytes) -> None:
        self.read += len(chunk)
        if self.read > MAX_UPLOAD_BYTES + MULTIPART_SLACK:  # whatever the parts: the body is too big to be one upload
            self.error = _too_large()
            return
        self.parser.write(chunk)
        self.flush()

    def close(self) -> None:
        if self.writer is not None:
            self.writer.abort()
            self.writer = None


def _decoded(raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


def router(kit: WebKit) -> APIRouter:
    """The routes under /api/tutor, with the web front end's host, principal and errors."""
    Host: Any = kit.host  # noqa: N806 - FastAPI dependency annotations
    Principal: Any = kit.principal  # noqa: N806
    ApiError = kit.error  # noqa: N806
    router = kit.api_router("tutor")

    def refused(error: ToolError) -> Exception:
        """An upload's refusal in the reader's language (see `_words`); its English hint in English only."""
        return ApiError(
            _STATUS.get(error.error_code, 422),
            error.error_code,
            _words(error),
            hint=lambda lang: error.hint if normalize_lang(lang) == "en" else None,
            field=error.field,
        )

    def _folder(host: AppView) -> Path:
        folder = host.data_path
        if folder is None:  # pragma: no cover - the tutor always has one
            raise ApiError(503, "no_uploads", lambda lang: t("tutor.web.error.no_uploads", lang))
        return folder

    @router.get("/uploads", summary="The student's uploaded files, and what an upload may be")
    async def uploads(host: Host, principal: Principal) -> Uploads:
        """`files`: name, size (bytes), modified (ISO 8601, UTC), by name; `max_bytes` and `accepted` (suffixes):
        the limits an upload is held to (a page checks them before sending; the server checks them again)."""
        files = await asyncio.to_thread(list_uploads, _folder(host.for_principal(principal)))
        return Uploads(files=files, max_bytes=MAX_UPLOAD_BYTES, accepted=list(ACCEPTED_SUFFIXES))

    @router.post(
        "/uploads",
        status_code=201,
        summary="Upload one dataset (multipart/form-data, part `file`)",
        responses={
            413: {**kit.responses[422], "description": "The file is over the upload limit; nothing was written."},
            415: {
                **kit.responses[422],
                "description": "Not a CSV, TSV or Excel file, or not a multipart/form-data body; nothing was written.",
            },
        },
        openapi_extra={
            "requestBody": {
                "required": True,
                "content": {"multipart/form-data": {"schema": _FORM, "encoding": _ENCODING}},
            }
        },
    )
    async def upload(request: Request, host: Host, principal: Principal) -> UploadedFile:
        """The file goes into this session's upload folder (a file of the same name is replaced), written atomically. Refused,
        with nothing written: 413 `file_too_large` (over the limit; a Content-Length over it is refused before the
        body is read, and the body stops being read once the file goes over), 415 `unsupported_file_type` (CSV, TSV
        or Excel only) or `unsupported_media_type` (not multipart/form-data), 422 `path_outside_uploads` (a name with a
        folder part or a leading dot), `missing_file` (no part `file`), `empty_file`."""
        folder = _folder(host.for_principal(principal))
        length = request.headers.get("content-length")
        if length is not None and length.isdigit() and int(length) > MAX_UPLOAD_BYTES + MULTIPART_SLACK:
            raise refused(_too_large())
        content_type, params = parse_options_header(request.headers.get("content-type"))
        if content_type != b"multipart/form-data" or not params.get(b"boundary"):
            raise refused(
                ToolError("unsupported_media_type", "This route reads a multipart/form-data body.", field=FIELD)
            )
        reader = _Upload(folder, params[b"boundary"])
        try:
            async for chunk in request.stream():
                await asyncio.to_thread(reader.feed, chunk)  # the disk writes (and the commit's fsync) off the loop
                if reader.error is not None:
                    break
            else:
                await asyncio.to_thread(reader.parser.finalize)
        except FormParserError as error:
            reader.error = reader.error or ToolError(
                "invalid_request", f"The multipart body could not be read: {error}", field=FIELD
            )
        finally:
            reader.close()
        if reader.error is not None:
            raise refused(reader.error)
        if reader.saved is None:
            raise refused(ToolError("missing_file", "The form has no file: send it in a part named file.", field=FIELD))
        return reader.saved

    @router.get("/turn", summary="A turn's cards: its instruction packet and consultations")
    async def turn(
        host: Host, principal: Principal, run_id: Annotated[str | None, Query(max_length=64)] = None
    ) -> TurnView | None:
        """The turn of run `run_id` (the orchestrator's run, or the assistant's run it handed over to), or the newest
        turn of this session (null before the first). 404 for a run not of this session."""
        return await asyncio.to_thread(_turn, host, principal, run_id)

    def _turn(host: Any, principal: str, run_id: str | None) -> TurnView | None:
        recent = host.runs(principal=principal, limit=_RECENT_RUNS)
        if run_id is None:
            return turn_view(host.store, recent[0], earlier=recent) if recent else None
        try:
            run = host.run(run_id, principal=principal)
        except NotFoundError as error:
            raise ApiError(404, "not_found", error.localized) from None
        return turn_view(host.store, run, earlier=recent)

    return router


def _words(error: ToolError) -> Callable[[str], str]:
    """A refusal's message in a language: the catalog's words for its code (the check's own English words only for
    a code the catalog has none for)."""
    if isinstance(error, UploadRefused):
        return error.localized
    key = _NAMELESS.get(error.error_code, f"tutor.web.error.{error.error_code}")
    limit = f"{MAX_UPLOAD_BYTES // (1024 * 1024)} MB"

    def words(lang: str) -> str:
        return (
            t(key, lang, detail=error.message, limit=limit) if key in catalog(normalize_lang(lang)) else error.message
        )

    return words


def _too_large() -> ToolError:
    """The body is too large (its file's name is not known yet)."""
    return ToolError("file_too_large", f"The upload is over {MAX_UPLOAD_BYTES // (1024 * 1024)} MB.", field=FIELD)
