"""The bridge to the agent engine (pydantic-ai): it builds a pydantic-ai agent from a Consulta `Agent` and runs it.

One capability gives every tool call Consulta's semantics: the wrappers of `_tool_wrappers` composed per tool (the
record, errors in the seeds' shape, asks that defer the call, writes staged into a plan after grounding, repeated and
unasked-for calls refused), unknown tools and invalid arguments answered in the seeds' shape instead of retries that
can crash the run, each step's tool choice, and the reply checks. The conversation's codec and queries are
`_messages`; one typed answer outside a run is `_typed_answer`.
"""

from __future__ import annotations

import functools
import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError
from pydantic_ai import Agent as PaiAgent
from pydantic_ai import (
    DeferredToolRequests,
    DeferredToolResults,
    RunContext,
    Tool,
    ToolApproved,
)
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.exceptions import ModelRetry, ToolFailed
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models import Model
from pydantic_ai.settings import ModelSettings, ToolOrOutput
from pydantic_ai.tools import ToolDefinition
from pydantic_ai.usage import UsageLimits

from ._agent import Agent
from ._claims import (
    ReplyCheck,
    ReplyRefused,
    TurnFacts,
    all_checks,
    check_claims,
    compose_reply,
)
from ._events import ReplyChecked, StepStarted
from ._facts import check_facts, check_language, check_model_words, check_said_something
from ._messages import (
    CODE_MODEL,
    FIRST_LOOK_CALL,
    FIRST_LOOK_MODEL,
    called_this_turn,
    carry_over,
    count_steps,
    dump_each,
    dump_messages,
    find_call,
    is_refusal,
    load_messages,
    looked_first,
    pending_tool_calls,
    returned_call_ids,
    this_turn,
    turn_words,
)
from ._store import utcnow
from ._streaming import ReplyDrafts, can_stream
from ._tool_wrappers import (
    ASK_METADATA_KEY,
    RERUN_KEY,
    RunDeps,
    ToolCallSite,
    chain_for,
    compose,
    evidence_from,
    raw_answers,
    tool_exception_result,
)
from ._tools import ToolDef
from ._turn_facts import facts_of, turn_outcomes
from ._typed_answer import TypedAnswer, typed_answer

__all__ = [
    "Cancelled",
    "carry_over",
    "EngineRun",
    "PausedCall",
    "RunDeps",
    "build_engine_agent",
    "dump_each",
    "dump_messages",
    "evidence_from",
    "invalid_arguments_result",
    "tool_exception_result",
    "TypedAnswer",
    "typed_answer",
    "load_messages",
    "count_steps",
    "pending_tool_calls",
    "returned_call_ids",
]


def invalid_arguments_result(tool_name: str, error: ValidationError | ModelRetry) -> dict[str, Any]:
    """The seeds' `invalid_arguments` result for arguments that do not fit a tool's schema (naming the field)."""
    if isinstance(error, ValidationError):
        problems = [
            {"field": ".".join(str(p) for p in e["loc"]) or "(arguments)", "problem": e["msg"]} for e in error.errors()
        ]
        first = problems[0] if problems else {"field": "(arguments)", "problem": "invalid"}
        return {
            "ok": False,
            "error_code": "invalid_arguments",
            "message": f"Invalid arguments for {tool_name}: {first['field']}: {first['problem']}.",
            "field": first["field"],
            "errors": problems[:5],
            "_hint": "Fix the listed fields and call the tool again; see its parameter schema.",
        }
    return {
        "ok": False,
        "error_code": "invalid_arguments",
        "message": str(error.message),
        "_hint": "Fix the arguments.",
    }


def _unknown_tool(name: str, available: list[str]) -> dict[str, Any]:
    return {
        "ok": False,
        "error_code": "unknown_tool",
        "message": f"Unknown tool: {name}",
        "_hint": f"Choose action from available tools: {', '.join(available)}.",
    }


