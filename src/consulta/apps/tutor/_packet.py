"""The orchestrator's instruction packet: what the conversational assistant (CA) is told to do next. It must carry
every binding update of the run's consultations (seed 000: "you must reflect these updates in the
instruction_packet"); the check is code, and a packet that drops one is refused back to the model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ...asks import merge_updates, missing_updates
from ...runtime import Store, ToolDef, ToolError, current_tool_call, invalid_arguments_result

__all__ = ["SUBMIT_PACKET_TOOL_NAME", "InstructionPacket", "binding_updates", "submit_packet_tool"]

SUBMIT_PACKET_TOOL_NAME = "submit_instruction_packet"


class InstructionPacket(BaseModel):
    """What the CA does next with the student."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    task_id: str = Field(min_length=1)
    task_status: Literal["not_started", "in_progress", "blocked", "done"]
    guidance_for_ca: str = Field(min_length=1, description="How the CA should guide the student now (never the solution).")
    blocked_steps: list[str] = Field(default_factory=list, description="Steps the CA must not start yet.")
    mention_to_student: list[str] = Field(default_factory=list, description="Points the CA must bring up.")
    consultation_ids: list[str] = Field(default_factory=list, description="The consultations this packet rests on.")


def binding_updates(store: Store, run_id: str) -> dict[str, Any]:
    """The instruction updates of the run's finished consultations, merged in the order they happened."""
    merged: dict[str, Any] = {}
    for consultation in sorted(store.list_consultations(run_id=run_id, limit=1000), key=lambda c: c.id):
        if consultation.status == "done":
            merged = merge_updates(merged, consultation.instruction_updates)
    return merged


def _inspect_first(store: Store, run_id: str, task_id: str, uploads: Path) -> None:
    """A packet for a task is refused while an uploaded file has not been inspected for it in this run."""
    files = sorted(p.name for p in uploads.iterdir() if p.is_file()) if uploads.is_dir() else []
    inspected = {
        c.request.get("context", {}).get("file_name")
        for c in store.list_consultations(run_id=run_id, limit=1000)
        if c.status == "done" and c.request.get("expected_output_type") == "suitability_judgment" and c.request.get("context", {}).get("task_id") == task_id
    }
    unseen = [f for f in files if f not in inspected]
    if unseen:
        call = {
            "expert_id": "data_inspector", "question": f"Is {unseen[0]} suitable for {task_id}?",
            "context": {"file_name": unseen[0], "task_id": task_id}, "expected_output_type": "suitability_judgment",
            "scenario_id": "dataset_suitability_check", "reasoning": "The student uploaded this file; check it before planning.",
        }
        raise ToolError(
            "consult_first", f"{unseen[0]} has not been inspected for {task_id}; the packet cannot rest on it yet.",
            hint="Call consult_expert with " + json.dumps(call, ensure_ascii=False) + ", then submit the packet again.",
        )


def submit_packet_tool(store: Store, *, uploads: Path | None = None) -> ToolDef:
    """The orchestrator's last call: its instruction packet, checked against the run's binding updates (and, with
    `uploads`, refused until every uploaded file was inspected for the packet's task)."""

    def submit_instruction_packet(**packet: Any) -> dict[str, Any]:
        try:
            accepted = InstructionPacket.model_validate(packet)
        except ValidationError as error:
            return invalid_arguments_result(SUBMIT_PACKET_TOOL_NAME, error)
        call = current_tool_call()
        if call is not None and uploads is not None:
            _inspect_first(store, call.run_id, accepted.task_id, uploads)
        updates = binding_updates(store, call.run_id) if call is not None else {}
        missing = missing_updates(accepted.model_dump(), updates)
        if missing:
            raise ToolError(
                "binding_updates_dropped",
                "The packet drops binding updates from the consultations: " + "; ".join(missing) + ".",
                hint="Submit the packet again carrying every binding update (they are not optional).",
            )
        return {"ok": True, "accepted": True, "packet": accepted.model_dump(), "message": "Instruction packet accepted."}

    return ToolDef(
        name=SUBMIT_PACKET_TOOL_NAME,
        function=submit_instruction_packet,
        description="Submit the instruction packet for the conversational assistant; it must carry every binding update the consultations returned.",
        parameters=InstructionPacket.model_json_schema(),
        ends_turn=True,
    )
