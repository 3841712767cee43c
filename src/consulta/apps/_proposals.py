"""A person's own write — one they make on an app's screen rather than through the agent (ln2's rollback button) —
staged and approved like any write.

`propose` checks the write against the data as it is (ToolError: nothing is recorded), then records a run of the
person's (agent `PERSON`, driven by them, not by a model: `PERSON_MODEL`, so nothing resumes it as a model's run, and
a page restoring its conversation does not take it for a turn of the app's agent) holding a plan of the one write,
and opens the plan's approval ask — the same `plan` ask a model's write opens, shown by every front end (the
desktop's plan panel, the page's plan card, `consulta answer ASK approve`). Only an approval applies it, through the
runtime's `PlanBook` and the app's `PlanExecutor`, audited as the approver; a rejection, a cancel, a stop or the
agent's question timeout (every wait is bounded) writes nothing. The run then ends with what came of it.

The decision is made where the ask is closed: by the host that took the person's answer or cancel (`settle`, in
whichever process, the server restarted included), or by the proposal's timeout in the process that proposed. A
proposal still waiting when that process stops is not timed out any more: it waits for the person's answer.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from ..runtime import (
    EXTERNAL_MODEL_PREFIX,
    AskRecord,
    AskStatus,
    ConfigError,
    ConflictError,
    ModelText,
    PlanExecutor,
    RunRecord,
    RunStatus,
    ToolError,
    decided_reply,
)

if TYPE_CHECKING:
    from ._def import AppView

__all__ = ["PERSON", "PERSON_MODEL", "Proposal", "is_proposal", "propose", "settle"]

PERSON = "person"
"""The agent a proposal's run records: the person themselves (no agent of the app is run)."""
PERSON_MODEL = f"{EXTERNAL_MODEL_PREFIX}person"
"""The model a proposal's run records: a person drives it (as an MCP client's model drives its session's run)."""

_ENDED = (RunStatus.finished, RunStatus.failed, RunStatus.cancelled)
_log = logging.getLogger("consulta.proposals")
_TIMING: set[asyncio.Task[None]] = set()  # the proposals' timeouts (held so they are not collected)


class Proposal(BaseModel):
    """A person's write staged as a plan, waiting for approval: the run holding it, the plan, its approval ask (answer
    it `approve` or `reject` like any plan's) and what the write will do, one preview line per operation."""

    run_id: str
    plan_id: str
    ask_id: str
    previews: list[str]


async def propose(host: AppView, *, tool: str, op: dict[str, Any], prompt: str, principal: str, lang: str) -> Proposal:
    """Stage write `op` (as the app's write tool `tool` builds it) for `principal` and open its approval (see the
    module docstring). ToolError when the data does not allow it (nothing is recorded then); ConfigError for an app
    without a plan executor. Call on the event loop that runs the host."""
    agent = host.agent
    executor = _executor(host)
    executor.validate([op], lang=lang)  # a write the data does not allow is refused before anything is recorded
    runtime = host.runtime
    runtime.attach()
    log = runtime.recorder.create(
        agent=PERSON,
        app=agent.app,
        prompt=prompt,
        model=PERSON_MODEL,
        lang=lang,
        options=agent.options,
        principal=principal,
        held=False,
    )
    try:
        plan, _ = runtime.plans.stage(
            run_id=log.run.id,
            app=agent.app,
            executor=executor,
            tool_call_id=f"person_{uuid.uuid4().hex[:12]}",
            tool_name=tool,
            op=op,
        )
        ask = runtime.plans.open(
            plan, executor=executor, lang=lang, timeout_s=agent.question_timeout, trace_id=log.run.trace_id
        )
    except ToolError as error:  # the data changed in between: the run ends saying so
        log.end(RunStatus.failed, error=error.message)
        raise
    log.set_status(RunStatus.waiting)  # on the person's approval, as a model's run waits on its plan
    task = asyncio.get_running_loop().create_task(_time_out(host, log.run, ask, after_s=agent.question_timeout))
    _TIMING.add(task)
    task.add_done_callback(_timed)
    return Proposal(
        run_id=log.run.id, plan_id=plan.id, ask_id=ask.id, previews=[str(i["preview"]) for i in ask.payload["items"]]
    )


def is_proposal(run: RunRecord) -> bool:
    """Whether `run` holds a person's own write (made by `propose`)."""
    return run.model == PERSON_MODEL


async def settle(host: AppView, run: RunRecord) -> None:
    """The approval ask of proposal `run` has closed: apply its plan if the ask was answered approve (else record it
    rejected or cancelled), and end the run saying what came of it. Called by whoever closed the ask — the host after
    an answer or a cancel (in whichever process the person answered), the proposal's own timeout — so one decision is
    made, once. A proposal still waiting, or already ended, is left as it is."""
    runtime = host.runtime
    if runtime.store.get_run(run.id).status in _ENDED:
        return  # decided already, or stopped (its plan cancelled with it)
    plan = next(p for p in runtime.store.list_plans(run_id=run.id) if p.ask_id is not None)
    ask = runtime.store.get_ask(plan.ask_id or "")
    if ask.status == AskStatus.pending:
        return
    outcome = await runtime.plans.decide(ask, executor=_executor(host))
    reply = decided_reply(outcome, previews=[str(i.get("preview", "")) for i in ask.payload["items"]], lang=run.lang)
    log = runtime.recorder.take_up(run)
    log.emit(ModelText(run_id=run.id, text=reply))
    log.end(RunStatus.finished, output=reply)


def _executor(host: AppView) -> PlanExecutor:
    if host.agent.executor is None:
        raise ConfigError(f"App {host.agent.app!r} has no plan executor; it cannot take writes.")
    return host.agent.executor


async def _time_out(host: AppView, run: RunRecord, ask: AskRecord, *, after_s: float) -> None:
    """Close the proposal's approval ask as timed out if nobody has closed it within `after_s` (every wait is
    bounded), and settle it (nothing is applied)."""
    await asyncio.sleep(after_s)
    try:
        host.runtime.cancel_ask(ask.id, status=AskStatus.timed_out, answered_by="timeout")
    except ConflictError:
        return  # closed meanwhile: whoever closed it settles it
    await settle(host, run)


def _timed(task: asyncio.Task[None]) -> None:
    _TIMING.discard(task)
    if not task.cancelled() and (error := task.exception()) is not None:
        _log.error("Timing a person's proposal out failed: %s: %s", type(error).__name__, error, exc_info=error)