class _ConsultaTools(AbstractCapability[RunDeps]):
    """Consulta's semantics for every tool call (see the module docstring)."""

    def get_model_settings(self) -> Callable[[RunContext[RunDeps]], ModelSettings] | None:
        def per_step(ctx: RunContext[RunDeps]) -> ModelSettings:
            agent = ctx.deps.agent
            chosen = agent.choose_tools(ctx.deps.run_id)
            if chosen is not None:
                return ModelSettings(tool_choice=chosen)
            first = agent.first_step_tool and not called_this_turn(ctx.messages)
            if _change_not_tried(ctx) and _last_was_refused(ctx.messages, _NOT_TRIED):
                # Its reply to a request for a change tried none: this step writes or asks (seen on the embedded
                # model: "给我取一管HCT116" looked up the two lines and listed them, where a question was due).
                tried = [t.name for t in agent.tools if t.kind == "ask" or t.name in _writes_offered(agent, ctx)]
                return ModelSettings(tool_choice=tried)
            if _last_result_was_repeat(ctx.messages) or _must_reply(ctx):
                # It asked again for what it already has, its writes keep being refused, or its step budget is
                # nearly spent: this step says what the results show (small models loop; a turn always ends).
                return ModelSettings(tool_choice="none")
            words = turn_words(ctx.messages)
            information = not agent.offers_writes(words)
            if information and looked_first(ctx.messages):
                # A request for information whose first look the runtime made: that look-up is what the words
                # point at, so the model's first step answers from it (more look-ups only wandered off the subject).
                return ModelSettings(tool_choice="none")
            if information:
                # A request for information: no write is offered (every tool stays described to the model).
                others = [t.name for t in agent.tools if t.kind != "write"]
                if not others:
                    return ModelSettings(tool_choice="none")
                return ModelSettings(tool_choice=others if first else ToolOrOutput(function_tools=others))
            asked = agent.offered_writes(words)
            if asked is not None:
                # A change of one kind (putting in, not taking out): only its writes are offered (seen on the
                # embedded model: "Freeze two K562-GFP tubes into box 5…" called the take-out tool).
                offered = [t.name for t in agent.tools if t.kind != "write" or t.name in asked]
                return ModelSettings(tool_choice=offered if first else ToolOrOutput(function_tools=offered))
            if first:
                return ModelSettings(tool_choice="required")  # facts first: the turn's first step calls a tool
            return ModelSettings()

        return per_step

    async def wrap_tool_execute(
        self,
        ctx: RunContext[RunDeps],
        *,
        call: ToolCallPart,
        tool_def: ToolDefinition,
        args: dict[str, Any],
        handler: Any,
    ) -> Any:
        tool = ctx.deps.agent.tool(call.tool_name)
        site = ToolCallSite(ctx=ctx, call=call, tool_def=tool_def, tool=tool, args=args)
        return await compose(chain_for(tool), lambda s: handler(s.args))(site)

    async def on_tool_validate_error(
        self, ctx: RunContext[RunDeps], *, call: ToolCallPart, tool_def: ToolDefinition, args: Any, error: Any
    ) -> Any:
        result = invalid_arguments_result(call.tool_name, error)
        ctx.deps.log.call_started(call.tool_call_id, call.tool_name, args)
        ctx.deps.log.call_returned(
            step=count_steps(ctx.messages),
            tool_call_id=call.tool_call_id,
            tool_name=call.tool_name,
            args=args if isinstance(args, dict) else {"raw": str(args)},
            result=result,
            started_at=utcnow(),
            duration_ms=0.0,
        )
        raise ToolFailed(json.dumps(result, ensure_ascii=False))

    async def before_model_request(self, ctx: RunContext[RunDeps], request_context: Any) -> Any:
        ctx.deps.log.emit(
            StepStarted(run_id=ctx.deps.run_id, step=count_steps(ctx.messages) + 1)
        )  # the model is about to think
        # pydantic-ai answers an unknown tool name with a retry; give the model the seeds' `unknown_tool` result
        # instead. (Its retry budget is set to the step limit, so the run ends on the step limit, never on it.)
        # Only the newest request can hold a fresh retry: the ones before were rewritten when they were sent.
        message = next((m for m in reversed(ctx.messages) if isinstance(m, ModelRequest)), None)
        if message is not None:
            for i, part in enumerate(message.parts):
                if not _is_unknown_tool_retry(part):
                    continue
                name = part.tool_name or "?"
                result = _unknown_tool(name, [t.name for t in ctx.deps.agent.tools])
                message.parts[i] = ToolReturnPart(
                    tool_name=name, content=result, tool_call_id=part.tool_call_id, outcome="failed"
                )
                call = find_call(ctx.messages, part.tool_call_id)
                ctx.deps.log.call_returned(
                    step=count_steps(ctx.messages),
                    tool_call_id=part.tool_call_id,
                    tool_name=name,
                    args=call.args_as_dict() if call is not None else {},
                    result=result,
                    started_at=utcnow(),
                    duration_ms=0.0,
                )
        return request_context


