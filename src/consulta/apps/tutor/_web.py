"""The tutor's part of the web API: the student's uploads (listed; one file uploaded as multipart/form-data, read in
a bounded stream) and a turn's cards (the instruction packet and the consultations, read from the store).

(No `from __future__ import annotations`: FastAPI reads the routes' annotations, which name the kit's local types.)"""

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from pydantic import BaseModel

from ...i18n import catalog, normalize_lang, t
from ...runtime import NotFoundError, ToolError
from .._def import AppView, WebKit
from .._uploads import receive_file
from ._datasets import ACCEPTED_SUFFIXES, MAX_UPLOAD_BYTES
from ._turn import TurnView, turn_view
from ._uploads import FIELD, UploadedFile, UploadRefused, UploadWriter, list_uploads

__all__ = ["router"]

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
                "description": "Not a CSV, TSV, text or Excel file, or not a multipart/form-data body; nothing was written.",
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
        body is read, and the body stops being read once the file goes over), 415 `unsupported_file_type` (CSV, TSV, text
        or Excel only) or `unsupported_media_type` (not multipart/form-data), 422 `path_outside_uploads` (a name with a
        folder part or a leading dot), `missing_file` (no part `file`), `empty_file`."""
        folder = _folder(host.for_principal(principal))
        try:
            saved: UploadedFile = await receive_file(
                request, lambda name: UploadWriter(folder, name), field=FIELD, limit=MAX_UPLOAD_BYTES
            )
        except ToolError as error:
            raise refused(error) from None
        return saved

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
