"""What the Director has learnt in a run, kept as the run's durable steps (`runtime.RunSteps`): each agent's answer,
each consultation's number (taken before the colleague is asked) and reply, each escalation and the person's
decision. A run killed at any point and started again (`consulta resume`, or the conversation's next message) replays
them: no agent asked twice, no record written twice, the numbering going on where it stopped.

The steps are the conversation's (keyed on its first run, `RunRecord.thread_id`), as its workspace is
(`_problem.run_workspace`). `Memo` is a view of them, with the notes the Director makes as it goes (the plan, where
each script came from; a resumed run makes them again as it replays), written to `state/director.json` for whoever
reads the workspace; nothing reads it back to resume. Records are stamped with `SOURCE_DATE_EPOCH` when it is set
(reproducible runs), else the clock."""

from __future__ import annotations

import hashlib
import inspect
import json
import os
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ...runtime import RunSteps, Store
from ._files import write_atomic

__all__ = ["NOT_DONE", "LocalSteps", "Memo", "Steps", "clock", "pending_escalation", "step_key", "thread_steps"]

NOT_DONE = RunSteps.NOT_DONE
"""What a book of steps returns for a step not done yet."""
_KEY_CHARS = 200
"""The store's bound on a step's key (`durable_steps.key`)."""


class LocalSteps:
    """The steps of a Director working outside any run (a script, a benchmark, one turn in a test): kept in memory
    for as long as the Director lasts; there is nothing to resume. The same methods as `RunSteps`, and the same
    results (a result is kept in its JSON form)."""

    NOT_DONE = NOT_DONE

    def __init__(self) -> None:
        self._done: dict[str, Any] = {}

    def result(self, key: str) -> Any:
        return self._done.get(key, NOT_DONE)

    def record(self, key: str, result: Any) -> Any:
        return self._done.setdefault(key, json.loads(json.dumps(result)))

    def recorded(self, prefix: str = "") -> dict[str, Any]:
        return {k: v for k, v in self._done.items() if k.startswith(prefix)}

    async def step(self, key: str, work: Callable[[], Awaitable[Any] | Any]) -> Any:
        done = self.result(key)
        if done is not NOT_DONE:
            return done
        result = work()
        if inspect.isawaitable(result):
            result = await result
        return self.record(key, result)


Steps = RunSteps | LocalSteps


def thread_steps(store: Store, run_id: str) -> RunSteps:
    """The Director's steps for run `run_id`: its conversation's (its thread's first run's), as its workspace is."""
    run = store.get_run(run_id)
    return store.run_steps(run.thread_id if run is not None else run_id)


def step_key(kind: str, name: str) -> str:
    """The key of step `name` of `kind` (answer, consult, reply, decision, escalation); a name too long for the
    store keeps its beginning and a digest of the whole."""
    key = f"{kind}:{name}"
    if len(key) <= _KEY_CHARS:
        return key
    digest = hashlib.sha256(name.encode("utf-8")).hexdigest()[:32]
    return f"{key[: _KEY_CHARS - 34]}~{digest}"


def pending_escalation(steps: Steps) -> str | None:
    """The escalation (`gate#round`) the run waits on (asked, not decided yet), or None."""
    decided = {k.split(":", 1)[1] for k in steps.recorded("decision:")}
    asked = [k.split(":", 1)[1] for k in steps.recorded("escalation:")]
    pending = [k for k in asked if k not in decided]
    return pending[-1] if pending else None


def clock() -> str:
    """Now (UTC, seconds), or `SOURCE_DATE_EPOCH` when set."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    stamp = datetime.fromtimestamp(int(epoch), UTC) if epoch and epoch.isdigit() else datetime.now(UTC)
    return stamp.isoformat(timespec="seconds")


class Memo:
    """What the Director has learnt so far: its steps (`answers`, `consults`, `pairs`, `decisions`) and its `notes`,
    as one view (`memo["answers"]` …); `save` writes it to `path` for readers."""

    def __init__(self, path: Path, steps: Steps) -> None:
        self.path = path
        self.steps = steps
        self.notes: dict[str, Any] = {}

    def __getitem__(self, key: str) -> dict[str, Any]:
        if key == "notes":
            return self.notes
        return self.view()[key]

    def view(self) -> dict[str, Any]:
        """The steps and notes as one mapping (the form of `state/director.json`)."""
        consults: dict[str, dict[str, Any]] = {
            _name(k): dict(v) for k, v in self.steps.recorded("consult:").items() if isinstance(v, dict)
        }
        for key, reply in self.steps.recorded("reply:").items():
            if _name(key) in consults:
                consults[_name(key)].update(status="done", reply=reply)
        pairs: dict[str, int] = {}
        for consult in consults.values():
            if consult.get("status") != "refused":
                pair = f"{consult.get('from')}_{consult.get('to')}"
                pairs[pair] = pairs.get(pair, 0) + 1
        pending = pending_escalation(self.steps)
        return {
            "answers": {_name(k): v for k, v in self.steps.recorded("answer:").items()},
            "consults": consults,
            "pairs": pairs,
            "decisions": {_name(k): v for k, v in self.steps.recorded("decision:").items()},
            "notes": {**self.notes, **({"pending": pending} if pending else {})},
        }

    def save(self) -> None:
        """Write the view to `path` (atomically)."""
        text = json.dumps(self.view(), ensure_ascii=False, indent=1, sort_keys=True)
        write_atomic(self.path, text.encode("utf-8"))


def _name(key: str) -> str:
    return key.split(":", 1)[1]