def rerun_results(deferred: dict[str, Any], asks: dict[str, dict[str, Any]]) -> DeferredToolResults:
    """The engine's results for the calls a run paused on, from `deferred` (tool call id → the ask's outcome) and
    `asks` (tool call id → the ask's payload). A call paused on a question the runtime opened for a write tool's
    Choice runs again: an answered option merges that option's arguments into the call's; free text runs it with
    its own arguments, the text as the user's words (refused again, the model sees the refusal with the answer).
    A question not answered (timed out, cancelled) is the call's result as it is."""
    calls: dict[str, Any] = {}
    approvals: dict[str, Any] = {}
    metadata: dict[str, dict[str, Any]] = {}
    for call_id, outcome in deferred.items():
        rerun = (asks.get(call_id) or {}).get(RERUN_KEY)
        if not isinstance(rerun, dict) or not (isinstance(outcome, dict) and outcome.get("ok")):
            calls[call_id] = outcome
            continue
        answers = raw_answers(outcome)
        chosen = rerun.get("args_for_option", {}).get(answers[0], {}) if answers else {}
        approvals[call_id] = ToolApproved(override_args={**rerun["args"], **chosen})
        metadata[call_id] = {RERUN_KEY: answers}
    return DeferredToolResults(calls=calls, approvals=approvals, metadata=metadata)


def _first_look(agent: Agent, prompt: str) -> list[ModelMessage]:
    """The turn's opening as if the model had made the agent's first-look calls: the user's words, then those calls
    (run by the engine like any call, so they are checked, logged and on record)."""
    calls = agent.first_calls(prompt)
    if not calls:
        return []
    parts = [ToolCallPart(name, args, tool_call_id=f"{FIRST_LOOK_CALL}{uuid.uuid4().hex[:16]}") for name, args in calls]
    return [ModelRequest(parts=[UserPromptPart(prompt)]), ModelResponse(parts=parts, model_name=FIRST_LOOK_MODEL)]


def _last_result_was_repeat(messages: list[ModelMessage]) -> bool:
    """Whether the latest tool results refused a call as `repeated_call`."""
    for message in reversed(messages):
        if isinstance(message, ModelRequest):
            returns = [p for p in message.parts if isinstance(p, ToolReturnPart)]
            if returns:
                return any(
                    isinstance(p.content, dict) and p.content.get("error_code") == "repeated_call" for p in returns
                )
            if any(isinstance(p, UserPromptPart) for p in message.parts):
                return False
    return False


MAX_REFUSED_WRITES = 2
"""Write calls refused in one turn (not by a question the runtime asked) before the model may only reply."""
MAX_CALLS_PER_TURN = 4
"""Tool calls in one turn of a writing agent before the model may only reply (a small model loops on look-ups)."""
MAX_REFUSED_QUESTIONS = 2
"""Questions refused in one turn (their form, their language) before the model may only reply: seen on the embedded
model, 22 English questions to a person writing Chinese, each refused, in 169 s."""


def _must_reply(ctx: RunContext[RunDeps]) -> bool:
    """Whether this step of an agent that writes must be the turn's reply: its writes were refused
    `MAX_REFUSED_WRITES` times, its questions `MAX_REFUSED_QUESTIONS` times, it made `MAX_CALLS_PER_TURN` calls, or
    the run's step limit leaves only this request and one for a rewrite."""
    if ctx.deps.agent.executor is None:
        return False  # an agent that only reads and asks keeps its own step plan
    limit = ctx.usage_limits.request_limit if ctx.usage_limits is not None else None
    if limit is not None and ctx.usage.requests >= limit - 2:
        return True
    outcomes = turn_outcomes(ctx.messages, ctx.deps.agent)
    if len([c for c in outcomes if c.kind != "ask"]) >= MAX_CALLS_PER_TURN:
        return True
    if len([c for c in outcomes if c.kind == "ask" and not c.ok]) >= MAX_REFUSED_QUESTIONS:
        return True
    return len([c for c in outcomes if c.kind == "write" and not c.ok]) >= MAX_REFUSED_WRITES


CHANGE_NOT_TRIED = "change_not_tried"
"""The runtime's check of a reply to a request for a change that neither called a write nor asked a question."""


def _writes_offered(agent: Agent, ctx: RunContext[RunDeps]) -> list[str]:
    asked = agent.offered_writes(turn_words(ctx.messages))
    return asked if asked is not None else [t.name for t in agent.tools if t.kind == "write"]


