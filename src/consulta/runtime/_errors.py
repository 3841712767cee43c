"""Errors of the runtime: the structured error a tool hands back to the model, and the errors people and front ends see."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..i18n import t


@dataclass(frozen=True, kw_only=True)
class Choice:
    """What the user could have meant, as a question the runtime asks itself (seed 001's `question`).

    A ToolError carrying a Choice is not shown to the model: the runtime opens a question with `options` (free text
    allowed), and when it is answered runs the same tool call again with `args_for_option[answer]` merged into its
    arguments; the answer counts as the user's words for grounding."""

    header: str
    question: str
    options: list[str]
    args_for_option: dict[str, dict[str, Any]] = field(default_factory=dict)
    header_key: str | None = None
    question_key: str | None = None
    """Message catalog keys: when the run's language has both, they (formatted with `values`) are asked instead of
    `header` and `question`."""
    values: dict[str, Any] = field(default_factory=dict)
    option_keys: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    """Each option's catalog key and values, in the order of `options`: when the run's language has them all, the
    options are asked in its words (an answer maps to the same arguments)."""


class ToolError(Exception):
    """A tool call that cannot be carried out, reported to the model in the seeds' shape.

    Raise it from a tool (or from domain code a tool calls); the runtime turns it into
    `{"ok": false, "error_code": ..., "message": ..., "_hint": ...}` (plus `field` when one argument is at fault)
    and the run goes on. Nothing the tool was about to change may have changed when it is raised.
    With a `choice`, a read or write tool's error becomes a question the runtime asks the user (see `Choice`).
    With a catalog `key` (and its `values`), the message is said in the language of the turn's words, since the
    person may read it as the reason nothing was changed; `message` is the English one.
    """

    def __init__(
        self,
        error_code: str,
        message: str,
        *,
        hint: str | None = None,
        field: str | None = None,
        choice: Choice | None = None,
        key: str | None = None,
        values: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.error_code = error_code
        self.message = message
        self.hint = hint
        self.field = field
        self.choice = choice
        # private names: subclasses keep words of their own in `key`, `values` and the like
        self._say_key = key
        self._say_values = dict(values or {})

    def message_in(self, lang: str) -> str:
        """The message in `lang`: the catalog's words when raised with a key and the message is still the one the
        key says in English (a caller that rewrote `message`, e.g. prefixed it, gets its own words back)."""
        if self._say_key is None or t(self._say_key, "en", **self._say_values) != self.message:
            return self.message
        return t(self._say_key, lang, **self._say_values)

    def to_result(self, lang: str = "en") -> dict[str, Any]:
        """The JSON result the model sees, its message in `lang` (see `message_in`)."""
        result: dict[str, Any] = {"ok": False, "error_code": self.error_code, "message": self.message_in(lang)}
        if self.field is not None:
            result["field"] = self.field
        if self.hint is not None:
            result["_hint"] = self.hint
        return result


class ConsultaError(Exception):
    """Base of the errors a person or a front end gets: the message says what went wrong and what to do.

    Raised with a catalog `key` (and the `values` its placeholders take) instead of a message, the error says its
    words in the reader's language (`localized`); `str()` is the English text."""

    code: str = "consulta_error"
    _catalog_key: str | None = None  # also for subclasses whose __init__ does not call this one
    _catalog_values: Mapping[str, Any] = {}

    def __init__(self, message: str = "", *, key: str | None = None, values: Mapping[str, Any] | None = None) -> None:
        # Private names: subclasses keep words of their own in `key`, `values` and the like.
        self._catalog_key = key
        self._catalog_values = dict(values or {})
        super().__init__(t(key, "en", **self._catalog_values) if key is not None else message)

    def localized(self, lang: str) -> str:
        """The message in language `lang` (`en`, `zh-CN`): the catalog's words when raised with a key."""
        if self._catalog_key is None:
            return str(self)
        return t(self._catalog_key, lang, **self._catalog_values)


class NotFoundError(ConsultaError):
    """An id (run, ask, plan, audit entry) that the store does not know."""

    code = "not_found"


class ConflictError(ConsultaError):
    """An action on something whose state does not allow it, e.g. answering an ask that is already closed."""

    code = "conflict"


class InvalidAnswerError(ConsultaError):
    """An answer whose shape does not fit the ask (wrong number of answers, an option that was not offered...)."""

    code = "invalid_answer"


class ConfigError(ConsultaError):
    """A setting that cannot be used (unknown model name, unreadable data directory, missing API key...)."""

    code = "config_error"


class ListenerError(ConsultaError):
    """A listener of the runtime's events raised (every listener heard the event first). Raised where the event was
    emitted: a run whose step emitted it fails with this message; a run that could not start is recorded failed."""

    code = "listener_failed"


class ModelFailed(ConsultaError):
    """The model (or the server behind it) could not answer a step: the run fails with what went wrong and what to
    do, in the person's language (`localized`), never the provider's raw error."""

    code = "model_failed"


def model_failure(error: BaseException) -> ModelFailed | None:
    """`error` as a `ModelFailed` when it is one of the model API's failures (pydantic-ai's categories), else None."""
    from pydantic_ai import exceptions as model_errors  # here: the CLI's start imports this module, not the engine

    if not isinstance(error, model_errors.ModelAPIError):
        return None
    values: dict[str, Any] = {"model": error.model_name or "the model"}
    if isinstance(error, model_errors.ModelContextWindowExceededError):
        key = "error.model.context_window"
    elif isinstance(error, model_errors.ModelAuthenticationError):
        key = "error.model.authentication"
    elif isinstance(error, model_errors.ModelNotFoundError):
        key = "error.model.not_found"
    elif isinstance(error, model_errors.ModelRateLimitError | model_errors.ModelQuotaExceededError):
        key = "error.model.rate_limited"
    elif isinstance(error, model_errors.ModelConnectionError | model_errors.ModelRequestTimeout):
        key = "error.model.unreachable"
    else:  # a server error, an unavailable server, a request it refused for another reason
        key = "error.model.refused"
        values["status"] = getattr(error, "status_code", None) or "no status"
    return ModelFailed(key=key, values=values)
