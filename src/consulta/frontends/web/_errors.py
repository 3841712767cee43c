"""Errors as the API returns them: one JSON shape (`ErrorBody`) for every 4xx and 5xx, mapped in one place, its
message and hint in the request's language (`request_lang`: `?lang=`, else `Accept-Language`) from the catalogs
(`api.*`)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.routing import iter_route_contexts
from starlette.exceptions import HTTPException

from ...i18n import normalize_lang, t
from ...runtime import ConfigError, ConflictError, ConsultaError, InvalidAnswerError, NotFoundError
from ._schemas import ErrorBody

__all__ = [
    "ERROR_RESPONSES",
    "JSON_BODY_RESPONSES",
    "STREAM_ERROR_RESPONSES",
    "ApiError",
    "LocalizedError",
    "Words",
    "install_error_handlers",
    "request_lang",
    "said",
]

Words = str | Callable[[str], str]
"""What a person reads: a text, or a function of their language giving it (e.g. `said(key, ...)`)."""


def said(key: str, **values: Any) -> Callable[[str], str]:
    """The catalog's message `key`, formatted with `values`, in the language it is read in."""
    return lambda lang: t(key, lang, **values)


def _in(words: Words | None, lang: str) -> str | None:
    return words if words is None or isinstance(words, str) else words(lang)


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
    """An error of the web layer itself (no session, an app tool's error turned into an HTTP status). `message` and
    `hint` are `Words`: given as functions of the language, the body is in the request's language."""

    def __init__(
        self, status: int, error_code: str, message: Words, *, hint: Words | None = None, field: str | None = None
    ) -> None:
        super().__init__(_in(message, "en"))
        self.status = status
        self.error_code = error_code
        self.message = message
        self.hint = hint
        self.field = field

    def body_in(self, lang: str) -> ErrorBody:
        """The error's body, in language `lang`."""
        return ErrorBody(
            error_code=self.error_code,
            message=_in(self.message, lang) or "",
            hint=_in(self.hint, lang),
            field=self.field,
        )

    @property
    def body(self) -> ErrorBody:
        return self.body_in("en")


class LocalizedError(ConsultaError):
    """A ConsultaError of the web layer whose words come from the catalogs (`said(...)`): e.g. a conflict found by a
    route. `kind` is the ConsultaError class it stands for (its status and code)."""

    def __init__(self, kind: type[ConsultaError], words: Callable[[str], str]) -> None:
        super().__init__(words("en"))
        self.kind = kind
        self.code = kind.code
        self._words = words

    def localized(self, lang: str) -> str:
        return self._words(lang)


def _respond(status: int, body: ErrorBody, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse(body.model_dump(exclude_none=True), status_code=status, headers=headers)


def error_response(request: Request, error: ApiError) -> JSONResponse:
    """The JSON response of `error` in the request's language (also for middleware, before any route)."""
    headers = {"WWW-Authenticate": "Bearer"} if error.status == 401 else None
    return _respond(error.status, error.body_in(request_lang(request)), headers)


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ConsultaError)
    async def consulta_error(request: Request, error: ConsultaError) -> JSONResponse:
        kind = error.kind if isinstance(error, LocalizedError) else type(error)
        status = next((s for cls, s in _STATUS.items() if issubclass(kind, cls)), 400)
        return _respond(status, ErrorBody(error_code=error.code, message=error.localized(request_lang(request))))

    @app.exception_handler(ApiError)
    async def api_error(request: Request, error: ApiError) -> JSONResponse:
        return error_response(request, error)

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, error: RequestValidationError) -> JSONResponse:
        lang = request_lang(request)
        if isinstance(error.body, bytes):  # FastAPI reads a body as JSON only when its Content-Type says it is
            return _respond(415, _not_json(request.headers.get("content-type"), lang))
        return _respond(422, _validation_body(error, lang))

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, error: HTTPException) -> JSONResponse:
        lang = request_lang(request)
        if error.status_code == 400 and error.__cause__ is not None:  # FastAPI's "error parsing the body"
            return _respond(422, _unreadable_json(error.__cause__, lang))
        headers = getattr(error, "headers", None)
        path = request.url.path
        if error.status_code == 405:
            allowed = _allowed_methods(request) or (headers or {}).get("Allow", "")
            headers = {**(headers or {}), "Allow": allowed}
            body = ErrorBody(
                error_code="method_not_allowed",
                message=t("api.method_not_allowed", lang, method=request.method, path=path, allowed=allowed),
            )
        elif error.status_code == 404:
            body = ErrorBody(error_code="not_found", message=t("api.not_found.path", lang, path=path))
        else:
            body = ErrorBody(error_code="http_error", message=str(error.detail))
        return _respond(error.status_code, body, headers)