def _change_not_tried(ctx: RunContext[RunDeps]) -> bool:
    """Whether this turn's words ask for a change (the agent tells: `asks_for_change`) and the model has neither
    called a write nor asked a question in it."""
    agent = ctx.deps.agent
    words = turn_words(ctx.messages)
    if agent.asks_for_change is None or agent.executor is None or words is None or not agent.offers_writes(words):
        return False
    return not any(c.kind in ("write", "ask") for c in turn_outcomes(ctx.messages, agent))


def _last_was_refused(messages: list[ModelMessage], reason: str) -> bool:
    """Whether the latest request sends a final text back with a reason starting `reason`."""
    last = messages[-1] if messages else None
    return isinstance(last, ModelRequest) and any(
        is_refusal(p) and str(p.content).startswith(reason) for p in last.parts
    )


def _is_unknown_tool_retry(part: Any) -> bool:
    if isinstance(part, ToolReturnPart):
        return getattr(getattr(part, "retry", None), "cause", None) == "unknown_tool"
    return (
        isinstance(part, RetryPromptPart)
        and isinstance(part.content, str)
        and part.content.startswith("Unknown tool name")
    )


def _engine_tool(tool: ToolDef) -> Tool[RunDeps]:
    # Without policies the plain function is handed over: the engine runs it (a sync one in a thread) itself.
    function = tool.call if tool.policies else tool.function
    # A call that ends the turn runs after the calls made before it in the same step (the engine runs the others
    # side by side), so it sees what they found: e.g. a first look that consults, then submits what it rests on.
    sequential = tool.ends_turn
    description = _full_description(tool)
    if tool.parameters is not None:
        return Tool.from_schema(
            function, name=tool.name, description=description, json_schema=tool.parameters, sequential=sequential
        )
    return Tool(function, name=tool.name, description=description, takes_ctx=False, sequential=sequential)


def _full_description(tool: ToolDef) -> str:
    return tool.description if not tool.notes else f"{tool.description} {tool.notes}"


def _turn_facts(ctx: RunContext[RunDeps]) -> TurnFacts:
    return facts_of(ctx.deps, ctx.messages)


def _checked_in_turn(check: ReplyCheck) -> Callable[[RunContext[RunDeps], Any], Any]:
    """An output validator holding the final text to `check` against the turn's facts. A refused text goes back to
    the model with the reason; refused again in the same turn (or at once, when it says so), a `ReplyRefused`'s
    replacement is the reply instead (the conversation keeps it in place of the refused text)."""

    def checked(ctx: RunContext[RunDeps], output: Any) -> Any:
        if isinstance(output, DeferredToolRequests):
            return output
        if _change_not_tried(ctx) and not (_refusals(ctx.messages) or _must_reply(ctx) or _no_step_left(ctx)):
            # Once per turn: a request for a change answered without trying it is tried (the write's own checks,
            # and the questions the runtime asks for it, then speak), or a question is asked.
            reason = f"{_NOT_TRIED} {', '.join(_writes_offered(ctx.deps.agent, ctx))}."
            ctx.deps.log.emit(ReplyChecked(run_id=ctx.deps.run_id, check=CHANGE_NOT_TRIED, reason=reason))
            raise ModelRetry(reason)
        text = "" if output is None else str(output)  # None: the model's response held no text and no call
        try:
            check(text, _turn_facts(ctx))
        except ReplyRefused as error:
            last_step = _no_step_left(ctx)
            replaced = error.replacement is not None and (error.at_once or bool(_refusals(ctx.messages)) or last_step)
            ctx.deps.log.emit(
                ReplyChecked(run_id=ctx.deps.run_id, check=error.check, reason=str(error), replaced=replaced)
            )
            if not replaced:
                raise ModelRetry(str(error)) from None
            assert error.replacement is not None
            _say_instead(ctx.messages, error.replacement)
            return error.replacement
        except ValueError as error:
            ctx.deps.log.emit(ReplyChecked(run_id=ctx.deps.run_id, check="reply", reason=str(error)))
            raise ModelRetry(str(error)) from None
        return text

    return checked


_NOT_TRIED = (
    "The user asked for a change and no write tool was called, nor a question asked: call the "
    "write tool with what they said (when it fits several things, the user is asked which), or ask them one "
    "question. Write tools:"
)


