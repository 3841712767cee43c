"""The orchestrator's instruction packet: what the conversational assistant (CA) is told to do next. It must carry
every binding update of the run's consultations (seed 000: "you must reflect these updates in the
instruction_packet"); the check is code, and a packet that drops one is refused back to the model."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ...asks import carry_updates, merge_updates, missing_updates
from ...runtime import (
    ConsultationRecord,
    Store,
    ToolDef,
    ToolError,
    by_first_look,
    current_tool_call,
    invalid_arguments_result,
)
from ._datasets import uploaded_files

__all__ = [
    "SUBMIT_PACKET_TOOL_NAME",
    "Inspect",
    "InstructionPacket",
    "binding_updates",
    "inspection_request",
    "standing_consultations",
    "standing_inspection",
    "submit_packet_tool",
    "uninspected_uploads",
]

SUBMIT_PACKET_TOOL_NAME = "submit_instruction_packet"

Inspect = Callable[[dict[str, Any]], Awaitable[Any]]
"""Runs a consult_expert request (the inspection of an upload) and records it under the current tool call."""


class InstructionPacket(BaseModel):
    """What the CA does next with the student."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    task_id: str = Field(min_length=1)
    task_status: Literal["not_started", "in_progress", "blocked", "done"]
    guidance_for_ca: str = Field(
        min_length=1, description="How the CA should guide the student now (never the solution)."
    )
    blocked_steps: list[str] = Field(default_factory=list, description="Steps the CA must not start yet.")
    mention_to_student: list[str] = Field(default_factory=list, description="Points the CA must bring up.")
    consultation_ids: list[str] = Field(default_factory=list, description="The consultations this packet rests on.")


def standing_consultations(store: Store, run_id: str, uploads: Path | None = None) -> list[ConsultationRecord]:
    """What a packet of this run rests on, oldest first: the run's finished consultations and, for each uploaded file
    and task, the thread's latest finished inspection of it since the file last changed. A dataset's verdict (and its
    binding updates) stands as long as the file does; other advice is for the turn it was asked in. A turn about the
    student's work (its error diagnosed, its claim validated: `_about_work`) rests on this run's consultations only."""
    mine = [c for c in store.list_consultations(run_id=run_id, limit=1000) if c.status == "done"]
    covered = {_inspected(c) for c in mine} - {None}
    earlier: list[ConsultationRecord] = []
    if uploads is not None and not _about_work(mine):
        for c in store.list_consultations(thread_id=store.get_run(run_id).thread_id, limit=1000):  # newest first
            key = _inspected(c)
            if c.status != "done" or c.run_id == run_id or key is None or key in covered:
                continue
            path = uploads / key[0]
            if path.is_file() and datetime.fromtimestamp(path.stat().st_mtime, UTC) <= datetime.fromisoformat(
                c.started_at
            ):
                covered.add(key)
                earlier.append(c)
    return sorted([*mine, *earlier], key=lambda c: c.id)


_WORK = ("error_diagnosis", "validation_report")


def _about_work(consultations: list[ConsultationRecord]) -> bool:
    """Whether the run diagnosed the student's error or validated their work: the turn is about that work, and its
    packet rests on it, not on a judgment of the files (the diagnosis ran their code on them and says what the file
    check found; every held-out set after the first expected no dataset rule on such a turn)."""
    return any(c.request.get("expected_output_type") in _WORK for c in consultations)


def _inspected(consultation: ConsultationRecord) -> tuple[str, str] | None:
    """(file, task) of a suitability inspection, else None."""
    context = consultation.request.get("context", {})
    if consultation.request.get("expected_output_type") != "suitability_judgment" or not context.get("file_name"):
        return None
    return str(context["file_name"]), str(context.get("task_id"))


def standing_inspection(
    store: Store, run_id: str, uploads: Path, *, file_name: str, task_id: str
) -> ConsultationRecord | None:
    """The standing inspection (`suitability_judgment`) of `file_name` for `task_id` the run's packet would rest on,
    if any."""
    return next(
        (c for c in standing_consultations(store, run_id, uploads) if _inspected(c) == (file_name, task_id)), None
    )


def binding_updates(store: Store, run_id: str, uploads: Path | None = None) -> dict[str, Any]:
    """The instruction updates of the consultations the run's packet rests on, merged in the order they happened."""
    merged: dict[str, Any] = {}
    for consultation in standing_consultations(store, run_id, uploads):
        merged = merge_updates(merged, consultation.instruction_updates)
    return merged


def uninspected_uploads(store: Store, run_id: str, uploads: Path, *, task_id: str | None = None) -> list[str]:
    """The uploaded files with no standing inspection (`suitability_judgment`), for `task_id` if given."""
    inspected = {key for c in standing_consultations(store, run_id, uploads) if (key := _inspected(c)) is not None}
    return [
        f for f in uploaded_files(uploads) if not any(file == f and task_id in (None, task) for file, task in inspected)
    ]


def inspection_request(file_name: str, task_id: str) -> dict[str, Any]:
    """The consult_expert request that inspects an upload for a task (seed 000's first example, for this file)."""
    return {
        "expert_id": "data_inspector",
        "question": f"Is {file_name} suitable for {task_id}?",
        "context": {"file_name": file_name, "task_id": task_id},
        "expected_output_type": "suitability_judgment",
        "scenario_id": "dataset_suitability_check",
        "reasoning": "The packet rests on this upload, which has not been inspected for the task: every upload is inspected before a packet uses it.",
    }


