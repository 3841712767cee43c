"""Tool behaviour as wrappers around a tool's execution, composed per tool in the manner of pydantic-ai's toolset
wrappers (`WrapperToolset`, `ApprovalRequiredToolset`): each wrapper gets the call and the rest of the chain, and may
answer in the tool's place, change the arguments, or act on the result.

- `Recorded`: every call is told to the run's record (started, returned, with its duration).
- `ErrorsAsResults`: a ToolError is the tool's result in the seeds' shape (or, for a write tool's `Choice`, a question
  the runtime asks the user, the call run again with the answer); any other exception is `tool_exception`.
- `AskDeferral` (ask tools): the run pauses on an Ask instead of running the tool.
- `RepeatGuard`: a call repeating one of this turn is answered `repeated_call`; too many, and the run stops as stuck.
- `ChangeRequestFilter` (write tools): refused `not_a_change_request` when the turn's words ask for no change.
- `Approval` (write tools): what the tool returns is staged as a plan for approval, with the turn's evidence.
- `Grounding` (write tools): arguments the user's words do not support are dropped by the agent's executor.
- `InToolCall` (read tools): the tool runs with `CURRENT_TOOL_CALL` set (nested runs share the run's usage).

`chain_for(tool)` is the composition the engine uses for each tool.
"""

from __future__ import annotations