def _for_information(agent: Agent, say_instead: Callable[[TurnFacts], str]) -> Callable[[TurnFacts], str]:
    """What code says instead of a refused claim: on a turn whose words ask for no change (the agent tells), what the
    tools found (seen: "what have we frozen down so far this month" answered "Nothing was changed in this turn");
    else what the turn did (`compose_reply`)."""
    return lambda facts: say_instead(facts) if not agent.offers_writes(facts.prompt) else compose_reply(facts)


def _no_step_left(ctx: RunContext[RunDeps]) -> bool:
    """Whether the run's step limit leaves no model request for a rewrite: code's reply is shown at once."""
    limit = ctx.usage_limits.request_limit if ctx.usage_limits is not None else None
    return limit is not None and ctx.usage.requests >= limit


def _refusals(messages: list[ModelMessage]) -> int:
    """Final texts refused so far in this turn."""
    return sum(1 for m in this_turn(messages) if isinstance(m, ModelRequest) for p in m.parts if is_refusal(p))


def _say_instead(messages: list[ModelMessage], text: str) -> None:
    response = next((m for m in reversed(messages) if isinstance(m, ModelResponse)), None)
    if response is not None:
        response.parts = [TextPart(text), *(p for p in response.parts if not isinstance(p, TextPart))]


def _run_instructions(ctx: RunContext[RunDeps]) -> str:
    return ctx.deps.instructions


def build_engine_agent(agent: Agent, model: Model) -> PaiAgent[RunDeps, str | DeferredToolRequests]:
    """A pydantic-ai agent for `agent` on `model`: text output, or the deferred calls the run paused on."""
    engine: PaiAgent[RunDeps, str | DeferredToolRequests] = PaiAgent(
        model,
        # Instructions that depend on the run are evaluated once per run (RunDeps.instructions): the same text at
        # every step, so the model's cache of the conversation's prefix holds.
        instructions=agent.instructions if isinstance(agent.instructions, str) else _run_instructions,
        tools=[_engine_tool(t) for t in agent.tools],
        deps_type=RunDeps,
        # None: a response with no text and no call reaches the reply checks (as an empty reply) instead of
        # pydantic-ai asking again for as long as the run's retries last
        output_type=[str, DeferredToolRequests, None],  # type: ignore[arg-type]
        capabilities=[_ConsultaTools()],
        retries=agent.max_steps,
    )
    # Every reply is held to the agent's own check first (what its domain asks of a reply: e.g. every tube the
    # person named staged, so the model can still act on it), then to what its turn did (the runtime's claim check),
    # kept free of words meant for the model, in the person's language, and held to the facts the turn found (for an
    # agent that declares them).
    # Only the model's words pass by a check: a replacement is code's.
    say_instead = agent.facts.replacement if agent.facts is not None else compose_reply
    engine.output_validator(
        _checked_in_turn(
            all_checks(
                check_said_something(_for_information(agent, say_instead)),
                agent.check_reply,
                functools.partial(check_claims, say_instead=_for_information(agent, say_instead)),
                check_model_words(say_instead),
                check_language(say_instead),
                check_facts(agent.facts) if agent.facts is not None else None,
            )
        )
    )
    return engine


