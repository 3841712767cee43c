"""Errors as the API returns them: one JSON shape (`ErrorBody`) for every 4xx and 5xx, mapped in one place."""

from __future__ import annotations

import json

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.routing import iter_route_contexts
from starlette.exceptions import HTTPException

from ...i18n import normalize_lang
from ...runtime import ConfigError, ConflictError, ConsultaError, InvalidAnswerError, NotFoundError
from ._schemas import ErrorBody

__all__ = [
    "ERROR_RESPONSES",
    "JSON_BODY_RESPONSES",
    "STREAM_ERROR_RESPONSES",
    "ApiError",
    "install_error_handlers",
    "request_lang",
]


_STATUS: dict[type[ConsultaError], int] = {
    NotFoundError: 404,
    ConflictError: 409,
    InvalidAnswerError: 422,
    ConfigError: 503,
}

ERROR_RESPONSES: dict[int | str, dict[str, object]] = {
    code: {"model": ErrorBody, "description": text}
    for code, text in (
        (401, "No session: send `Authorization: Bearer <token>` (POST /api/sessions) or the session cookie."),
        (404, "Unknown id, or one that belongs to another session."),
        (409, "The ask is already closed (or the state does not allow the action)."),
        (422, "Malformed request or answer; nothing was changed."),
    )
}

JSON_BODY_RESPONSES: dict[int | str, dict[str, object]] = {
    415: {"model": ErrorBody, "description": "The body is not JSON (send it with `Content-Type: application/json`)."},
}
"""The errors a route reading a JSON body adds (an unparsable body is a 422 `invalid_json`)."""

# A streaming route's errors are still JSON (FastAPI would list them under the stream's media type).
STREAM_ERROR_RESPONSES: dict[int | str, dict[str, object]] = {
    code: {
        "description": ERROR_RESPONSES[code]["description"],
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}},
    }
    for code in (401, 404, 409, 422)
}


class ApiError(Exception):
    """An error of the web layer itself (no session, an app tool's error turned into an HTTP status)."""

    def __init__(
        self, status: int, error_code: str, message: str, *, hint: str | None = None, field: str | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.body = ErrorBody(error_code=error_code, message=message, hint=hint, field=field)


def _respond(status: int, body: ErrorBody, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse(body.model_dump(exclude_none=True), status_code=status, headers=headers)


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ConsultaError)
    async def consulta_error(request: Request, error: ConsultaError) -> JSONResponse:
        status = next((s for cls, s in _STATUS.items() if isinstance(error, cls)), 400)
        return _respond(status, ErrorBody(error_code=error.code, message=error.localized(request_lang(request))))

    @app.exception_handler(ApiError)
    async def api_error(_: Request, error: ApiError) -> JSONResponse:
        headers = {"WWW-Authenticate": "Bearer"} if error.status == 401 else None
        return _respond(error.status, error.body, headers)

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, error: RequestValidationError) -> JSONResponse:
        if isinstance(error.body, bytes):  # FastAPI reads a body as JSON only when its Content-Type says it is
            return _respond(415, _not_json(request.headers.get("content-type")))
        return _respond(422, _validation_body(error))

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, error: HTTPException) -> JSONResponse:
        if error.status_code == 400 and error.__cause__ is not None:  # FastAPI's "error parsing the body"
            return _respond(422, _unreadable_json(error.__cause__))
        headers = getattr(error, "headers", None)
        if error.status_code == 405:
            headers = {**(headers or {}), "Allow": _allowed_methods(request) or (headers or {}).get("Allow", "")}
        code = {404: "not_found", 405: "method_not_allowed"}.get(error.status_code, "http_error")
        return _respond(error.status_code, ErrorBody(error_code=code, message=str(error.detail)), headers)


def request_lang(request: Request) -> str:
    """The language a person reading this response reads: `?lang=`, else the first of `Accept-Language`, else en."""
    asked = (
        request.query_params.get("lang")
        or request.headers.get("accept-language", "").split(",")[0].split(";")[0].strip()
    )
    return normalize_lang(asked or None)


def _not_json(content_type: str | None) -> ErrorBody:
    sent = f"a {content_type.split(';')[0].strip()} body" if content_type else "a body without a Content-Type"
    return ErrorBody(
        error_code="unsupported_media_type",
        message=f"This route reads a JSON body, and the request sent {sent}.",
        hint="Send the body as JSON with `Content-Type: application/json`.",
    )


def _unreadable_json(cause: BaseException) -> ErrorBody:
    """A JSON body the parser gave up on (not UTF-8, nested too deeply) rather than found a syntax error in."""
    reason = {UnicodeDecodeError: "it is not UTF-8 text", RecursionError: "it is nested too deeply"}.get(
        type(cause), type(cause).__name__
    )
    return ErrorBody(
        error_code="invalid_json", message=f"The request body is not valid JSON: {reason}.", hint=_JSON_HINT
    )


def _allowed_methods(request: Request) -> str:
    """Every method some route of the request's path takes (Starlette names only the first route's)."""
    path = request.scope["path"]
    methods: set[str] = set()
    for route in iter_route_contexts(request.app.router.routes):  # the included routers' routes too
        regex = getattr(route, "path_regex", None)
        if route.methods and regex is not None and regex.match(path):
            methods |= route.methods
    return ", ".join(sorted(methods))


_JSON_HINT = "Send a JSON object with the fields the route documents (see /docs)."


def _validation_body(error: RequestValidationError) -> ErrorBody:
    """The first problem of a request FastAPI could not parse, in words, with the field it concerns."""
    problems = list(error.errors())
    if not problems:
        return ErrorBody(error_code="invalid_request", message="The request is malformed.")
    first = problems[0]
    if first.get("type") == "json_invalid":
        detail = (first.get("ctx") or {}).get("error", "")
        return ErrorBody(
            error_code="invalid_json",
            message=f"The request body is not valid JSON{': ' + str(detail) if detail else ''}.",
            hint=_JSON_HINT,
        )
    locs = [[str(x) for x in p.get("loc", ()) if x not in ("body", "query", "path", "header")] for p in problems]
    loc, texts = locs[0], [str(first.get("msg", "invalid value"))]
    # A value that fits no member of a union fails once per member, under the member's name: report the value.
    siblings = [p for p, other in zip(problems, locs, strict=True) if len(loc) > 1 and other[:-1] == loc[:-1]]
    if len(siblings) > 1:
        loc, texts = loc[:-1], [str(p.get("msg")) for p in siblings]
    field = ".".join(loc) or None
    rest = len(problems) - max(1, len(siblings))
    more = f" (and {rest} more problem(s))" if rest > 0 else ""
    text = " / ".join(t.removeprefix("Value error, ") for t in texts)
    if field:
        message = f"{field}: {text}{more}."
    elif first.get("type") == "model_attributes_type":
        message = f"The request body must be a JSON object, not {json.dumps(first.get('input'), default=str)[:40]}."
    else:
        message = f"{text}{more}."
    return ErrorBody(error_code="invalid_request", message=message, field=field)
