"""What makes a file unusable as an inventory, said in one line in the reader's language (`InventoryFileError`), and
the limits a file must keep within."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from consulta.i18n import LANGUAGES, PerLanguage, catalog, normalize_lang
from consulta.runtime import ConsultaError, ToolError

__all__ = [
    "MAX_INVENTORY_BYTES",
    "MAX_INVENTORY_RECORDS",
    "MAX_VALUES",
    "InventoryFileError",
    "said_by_pydantic",
    "too_large",
]

MAX_INVENTORY_BYTES = 2 * 1024 * 1024
"""ln2's limit on the size of an inventory file, checked with `os.stat` before a byte is read. A file is parsed on
every read (about 1 s per 250 kB on a busy 2-core machine): a bigger one would keep a person waiting minutes."""
MAX_INVENTORY_RECORDS = 10_000
"""ln2's limit on the records of an inventory, counted on the text before it is parsed (and again once parsed)."""
MAX_VALUES = 100 * MAX_INVENTORY_RECORDS
"""The values a loaded document may hold, aliases expanded (a few `&anchor`/`*alias` pairs can make billions)."""


def _say(key: str, lang: str, values: Mapping[str, Any]) -> str:
    # Always formatted (`i18n.t` leaves a text without values as it is): the catalog's `{{`, `}}` are literal braces.
    return catalog(normalize_lang(lang))[key].format(**values)


class InventoryFileError(ToolError, ConsultaError):
    """A file that cannot be used as an inventory: missing, unreadable, too large, not YAML text, or not a consistent
    inventory.

    Its words are catalog keys (`ln2.input.<problem>` and `ln2.input.<problem>.fix`, with `values`): `str()` is one
    English line naming the file, the line when known, what is wrong and what to do; `localized(lang)` is that line
    in `lang`. `path`, `line`, `problem` and `fix` (English) hold the parts. It is a ToolError
    (`inventory_file_error`, the fix as its hint) so a tool reports it to the model, and a ConsultaError so a front
    end shows it as a message, never as a traceback.
    """

    code = "inventory_file_error"

    def __init__(
        self,
        source: str,
        problem: str,
        *,
        fix: str | None = None,
        line: int | None = None,
        path: Path | None = None,
        **values: Any,
    ) -> None:
        self.source = source
        self.problem_key = f"ln2.input.{problem}"
        self.fix_key = f"ln2.input.{fix or problem + '.fix'}"
        self.values = values
        self.line = line
        self.path = path
        self.problem = self._problem("en")
        self.fix = self._fix("en")
        super().__init__("inventory_file_error", self._message("en"), hint=self.fix)

    def _said(self, lang: str) -> dict[str, Any]:
        return {k: v.said_in(lang) if isinstance(v, PerLanguage) else v for k, v in self.values.items()}

    def _problem(self, lang: str) -> str:
        return _say(self.problem_key, lang, self._said(lang))

    def _fix(self, lang: str) -> str:
        return _say(self.fix_key, lang, self._said(lang))

    def _message(self, lang: str) -> str:
        where = _say("ln2.input.where", lang, {"line": self.line}) if self.line else ""
        return _say("ln2.input.message", lang, {"file": self.source, "where": where, "problem": self._problem(lang)})

    def localized(self, lang: str) -> str:
        return _say("ln2.input.line", lang, {"message": self._message(lang), "fix": self._fix(lang)})

    def __str__(self) -> str:
        return self.localized("en")


def said_by_pydantic(error_type: str, message: str, context: Mapping[str, Any]) -> PerLanguage | str:
    """A pydantic error's words in every language: the catalog's for its type, else its own (English) message."""
    key = f"ln2.input.detail.{error_type}"
    if key not in catalog("en"):
        return message
    return PerLanguage({lang: _say(key, lang, context) for lang in LANGUAGES})


def _size_text(size: int) -> str:
    return f"{size / (1024 * 1024):.1f} MB" if size >= 1024 * 1024 else f"{max(size // 1024, 1)} kB"


def too_large(source: str, size: int, path: Path | None) -> InventoryFileError:
    return InventoryFileError(
        source, "too_large", path=path, size=_size_text(size), limit=_size_text(MAX_INVENTORY_BYTES)
    )