@dataclass(kw_only=True)
class EngineRun:
    """One stretch of a run on the engine: from a prompt or from answers, to a final text or the next pause."""

    engine: PaiAgent[RunDeps, Any]
    deps: RunDeps
    history: list[ModelMessage]
    prompt: str | None
    deferred: dict[str, Any] | None
    max_steps: int
    on_step: Callable[[list[ModelMessage]], None]
    check_cancel: Callable[[], bool]

    async def __call__(self) -> tuple[str | None, list[PausedCall], list[ModelMessage]]:
        """Run; return (final text or None, the calls the run paused on, all messages)."""
        results = None
        if self.deferred:
            asks = self.deps.log.store.list_asks(status=None, run_id=self.deps.run_id)
            results = rerun_results(self.deferred, {a.tool_call_id: a.payload for a in asks if a.tool_call_id})
        prompt, history = self.prompt, self.history
        if prompt is not None and not self.deferred and (opening := _first_look(self.deps.agent, prompt)):
            prompt, history = None, [*history, *opening]  # the engine runs the first-look calls, then the model
        limits = UsageLimits(request_limit=self.max_steps)
        drafts = self._drafts()
        async with self.engine.iter(
            prompt, message_history=history, deferred_tool_results=results, deps=self.deps, usage_limits=limits
        ) as run:
            async for node in run:
                # One checkpoint per step: when the next model request, carrying the tools' results, is about to
                # be sent. The run's end is checkpointed by the caller.
                request = getattr(node, "request", None)
                if isinstance(request, ModelRequest) and any(
                    isinstance(p, ToolReturnPart | RetryPromptPart) for p in request.parts
                ):
                    messages = run.all_messages()
                    if not messages or messages[-1] is not request:
                        messages = [*messages, request]
                    self.on_step(messages)
                    final = (
                        _turn_ending_result(self.deps.agent, request)
                        or _said_by_first_look(self.deps, messages)
                        or _said_by_staging(self.deps, messages, request)
                    )
                    if final is not None:
                        # on record as the turn's reply, so that a later turn of the thread carries it (without
                        # it, this turn's words and the next one's ran together into one request)
                        return final, [], [*messages, ModelResponse(parts=[TextPart(final)], model_name=CODE_MODEL)]
                if drafts is not None and PaiAgent.is_model_request_node(node):
                    await drafts.stream(node, run.ctx)  # its words reach listeners as drafts while it streams
                if self.check_cancel():
                    raise Cancelled(run.all_messages())
            assert run.result is not None
            output = run.result.output
            messages = run.result.all_messages()
        if isinstance(output, DeferredToolRequests):
            paused = [
                PausedCall(call=c, ask=(output.metadata.get(c.tool_call_id) or {}).get(ASK_METADATA_KEY))
                for c in output.calls
            ]
            return None, paused, messages
        return str(output), [], messages

    def _drafts(self) -> ReplyDrafts | None:
        """The run's reply drafts, when its model streams."""
        if not can_stream(self.engine.model):
            return None
        deps = self.deps
        return ReplyDrafts(
            run_id=deps.run_id,
            publish=deps.log.recorder.bus.publish,
            facts=lambda messages: facts_of(deps, messages),
            stop=self.check_cancel,
        )


def _turn_ending_result(agent: Agent, request: ModelRequest) -> str | None:
    """The output of a turn ended by a successful call of an `ends_turn` tool, else None."""
    for part in request.parts:
        tool = agent.tool(part.tool_name) if isinstance(part, ToolReturnPart) else None
        if (
            tool is not None
            and tool.ends_turn
            and isinstance(part.content, dict)
            and part.content.get("ok") is not False
        ):
            return str(part.content.get("message") or json.dumps(part.content, ensure_ascii=False))
    return None


def _said_by_first_look(deps: RunDeps, messages: list[ModelMessage]) -> str | None:
    """Code's reply to a turn its first look answers whole (`Agent.answered_by_first_look`): what the look found, said
    by the agent's `facts.say_found`; None when the turn is not such a turn or code has nothing to say."""
    agent = deps.agent
    if agent.answered_by_first_look is None or agent.facts is None or agent.facts.say_found is None:
        return None
    words = turn_words(messages)
    if words is None or not looked_first(messages):
        return None
    if not agent.answered_by_first_look(words):
        return None
    return agent.facts.say_found(facts_of(deps, messages)) or None


def _said_by_staging(deps: RunDeps, messages: list[ModelMessage], request: ModelRequest) -> str | None:
    """Code's reply to a turn one staged plan answers whole (`Agent.answered_by_staging`): the plan, said by code,
    once the step's calls all succeeded and one of the turn's staged a write, when the agent's own check lets that
    reply stand; None otherwise (the model goes on)."""
    agent = deps.agent
    if agent.answered_by_staging is None or not agent.offers_writes(words := turn_words(messages) or ""):
        return None
    if any(isinstance(p, RetryPromptPart) for p in request.parts) or any(
        isinstance(p, ToolReturnPart) and isinstance(p.content, dict) and p.content.get("ok") is False
        for p in request.parts
    ):
        return None
    if not agent.answered_by_staging(words):
        return None
    facts = facts_of(deps, messages)
    if not facts.staged or facts.applied or facts.questions:
        return None
    text = agent.facts.replacement(facts) if agent.facts is not None else compose_reply(facts)
    if agent.check_reply is not None:
        try:
            agent.check_reply(text, facts)
        except ValueError:  # ReplyRefused too: the plan does not answer the words yet (a place left out)
            return None
    return text


@dataclass(frozen=True)
class PausedCall:
    """A call the run paused on, with the ask it stands for (None for a deferral that is not an ask)."""

    call: ToolCallPart
    ask: dict[str, Any] | None


class Cancelled(Exception):
    def __init__(self, messages: list[ModelMessage]) -> None:
        super().__init__("cancelled")
        self.messages = messages