async def _inspect_first(store: Store, run_id: str, task_id: str, uploads: Path, inspect: Inspect | None) -> None:
    """Every upload gets a standing inspection for the packet's task before the packet is judged: made here with
    `inspect` (a consultation on record, under this call), or, without it, asked of the model (`consult_first`).
    A turn about the student's work (`_about_work`) needs none."""
    if _about_work([c for c in store.list_consultations(run_id=run_id, limit=1000) if c.status == "done"]):
        return
    for name in uninspected_uploads(store, run_id, uploads, task_id=task_id):
        request = inspection_request(name, task_id)
        if inspect is None:
            raise ToolError(
                "consult_first",
                f"{name} has not been inspected for {task_id}; the packet cannot rest on it yet.",
                hint="Call consult_expert with "
                + json.dumps(request, ensure_ascii=False)
                + ", then submit the packet again.",
            )
        await inspect(request)


def _validated(store: Store, run_id: str, packet: InstructionPacket, uploads: Path | None) -> bool:
    """Whether a standing `validation_report` of the packet's task found the student's work valid: only then may the
    packet call the task done (seen on the embedded model: a student's merge error answered "you have finished
    task_2_3")."""
    return any(
        c.request.get("expected_output_type") == "validation_report"
        and (c.request.get("context") or {}).get("task_id") == packet.task_id
        and (c.expert_output or {}).get("is_valid") is True
        for c in standing_consultations(store, run_id, uploads)
    )


def submit_packet_tool(store: Store, *, uploads: Path | None = None, inspect: Inspect | None = None) -> ToolDef:
    """The orchestrator's last call: its instruction packet, with the binding updates of the consultations it rests on
    applied by code where it lacks them (seed 000: the system applies a binding rule's `instruction_updates`; the
    result names what was applied); a packet naming no consultation is given the ids of those it rests on. With `uploads`, every uploaded file first gets a standing inspection for the packet's task: made by
    `inspect` (e.g. `Consultant.consult`), so its binding rules reach the packet even when the model did not ask for
    it; without `inspect` the packet is refused with `consult_first` until the model asks."""

    async def submit_instruction_packet(**packet: Any) -> dict[str, Any]:
        try:
            accepted = InstructionPacket.model_validate(packet)
        except ValidationError as error:
            return invalid_arguments_result(SUBMIT_PACKET_TOOL_NAME, error)
        call = current_tool_call()
        if call is not None and uploads is not None:
            await _inspect_first(store, call.run_id, accepted.task_id, uploads, inspect)
        upgraded = False
        if (
            call is not None
            and by_first_look(call.tool_call_id)
            and accepted.task_status == "in_progress"
            and _validated(store, call.run_id, accepted, uploads)
        ):  # code's packet, written before the validation it rests on: the work was found valid, the task is done
            accepted, upgraded = accepted.model_copy(update={"task_status": "done"}), True
        if (
            call is not None
            and accepted.task_status == "done"
            and not _validated(store, call.run_id, accepted, uploads)
        ):
            raise ToolError(
                "not_validated",
                f"The packet says {accepted.task_id} is done, but no validation of the student's work found it valid.",
                hint="Set task_status to in_progress, or consult data_inspector for a validation_report of the "
                "student's work on the task first.",
            )
        updates = binding_updates(store, call.run_id, uploads) if call is not None else {}
        missing = missing_updates(accepted.model_dump(), updates)
        if missing:  # seed 000: the system applies a binding rule's instruction_updates itself
            accepted = InstructionPacket.model_validate(carry_updates(accepted.model_dump(), updates))
        ruled = set(updates.get("blocked_steps") or [])
        if accepted.task_status != "blocked" and (unruled := [s for s in accepted.blocked_steps if s not in ruled]):
            # a step is blocked by a binding rule that fired, not by the packet's word alone (tenth set: a file fit
            # for task_2_4, with warnings, and the step "check_data_quality" blocked: the reply that it may start was
            # refused, and the student read the retry prompt)
            accepted = accepted.model_copy(update={"blocked_steps": [s for s in accepted.blocked_steps if s in ruled]})
            missing = [*missing, f"blocked_steps: {', '.join(unruled)} taken out (no consultation blocks it)"]
        if accepted.task_status == "not_started" and accepted.blocked_steps:
            # a task whose steps the rules block cannot start: its status says so (code's own packet for "can I
            # start?" is written before the inspection it rests on)
            accepted = accepted.model_copy(update={"task_status": "blocked"})
            missing = [*missing, "task_status: blocked (its steps are blocked)"]
        if upgraded:
            missing = [*missing, "task_status: done (the validation found the work valid)"]
        if call is not None and not accepted.consultation_ids:  # what it rests on, on record: named by the system
            rests_on = [c.id for c in standing_consultations(store, call.run_id, uploads)]
            accepted = accepted.model_copy(update={"consultation_ids": rests_on})
        message = f"Instruction packet for {accepted.task_id} ({accepted.task_status}) accepted; the assistant takes it from here."
        if missing:
            message += " The binding updates it lacked were applied: " + "; ".join(missing) + "."
        return {
            "ok": True,
            "accepted": True,
            "packet": accepted.model_dump(),
            "message": message,
            **({"applied_updates": missing} if missing else {}),
        }

    return ToolDef(
        name=SUBMIT_PACKET_TOOL_NAME,
        function=submit_instruction_packet,
        description="Submit the instruction packet for the conversational assistant; it must carry every binding update the consultations returned.",
        parameters=InstructionPacket.model_json_schema(),
        ends_turn=True,
    )
