"""Evidence for grounded writes: what the user said (prompts and answers) and what the data showed (read results).

Small models invent required arguments instead of asking. Before a write is staged, the agent's PlanExecutor checks
its key arguments against this evidence and, when one is a guess, refuses the call with `ungrounded_argument`, whose
hint tells the model to ask with `question`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

__all__ = ["Evidence", "mentions"]


def _norm(text: str) -> str:
    return " ".join(text.casefold().split())


def mentions(corpus: str, value: object) -> bool:
    """Whether `value` is mentioned in `corpus`: a number as a whole number, text case-insensitively at word edges
    (ASCII letters and digits; any other character, CJK included, is an edge)."""
    if isinstance(value, bool) or value is None:
        return False
    corpus = _norm(corpus)
    if isinstance(value, int | float):
        return re.search(rf"(?<![\d.]){re.escape(str(value))}(?!\d|\.\d)", corpus) is not None
    text = _norm(str(value))
    if not text:
        return False
    # Word edges are ASCII letters and digits only: Chinese has no spaces ("取一管K562" mentions K562).
    return re.search(rf"(?<![a-z0-9_]){re.escape(text)}(?![a-z0-9_])", corpus) is not None


@dataclass(frozen=True, kw_only=True)
class Evidence:
    """The user's words and the data the run has seen, as normalised text."""

    user_texts: tuple[str, ...] = ()
    answers: tuple[str, ...] = ()
    """Answers the user gave to questions (each raw answer value on its own)."""
    data_texts: tuple[str, ...] = ()
    _user: str = field(default="", init=False, repr=False)
    _data: str = field(default="", init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_user", _norm("\n".join((*self.user_texts, *self.answers))))
        object.__setattr__(self, "_data", _norm("\n".join(self.data_texts)))

    def said_by_user(self, value: object) -> bool:
        return mentions(self._user, value)

    def answered(self, value: object) -> bool:
        """Whether the user picked or typed exactly `value` as an answer to a question."""
        return any(_norm(a) == _norm(str(value)) for a in self.answers)

    def seen_in_data(self, value: object) -> bool:
        return mentions(self._data, value)

    @staticmethod
    def data_text(result: object) -> str:
        return result if isinstance(result, str) else json.dumps(result, ensure_ascii=False, default=str)
