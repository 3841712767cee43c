"""A person's own write — one they make on an app's screen rather than through the agent (ln2's rollback button) —
staged and approved like any write.

`propose` checks the write against the data as it is (ToolError: nothing is recorded), then records a run of the
person's (agent `PERSON`, driven by them, not by a model: `PERSON_MODEL`, so nothing resumes it as a model's run, and
a page restoring its conversation does not take it for a turn of the app's agent) holding a plan of the one write, and opens the plan's approval ask — the same `plan` ask a model's write opens, shown by every front
end (the desktop's plan panel, the page's plan card, `consulta answer ASK approve`). Only an approval applies it,
through the runtime's `PlanBook` and the app's `PlanExecutor`, audited as the approver; a rejection, a cancel, a
stop or the agent's question timeout (every wait is bounded) writes nothing. The run then ends with what came of it.

The decision is made by a task of the process that proposed (it hears the answer given here at once, one given by
another process within a second). A proposal left waiting when its process stops stays unapplied: propose it again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from ..runtime import (
    EXTERNAL_MODEL_PREFIX,
    AskClosed,
    AskRecord,
    AskStatus,
    ConfigError,
    ConflictError,
    Event,
    ModelText,
    PlanExecutor,
    RunLog,
    RunStatus,
    Runtime,
    ToolError,
    decided_reply,
)

if TYPE_CHECKING:
    from ._def import AppView

__all__ = ["PERSON", "PERSON_MODEL", "Proposal", "propose"]

PERSON = "person"
"""The agent a proposal's run records: the person themselves (no agent of the app is run)."""
PERSON_MODEL = f"{EXTERNAL_MODEL_PREFIX}person"
"""The model a proposal's run records: a person drives it (as an MCP client's model drives its session's run)."""

_POLL_S = 1.0
"""How often a waiting proposal looks at the store for an answer given in another process."""

_log = logging.getLogger("consulta.proposals")
_DECIDING: set[asyncio.Task[None]] = set()  # the tasks deciding proposals (held so they are not collected)


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
    executor = agent.executor
    if executor is None:
        raise ConfigError(f"App {agent.app!r} has no plan executor; it cannot take writes.")
    executor.validate([op], lang=lang)  # a write the data does not allow is refused before anything is recorded
    runtime = host.runtime
    runtime.attach()
    log = runtime.recorder.create(
        agent=PERSON, app=agent.app, prompt=prompt, model=PERSON_MODEL, lang=lang, options=agent.options,
        principal=principal, held=False,
    )
    try:
        plan, _ = runtime.plans.stage(
            run_id=log.run.id, app=agent.app, executor=executor, tool_call_id=f"person_{uuid.uuid4().hex[:12]}", tool_name=tool, op=op
        )
        ask = runtime.plans.open(plan, executor=executor, lang=lang, timeout_s=agent.question_timeout, trace_id=log.run.trace_id)
    except ToolError as error:  # the data changed in between: the run ends saying so
        log.end(RunStatus.failed, error=error.message)
        raise
    log.set_status(RunStatus.waiting)  # on the person's approval, as a model's run waits on its plan
    task = asyncio.get_running_loop().create_task(_decide_when_closed(runtime, log, ask, executor, timeout_s=agent.question_timeout))
    _DECIDING.add(task)
    task.add_done_callback(_decided)
    return Proposal(run_id=log.run.id, plan_id=plan.id, ask_id=ask.id, previews=[str(i["preview"]) for i in ask.payload["items"]])


def _decided(task: asyncio.Task[None]) -> None:
    _DECIDING.discard(task)
    if not task.cancelled() and (error := task.exception()) is not None:  # the plan stays pending: say why
        _log.error("Deciding a person's proposal failed: %s: %s", type(error).__name__, error, exc_info=error)


async def _decide_when_closed(runtime: Runtime, log: RunLog, ask: AskRecord, executor: PlanExecutor, *, timeout_s: float) -> None:
    """Wait (bounded by `timeout_s`) for the approval ask to close, decide the plan, and end the run saying what came
    of it."""
    loop = asyncio.get_running_loop()
    closed = asyncio.Event()

    def hear(event: Event) -> None:  # told on whichever thread closed the ask
        if isinstance(event, AskClosed) and event.ask_id == ask.id:
            loop.call_soon_threadsafe(closed.set)

    unsubscribe = runtime.subscribe(hear)
    deadline = loop.time() + timeout_s
    try:
        while (record := runtime.store.get_ask(ask.id)).status == AskStatus.pending:
            left = deadline - loop.time()
            if left <= 0:
                with contextlib.suppress(ConflictError):  # answered at the last moment: that answer stands
                    runtime.cancel_ask(record, status=AskStatus.timed_out, answered_by="timeout")
                continue
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(closed.wait(), min(left, _POLL_S))
    finally:
        unsubscribe()
    outcome = await runtime.plans.decide(record, executor=executor)
    if runtime.store.get_run(log.run.id).status in (RunStatus.finished, RunStatus.failed, RunStatus.cancelled):
        return  # stopped meanwhile: its plan was cancelled with it
    reply = decided_reply(outcome, previews=[str(i.get("preview", "")) for i in record.payload["items"]], lang=log.run.lang)
    log.emit(ModelText(run_id=log.run.id, text=reply))
    log.end(RunStatus.finished, output=reply)