def request_lang(request: Request) -> str:
    """The language a person reading this response reads: `?lang=`, else the first of `Accept-Language`, else en."""
    asked = (
        request.query_params.get("lang")
        or request.headers.get("accept-language", "").split(",")[0].split(";")[0].strip()
    )
    return normalize_lang(asked or None)


def _not_json(content_type: str | None, lang: str) -> ErrorBody:
    sent = content_type.split(";")[0].strip() if content_type else ""
    return ErrorBody(
        error_code="unsupported_media_type",
        message=t("api.not_json.typed", lang, type=sent) if sent else t("api.not_json.untyped", lang),
        hint=t("api.not_json.hint", lang),
    )


def _unreadable_json(cause: BaseException, lang: str) -> ErrorBody:
    """A JSON body the parser gave up on (not UTF-8, nested too deeply) rather than found a syntax error in."""
    reason = {UnicodeDecodeError: "api.invalid_json.not_utf8", RecursionError: "api.invalid_json.too_deep"}
    key = reason.get(type(cause))
    return ErrorBody(
        error_code="invalid_json",
        message=t(key, lang) if key else t("api.invalid_json.detail", lang, detail=type(cause).__name__),
        hint=t("api.json_hint", lang),
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


def _validation_body(error: RequestValidationError, lang: str) -> ErrorBody:
    """The first problem of a request FastAPI could not parse, in words, with the field it concerns (pydantic's own
    description of the problem, which is English, quoted in it)."""
    problems = list(error.errors())
    if not problems:
        return ErrorBody(error_code="invalid_request", message=t("api.invalid_request.malformed", lang))
    first = problems[0]
    if first.get("type") == "json_invalid":
        detail = (first.get("ctx") or {}).get("error", "") if lang == "en" else ""  # the parser's words are English
        return ErrorBody(
            error_code="invalid_json",
            message=t("api.invalid_json.detail", lang, detail=detail) if detail else t("api.invalid_json.plain", lang),
            hint=t("api.json_hint", lang),
        )
    locs = [[str(x) for x in p.get("loc", ()) if x not in ("body", "query", "path", "header")] for p in problems]
    loc, texts = locs[0], [_problem(first, lang)]
    # A value that fits no member of a union fails once per member, under the member's name: report the value.
    siblings = [p for p, other in zip(problems, locs, strict=True) if len(loc) > 1 and other[:-1] == loc[:-1]]
    if len(siblings) > 1:
        loc, texts = loc[:-1], list(dict.fromkeys(_problem(p, lang) for p in siblings))
    field = ".".join(loc) or None
    rest = len(problems) - max(1, len(siblings))
    more = t("api.invalid_request.more", lang, count=rest) if rest > 0 else ""
    text = " / ".join(texts)
    if field:
        message = t("api.invalid_request.field", lang, field=field, detail=text, more=more)
    elif first.get("type") == "model_attributes_type":
        value = json.dumps(first.get("input"), default=str)[:40]
        message = t("api.invalid_request.not_object", lang, value=value)
    else:
        message = t("api.invalid_request.detail", lang, detail=text, more=more)
    return ErrorBody(error_code="invalid_request", message=message, field=field)


_PROBLEMS = {
    "missing": "api.problem.missing",
    "string_type": "api.problem.string_type",
    "string_too_short": "api.problem.too_short",
    "string_too_long": "api.problem.too_long",
    "too_short": "api.problem.too_short",
    "too_long": "api.problem.too_long",
    "string_pattern_mismatch": "api.problem.pattern",
    "int_type": "api.problem.int",
    "int_parsing": "api.problem.int",
    "bool_type": "api.problem.bool",
    "bool_parsing": "api.problem.bool",
    "greater_than_equal": "api.problem.at_least",
    "less_than_equal": "api.problem.at_most",
    "literal_error": "api.problem.one_of",
    "enum": "api.problem.one_of",
    "list_type": "api.problem.list",
    "dict_type": "api.problem.object",
    "model_attributes_type": "api.problem.object",
    "model_type": "api.problem.object",
    "extra_forbidden": "api.problem.extra",
}
"""pydantic's problems a request may have, in the catalogs' words (pydantic's own are English)."""


def _problem(problem: Any, lang: str) -> str:
    """One problem of a request in `lang`: pydantic's words in English; the catalog's (its limits filled in) in
    another language, or the catalog's general words for a problem it does not word."""
    if lang == "en":
        return str(problem.get("msg", "invalid value")).removeprefix("Value error, ")
    ctx = problem.get("ctx") or {}
    limit = next((ctx[k] for k in ("min_length", "max_length", "ge", "le") if k in ctx), "")
    key = _PROBLEMS.get(str(problem.get("type")), "api.problem.invalid")
    return t(key, lang, limit=limit, expected=ctx.get("expected", ""))