import json
import re
import time
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel
from pydantic_ai import CallDeferred, RunContext
from pydantic_ai.messages import (
    ModelMessage,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.tools import ToolDefinition

from ..i18n import catalog, has_chinese, normalize_lang, t
from ._agent import Agent
from ._claims import reply_lang
from ._errors import ConsultaError, ToolError
from ._facts import echoes, model_words, unfounded_names
from ._grounding import Evidence
from ._messages import (
    count_steps,
    person_declined_this_turn,
    repeats_earlier_call,
    repeats_this_turn,
    this_turn,
    turn_words,
)
from ._store import utcnow
from ._tools import CURRENT_TOOL_CALL, ToolCallContext, ToolDef
from ._turn_facts import facts_of

if TYPE_CHECKING:
    from ._run_log import RunLog

__all__ = [
    "ASK_METADATA_KEY",
    "QUESTION_KIND",
    "RERUN_KEY",
    "Approval",
    "AskDeferral",
    "ChangeRequestFilter",
    "ErrorsAsResults",
    "Grounding",
    "InToolCall",
    "ModelStuck",
    "Next",
    "Recorded",
    "RepeatGuard",
    "RunDeps",
    "ToolCallSite",
    "ToolWrapper",
    "chain_for",
    "compose",
    "evidence_from",
    "raw_answers",
    "tool_exception_result",
]

ASK_METADATA_KEY = "consulta_ask"


QUESTION_KIND = "question"
"""The ask kind of seed 001's question: what the runtime opens itself for a write tool's `Choice`."""


RERUN_KEY = "rerun"
"""Where a runtime-opened question's payload keeps the call to run again: its tool call id, name, arguments and the
arguments each option stands for. The re-run's deferred metadata holds the user's answers under the same key."""


def evidence_from(messages: list[ModelMessage], agent: Agent, prompt: str | None = None) -> Evidence:
    """What the user said and what read tools returned, from the conversation so far. The replies the person was
    shown in earlier turns count as data (a follow-up names "the one at position 28" of the box a reply showed); they
    were held to the facts of their own turns."""
    user: list[str] = [prompt] if prompt else []
    answers: list[str] = []
    data: list[str] = []
    earlier = len(messages) - len(this_turn(messages))
    for i, message in enumerate(messages):
        if isinstance(message, ModelResponse):
            if i < earlier:
                data.extend(p.content for p in message.parts if isinstance(p, TextPart) and p.content.strip())
            continue
        for part in message.parts:
            if isinstance(part, UserPromptPart) and isinstance(part.content, str):
                user.append(part.content)
            elif isinstance(part, ToolReturnPart):
                tool = agent.tool(part.tool_name)
                if tool is None:
                    continue
                if tool.kind == "ask":
                    answers.extend(raw_answers(part.content))
                elif tool.kind == "read":
                    data.append(Evidence.data_text(part.content))
    return Evidence(user_texts=tuple(user), answers=tuple(answers), data_texts=tuple(data))


def raw_answers(content: Any) -> list[str]:
    """The raw answers in an ask tool's result (a question's `raw_answers`, flattened): the user's own words."""
    if isinstance(content, str):
        try:
            content = json.loads(content)
        except ValueError:
            return [content]
    if not isinstance(content, dict) or not content.get("ok"):
        return []
    raw = (content.get("result") or {}).get("raw_answers") or []
    flat: list[str] = []
    for value in raw:
        flat.extend(value if isinstance(value, list) else [value])
    return [str(v) for v in flat]


@dataclass(kw_only=True)
class RunDeps:
    """Per-run state handed to the capability (pydantic-ai's `deps`)."""

    agent: Agent
    instructions: str
    """The agent's instructions for this run (the same at every step)."""
    prompt: str | None
    log: RunLog
    """The run's record: tool calls and steps are told to it."""
    stage: Callable[[str, str, dict[str, Any], Evidence], Awaitable[dict[str, Any]]]

    @property
    def run_id(self) -> str:
        return self.log.run.id


def _result_of(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", exclude_none=True)
    return value


def tool_exception_result(tool_name: str, error: Exception) -> dict[str, Any]:
    """The seeds' `tool_exception` result for a tool that raised (a bug must not end the run)."""
    return {
        "ok": False,
        "error_code": "tool_exception",
        "message": f"{tool_name} failed: {type(error).__name__}: {error}",
        "_hint": "Check the arguments; if they are right, tell the user the tool failed.",
    }


def _asks_questions(agent: Agent) -> bool:
    """Whether the agent's asks include seed 001's question (else a Choice stays an error for the model)."""
    return any(t.ask_kind is not None and t.ask_kind.name == QUESTION_KIND for t in agent.tools)


def _choice_ask(error: ToolError, call: ToolCallPart, args: dict[str, Any], lang: str) -> dict[str, Any]:
    """The question ask (kind and payload) a write tool's Choice opens; the payload keeps the call to run again."""
    choice = error.choice
    assert choice is not None
    header, text = choice.header, choice.question
    words = catalog(normalize_lang(lang))
    if choice.header_key in words and choice.question_key in words:
        header, text = t(choice.header_key, lang, **choice.values), t(choice.question_key, lang, **choice.values)
    options, args_for_option = list(choice.options), choice.args_for_option
    if len(choice.option_keys) == len(options) and all(key in words for key, _ in choice.option_keys):
        said = [t(key, lang, **values) for key, values in choice.option_keys]
        args_for_option = {s: args_for_option[o] for s, o in zip(said, options, strict=True) if o in args_for_option}
        options = said
    question = {"header": header[:30], "question": text, "options": options, "multiple": False}
    rerun = {
        "tool_call_id": call.tool_call_id,
        "tool_name": call.tool_name,
        "args": args,
        "args_for_option": args_for_option,
    }
    return {"kind": QUESTION_KIND, "payload": {"questions": [question], RERUN_KEY: rerun}}


def _rerun_answers(ctx: RunContext[RunDeps]) -> list[str] | None:
    """The user's answers when this call runs again after the runtime's question, else None."""
    metadata = ctx.tool_call_metadata
    if isinstance(metadata, dict) and isinstance(metadata.get(RERUN_KEY), list):
        return [str(a) for a in metadata[RERUN_KEY]]
    return None


def _parameter_defaults(tool_def: ToolDefinition) -> dict[str, Any]:
    """The default of each parameter that has one, from the tool's JSON schema."""
    properties = (tool_def.parameters_json_schema or {}).get("properties") or {}
    return {name: spec["default"] for name, spec in properties.items() if isinstance(spec, dict) and "default" in spec}


MAX_REPEATS = 3
"""Repeated calls answered `repeated_call` in one turn before the run stops as stuck."""


class ModelStuck(ConsultaError):
    """The model keeps repeating a call it was told it already made: the run fails with a readable reason, which the
    person reads in their language (`localized`; `str()` is the English)."""

    code = "model_stuck"


# ---- the wrappers --------------------------------------------------------------------------------------------------


@dataclass(kw_only=True)
class ToolCallSite:
    """One call of a tool as the wrappers see it. `args` is what the tool is called with (a wrapper may change it:
    the record and any question keep what was finally called); `tool` is None for an engine-level tool (e.g.
    structured output)."""

    ctx: RunContext[RunDeps]
    call: ToolCallPart
    tool_def: ToolDefinition
    tool: ToolDef | None
    args: dict[str, Any]
    evidence: Evidence | None = None
    """The turn's evidence, once `Approval` has gathered it (for `Grounding` inside it)."""
    caught: bool = field(default=False)
    """Set by `ErrorsAsResults` when the result is an error it made of an exception."""

    @property
    def deps(self) -> RunDeps:
        return self.ctx.deps


Next = Callable[[ToolCallSite], Awaitable[Any]]
"""The rest of a chain: the inner wrappers, then the tool."""


class ToolWrapper(ABC):
    """One behaviour around a tool's execution."""

    @abstractmethod
    async def __call__(self, site: ToolCallSite, call_next: Next) -> Any:
        """The call's result: from `await call_next(site)`, or in the tool's place."""


def compose(wrappers: Sequence[ToolWrapper], innermost: Next) -> Next:
    """`wrappers` around `innermost`, the first outermost."""
    chain = innermost
    for wrapper in reversed(wrappers):
        chain = _bound(wrapper, chain)
    return chain


def _bound(wrapper: ToolWrapper, call_next: Next) -> Next:
    async def step(site: ToolCallSite) -> Any:
        return await wrapper(site, call_next)

    return step


class Recorded(ToolWrapper):
    async def __call__(self, site: ToolCallSite, call_next: Next) -> Any:
        log, call = site.deps.log, site.call
        started, started_at = time.perf_counter(), utcnow()
        log.call_started(call.tool_call_id, call.tool_name, site.args)
        result = await call_next(site)
        if site.tool is None and not site.caught:
            return result  # an engine-level tool's own result: not ours to record
        log.call_returned(
            step=count_steps(site.ctx.messages),
            tool_call_id=call.tool_call_id,
            tool_name=call.tool_name,
            args=site.args,
            result=result,
            started_at=started_at,
            duration_ms=(time.perf_counter() - started) * 1000,
        )
        return result


class ErrorsAsResults(ToolWrapper):
    async def __call__(self, site: ToolCallSite, call_next: Next) -> Any:
        try:
            return await call_next(site)
        except ToolError as error:
            site.caught = True
            answers = _rerun_answers(site.ctx)
            if (
                error.choice is not None
                and site.tool is not None
                and site.tool.kind != "ask"
                and answers is None
                and _asks_questions(site.deps.agent)
                and not person_declined_this_turn(site.ctx.messages)
            ):
                # A guess becomes a question: the runtime asks the user itself and runs this call again with the answer.
                lang = reply_lang(turn_words(site.ctx.messages), site.deps.log.run.lang)
                ask = _choice_ask(error, site.call, site.args, lang)
                raise CallDeferred(metadata={ASK_METADATA_KEY: ask}, kind="question") from None
            result = error.to_result(reply_lang(turn_words(site.ctx.messages), site.deps.log.run.lang))
            if answers:  # asked once already: the model sees what the user answered with the refusal
                result["user_answer"] = answers[0] if len(answers) == 1 else answers
            return result
        except (CallDeferred, ModelStuck):
            raise
        except Exception as error:  # a tool's bug must not end the run: the model sees it in the seeds' shape
            site.caught = True
            return tool_exception_result(site.call.tool_name, error)


class AskDeferral(ToolWrapper):
    async def __call__(self, site: ToolCallSite, call_next: Next) -> Any:
        assert site.tool is not None
        kind = site.tool.ask_kind
        assert kind is not None
        response = next((m for m in reversed(site.ctx.messages) if isinstance(m, ModelResponse)), None)
        siblings = [c for c in (response.tool_calls if response else []) if c.tool_call_id != site.call.tool_call_id]
        if siblings:
            return kind.not_alone_result()
        payload = kind.prepare(site.args)  # raises ToolError with the kind's own codes
        if reply_lang(turn_words(site.ctx.messages), site.deps.log.run.lang) == "zh-CN" and not has_chinese(
            json.dumps(payload, ensure_ascii=False)
        ):
            # seen on the embedded model: "What is the audit id of the '0' change?" asked of a person writing Chinese
            return {
                "ok": False,
                "error_code": "invalid_question_format",
                "message": "The question is not in the user's language: the user writes Chinese.",
                "_hint": "Ask again, the header, question and options written in Chinese (简体中文).",
            }
        facts = facts_of(site.deps, site.ctx.messages)
        shown = _texts_of(payload)
        if (meant := model_words(" \n".join(shown), facts) or _said_back(shown, facts.model_meant)) is not None:
            # seen on the embedded model: "What was found or done?", a refusal's reason, asked of the person
            return {
                "ok": False,
                "error_code": "invalid_question_format",
                "message": f"The question repeats words meant for you, not the user ({meant!r}).",
                "_hint": "Ask the user one plain question about what they asked for, in their words, or reply.",
            }
        if facts.prompt and (asked := next((t for t in shown if _long(t) and echoes(t, facts.prompt)), None)):
            # seen on the embedded model: "What did we put into the dewar last month?" asked back of the person
            # who asked it, after a look-up that had found the answer
            return {
                "ok": False,
                "error_code": "invalid_question_format",
                "message": f"The question only says the user's own request back ({asked!r}).",
                "_hint": "Answer it from the results of this turn's tools; ask only about what is unclear in it.",
            }
        rules = site.deps.agent.facts
        if rules is not None and (offered := unfounded_names(" \n".join(shown), facts, rules)):
            # seen on the embedded model: "NA1000 … NA1009" offered as the tubes of box 4, which holds NA1000 alone
            return {
                "ok": False,
                "error_code": "invalid_question_format",
                "message": f"The question names {', '.join(offered[:6])}, which no tool result of this turn and "
                "nothing the user said holds.",
                "_hint": "Ask only about what the tool results above show, names exactly as they are there; or reply.",
            }
        raise CallDeferred(metadata={ASK_METADATA_KEY: {"kind": kind.name, "payload": payload}}, kind="question")


def _long(text: str) -> bool:
    """Whether `text` is long enough to be a repeat: three words or more, or six Chinese characters (an option "A" or
    a header "Which?" is not)."""
    bare = text.strip(" ?？.。!！:：")
    return len(bare.split()) >= 3 or len(re.findall(r"[\u4e00-\u9fff]", bare)) >= 6


def _said_back(texts: list[str], meant: Sequence[str]) -> str | None:
    """A text of three words or more (six Chinese characters) that is part of a text meant for the model, said back
    whole (seen: "What was found or done?", from a refusal's reason, as a question's header and question)."""
    folded = [re.sub(r"\s+", " ", m.casefold()) for m in meant]
    for text in texts:
        bare = re.sub(r"\s+", " ", text.casefold()).strip(" ?？.。!！:：")
        if _long(bare) and any(bare in m for m in folded):
            return text
    return None


def _texts_of(value: Any) -> list[str]:
    """The words of an ask's payload a person reads: its string values (not its keys)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [text for v in value.values() for text in _texts_of(v)]
    if isinstance(value, list):
        return [text for v in value for text in _texts_of(v)]
    return []


class RepeatGuard(ToolWrapper):
    async def __call__(self, site: ToolCallSite, call_next: Next) -> Any:
        call, messages = site.call, site.ctx.messages
        if not repeats_earlier_call(messages, call, site.args, _parameter_defaults(site.tool_def)):
            return await call_next(site)
        if repeats_this_turn(messages) >= MAX_REPEATS:
            raise ModelStuck(key="error.run.model_stuck", values={"tool": call.tool_name, "repeats": MAX_REPEATS})
        staged = " (what it staged stays staged)." if site.tool is not None and site.tool.kind == "write" else "."
        return {
            "ok": False,
            "error_code": "repeated_call",
            "message": f"{call.tool_name} was already called with these arguments in this turn; its result is above"
            + staged,
            "_hint": "Use that result: answer the user now, or ask with the question tool.",
        }


class ChangeRequestFilter(ToolWrapper):
    async def __call__(self, site: ToolCallSite, call_next: Next) -> Any:
        if site.deps.agent.offers_writes(turn_words(site.ctx.messages)):
            return await call_next(site)
        return {
            "ok": False,
            "error_code": "not_a_change_request",
            "message": f"Not staged: the user's words in this turn ask for no change, so {site.call.tool_name} is "
            "not offered.",
            "_hint": "Answer what the user asked from the look-up results; to change something, they must say so.",
        }


class Approval(ToolWrapper):
    async def __call__(self, site: ToolCallSite, call_next: Next) -> Any:
        deps = site.deps
        evidence = evidence_from(site.ctx.messages, deps.agent, deps.prompt)
        if answers := _rerun_answers(site.ctx):  # the answer to the runtime's question is the user's words
            evidence = replace(evidence, answers=(*evidence.answers, *answers))
        site.evidence = evidence
        op = _result_of(await call_next(site))
        return await deps.stage(site.call.tool_call_id, site.call.tool_name, op, evidence)


class Grounding(ToolWrapper):
    async def __call__(self, site: ToolCallSite, call_next: Next) -> Any:
        ground = getattr(site.deps.agent.executor, "ground_args", None)
        if ground is not None and site.evidence is not None and not _rerun_answers(site.ctx):
            site.args = ground(site.call.tool_name, site.args, site.evidence)  # words never said are not filters
        return await call_next(site)


class InToolCall(ToolWrapper):
    async def __call__(self, site: ToolCallSite, call_next: Next) -> Any:
        deps = site.deps
        token = CURRENT_TOOL_CALL.set(
            ToolCallContext(
                run_id=deps.run_id,
                tool_call_id=site.call.tool_call_id,
                tool_name=site.call.tool_name,
                trace_id=deps.log.run.trace_id,
                usage=site.ctx.usage,
                usage_limits=site.ctx.usage_limits,
                log=deps.log,
            )
        )
        try:
            return _result_of(await call_next(site))
        finally:
            CURRENT_TOOL_CALL.reset(token)


_OUTER = (Recorded(), ErrorsAsResults())
_CHAINS: dict[str, tuple[ToolWrapper, ...]] = {
    "ask": (*_OUTER, AskDeferral()),
    "write": (*_OUTER, RepeatGuard(), ChangeRequestFilter(), Approval(), Grounding()),
    "read": (*_OUTER, RepeatGuard(), InToolCall()),
    # does its work itself (e.g. runs a team whose members are nested runs within this call): not staged
    "act": (*_OUTER, RepeatGuard(), InToolCall()),
}


def chain_for(tool: ToolDef | None) -> tuple[ToolWrapper, ...]:
    """The wrappers around a call of `tool` (None: an engine-level tool), outermost first."""
    return _OUTER if tool is None else _CHAINS[tool.kind]
