"""What goes wrong with a request about a person's test: `TestSessionError` and its kinds (not found, conflict,
invalid), each with a code, an HTTP status, the field at fault, and a message in the reader's language."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...i18n import catalog, normalize_lang, t
from ...runtime import ConflictError, ConsultaError, InvalidAnswerError, NotFoundError

__all__ = ["TestSessionError"]

# ---- errors -----------------------------------------------------------------------------------------------------


class TestSessionError(ConsultaError):
    """A request about a test that cannot be carried out; nothing was changed. `code` names it (the message key is
    `quiz.take.error.<code>`); `status` is its HTTP status; `field` the input at fault, if one is."""

    __test__ = False  # not a pytest class
    status = 400

    def __init__(self, code: str, message: str, *, field: str | None = None, **values: Any) -> None:
        super().__init__(message)
        self.code = code
        self.field = field
        self.values = values

    def localized(self, lang: str) -> str:
        key = f"quiz.take.error.{self.code}"
        if key not in catalog(normalize_lang(lang)):
            return str(self)
        return t(key, lang, **{k: _localized_value(v, lang) for k, v in self.values.items()})


def _localized_value(value: Any, lang: str) -> Any:
    return value.localized(lang) if isinstance(value, _Words) else value


@dataclass(frozen=True)
class _Words:
    """A value of an error message that has words of its own (`quiz.take.<key>` formatted with `values`)."""

    key: str
    values: Mapping[str, Any]

    def localized(self, lang: str) -> str:
        return t(f"quiz.take.{self.key}", lang, **self.values)


class _NotFound(TestSessionError, NotFoundError):
    status = 404


class _Conflict(TestSessionError, ConflictError):
    status = 409


class _Invalid(TestSessionError, InvalidAnswerError):
    status = 422


def _unknown_session(session_id: str) -> TestSessionError:
    return _NotFound(
        "unknown_test",
        f"No test {session_id!r} of yours: start a test, or open the one you are taking.",
        session=session_id,
    )
