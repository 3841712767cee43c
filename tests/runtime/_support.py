"""Helpers shared by the runtime tests: scripted steps, a recording model, a fake plan executor, message digging."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import anyio
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, ToolReturnPart
from pydantic_ai.models.function import AgentInfo

from consulta.models import ScriptedModel
from consulta.runtime import Evidence, Runtime, Store, ToolError, read_tool
from consulta.runtime._engine import load_messages

SETTLE_LIMIT = 10.0  # seconds; only a guard against a hang, never an assertion about speed


# ---- scripted steps -------------------------------------------------------------------------------------------


def call(name: str, args: dict[str, Any] | None = None, *, id: str | None = None) -> dict[str, Any]:
    c: dict[str, Any] = {"name": name, "args": args if args is not None else {}}
    if id is not None:
        c["id"] = id
    return c


def calls(*tool_calls: dict[str, Any]) -> dict[str, Any]:
    """One model response made of these tool calls."""
    return {"tool_calls": list(tool_calls)}


def say(text: str) -> dict[str, Any]:
    return {"text": text}


def ask(*questions: dict[str, Any], id: str = "q1") -> dict[str, Any]:
    """One model response calling the question tool alone."""
    return calls(call("question", {"questions": list(questions)}, id=id))


CELL_LINE_Q = {"header": "Cell Line", "question": "Which one?", "options": ["K562", "K562-dTAG", "K562-RTCB"]}

SEED_ANSWERED = {
    "ok": True,
    "result": {"answers": ["Cell Line: K562-dTAG"], "raw_answers": ["K562-dTAG"]},
    "message": "User answered: Cell Line: K562-dTAG",
}


class RecordingModel(ScriptedModel):
    """A scripted model that also keeps every request it was sent (the messages the model saw)."""

    def __init__(self, steps: list[dict[str, Any]]) -> None:
        super().__init__(steps)
        self.requests: list[list[ModelMessage]] = []
        self.infos: list[AgentInfo] = []

    def _respond(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.requests.append(list(messages))
        self.infos.append(info)
        return super()._respond(messages, info)


# ---- reading conversations ------------------------------------------------------------------------------------


def as_dict(content: Any) -> Any:
    """A tool result as the model saw it, decoded when it was sent as JSON text."""
    if isinstance(content, str):
        try:
            return json.loads(content)
        except ValueError:
            return content
    return content


def tool_returns(messages: list[ModelMessage], tool_name: str | None = None) -> list[tuple[str, str, Any]]:
    """(tool name, tool call id, result) of every tool return in `messages`, in order."""
    out = []
    for message in messages:
        if isinstance(message, ModelRequest):
            for part in message.parts:
                if isinstance(part, ToolReturnPart) and (tool_name is None or part.tool_name == tool_name):
                    out.append((part.tool_name, part.tool_call_id, as_dict(part.content)))
    return out


def checkpoint_messages(store: Store, run_id: str) -> list[ModelMessage]:
    checkpoint = store.load_checkpoint(run_id)
    assert checkpoint is not None, f"run {run_id} has no checkpoint"
    return load_messages(checkpoint[1])


def results_for(store: Store, run_id: str, tool_name: str) -> list[Any]:
    """The results of `tool_name` the model got in run `run_id` (from its checkpoint)."""
    return [r for _, _, r in tool_returns(checkpoint_messages(store, run_id), tool_name)]


def seen_by_model(model: RecordingModel, tool_name: str) -> list[Any]:
    """The results of `tool_name` present in the last request the model received."""
    assert model.requests, "the model was never called"
    return [r for _, _, r in tool_returns(model.requests[-1], tool_name)]


async def settle(runtime: Runtime, run_id: str):
    with anyio.fail_after(SETTLE_LIMIT):
        return await runtime.settled(run_id)


async def run_to_settle(runtime: Runtime, agent: Any, prompt: str = "go", *, model: str = "scripted"):
    with anyio.fail_after(SETTLE_LIMIT):
        return await runtime.run(agent, prompt, model=model)


# ---- a fake plan executor -------------------------------------------------------------------------------------


@dataclass
class FakeExecutor:
    """A PlanExecutor that records what the runtime asks of it; set the `*_error` fields to make a step fail."""

    grounding_error: BaseException | None = None
    validate_error: BaseException | None = None
    apply_error: BaseException | None = None
    grounding_calls: list[tuple[str, dict[str, Any], Evidence]] = field(default_factory=list)
    validate_calls: list[list[dict[str, Any]]] = field(default_factory=list)
    apply_calls: list[dict[str, Any]] = field(default_factory=list)
    reconciled: dict[str, Any] | None = None
    """What `reconcile` finds: None (nothing of the plan is applied), or the result of an apply a crash interrupted."""
    reconcile_calls: list[str] = field(default_factory=list)

    def check_grounding(self, tool_name: str, op: dict[str, Any], evidence: Evidence) -> None:
        self.grounding_calls.append((tool_name, op, evidence))
        if self.grounding_error is not None:
            raise self.grounding_error

    def validate(self, ops: list[dict[str, Any]], *, lang: str = "en") -> list[str]:
        self.validate_calls.append([dict(o) for o in ops])
        if self.validate_error is not None:
            raise self.validate_error
        return [f"preview of {o['op']} {o.get('name', '')}".strip() for o in ops]

    def apply(self, ops: list[dict[str, Any]], *, plan_id: str, run_id: str, actor: str) -> dict[str, Any]:
        self.apply_calls.append({"ops": [dict(o) for o in ops], "plan_id": plan_id, "run_id": run_id, "actor": actor})
        if self.apply_error is not None:
            raise self.apply_error
        return {"applied": len(ops)}

    def reconcile(self, plan_id: str) -> dict[str, Any] | None:
        self.reconcile_calls.append(plan_id)
        return self.reconciled


def ungrounded(field_name: str) -> ToolError:
    return ToolError("ungrounded_argument", f"{field_name} is a guess.", field=field_name, hint="Ask with question.")


@read_tool
def lookup(name: str) -> dict:
    """Look a name up."""
    return {"ok": True, "found": [f"{name}-a", f"{name}-b"]}
