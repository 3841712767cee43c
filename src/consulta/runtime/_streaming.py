"""A reply as the model writes it: each model request's words published as `TextDelta` drafts while they stream.

What streams is only what a person may read. A response's text streams; a tool call's arguments never do, nor a
reply that is a JSON object (an app's structured reply, read by the app's code). Words meant for the model never
stream either: the draft holds back its last words until the words after them show they are not a hint, the
instructions, a refusal's reason or a tool's name repeated (the runtime's `model_words` check, run on the whole draft
as it grows); once the draft repeats such words, nothing more of it streams. The reply checks still judge the final
text: a draft is provisional, and the run's `ModelText` is the reply (see `TextDelta`).

A model streams when it can (`can_stream`); one that cannot answers each request whole, as before.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models import Model
from pydantic_ai.models.function import FunctionModel
from pydantic_ai.models.wrapper import WrapperModel

from ._claims import TurnFacts
from ._errors import ListenerError
from ._events import Event, TextDelta
from ._facts import _SPAN_CJK, _SPAN_WORDS, model_words

__all__ = ["ReplyDrafts", "can_stream", "shown_length"]

_log = logging.getLogger(__name__)

_TOKEN = re.compile(r"[A-Za-z0-9']+|[\u4e00-\u9fff]")


def can_stream(model: Model | Any) -> bool:
    """Whether `model` answers a request as a stream (pydantic-ai's `request_stream`): its own class implements it,
    or, for a function model, it was given a stream function. A model (or a wrapper around it) whose `streams` is
    False is asked for whole responses."""
    while True:
        if getattr(model, "streams", True) is False:
            return False
        if not isinstance(model, WrapperModel):
            break
        model = model.wrapped
    if isinstance(model, FunctionModel) and type(model).request_stream is FunctionModel.request_stream:
        return model.stream_function is not None
    return isinstance(model, Model) and type(model).request_stream is not Model.request_stream


def shown_length(draft: str) -> int:
    """How many characters of `draft` may be shown now: all but its last words, enough of them that words meant for
    the model (`model_words` finds runs of 6 Latin words or 10 CJK characters) are whole, and so found, before any of
    them is shown."""
    latin = cjk = 0
    for match in reversed(list(_TOKEN.finditer(draft))):
        if match.group(0).isascii():
            latin += 1
        else:
            cjk += 1
        if latin >= _SPAN_WORDS or cjk >= _SPAN_CJK:
            return match.start()
    return 0


def _text_of(response: ModelResponse) -> str:
    return "".join(p.content for p in response.parts if isinstance(p, TextPart))


@dataclass(kw_only=True)
class _Draft:
    """The draft of one model request: what was shown of it, and whether it may still stream."""

    run_id: str
    publish: Callable[[Event], None]
    facts: Callable[[], TurnFacts]
    shown: str = ""
    stopped: bool = False
    _facts: TurnFacts | None = field(default=None, repr=False)

    def update(self, text: str, *, done: bool = False) -> None:
        if self.stopped or not text.strip():
            return
        if text.lstrip().startswith(("{", "[")):  # a structured reply: the app's code reads it, not a person
            self.stopped = True
            return
        upto = len(text) if done else shown_length(text)
        if upto <= len(self.shown) and text.startswith(self.shown):
            return
        if self._facts is None:
            self._facts = self.facts()
        if model_words(text, self._facts) is not None:
            self.stopped = True  # the reply repeats words meant for the model: its checks will have it rewritten
            return
        new = text[:upto]
        if new.startswith(self.shown):
            self._say(TextDelta(run_id=self.run_id, offset=len(self.shown), text=new[len(self.shown) :]))
        else:  # the model's stream rewrote a part: the draft starts again
            self._say(TextDelta(run_id=self.run_id, offset=0, text=new))
        self.shown = new

    def _say(self, delta: TextDelta) -> None:
        try:
            self.publish(delta)
        except ListenerError:  # a draft is not worth the run: the reply itself reaches every listener
            _log.exception("A listener failed on a draft of run %s's reply", self.run_id)


@dataclass(kw_only=True)
class ReplyDrafts:
    """Streams the model requests of one run, publishing each one's words as drafts (see the module docstring).

    `facts`: the turn's facts from its conversation so far (what `model_words` needs), asked once per request that
    writes text; `stop`:
    whether the run was asked to stop (the stream is left at once; the engine ends the run)."""

    run_id: str
    publish: Callable[[Event], None]
    facts: Callable[[list[ModelMessage]], TurnFacts]
    stop: Callable[[], bool]

    async def stream(self, node: Any, ctx: Any) -> None:
        """Run `node` (pydantic-ai's model request node) as a stream under `ctx` (the run's graph context); the
        engine's run then goes on from the response it streamed."""
        messages = list(ctx.state.message_history)
        if not messages or messages[-1] is not node.request:
            messages.append(node.request)  # the request being answered: its tools' results are the turn's facts
        draft = _Draft(run_id=self.run_id, publish=self.publish, facts=lambda: self.facts(messages))
        async with node.stream(ctx) as events:
            async for _ in events:
                draft.update(_text_of(events.response))
                if self.stop():
                    return
            draft.update(_text_of(events.response), done=True)
