"""A student's turn as its cards show it, read from the store: the orchestrator's run (its consultations, with the
binding rules that fired and their instruction updates, and the instruction packet it submitted) and the
assistant's run it handed the turn to (whose reply is the chat's answer). Every front end draws these."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from pydantic import BaseModel, Field

from ...runtime import ConsultationRecord, RunRecord, Store
from ._packet import SUBMIT_PACKET_TOOL_NAME

__all__ = ["HANDED_OVER", "ConsultationCard", "PacketCard", "RuleCard", "TurnView", "turn_view"]

HANDED_OVER = "handed_over"
"""The event the host records on a run that handed its turn to the next agent (data: next_run_id, agent)."""

Verdict = Literal["suitable", "not_suitable", "valid", "not_valid", "explained", "diagnosed", "failed"]


class RuleCard(BaseModel):
    rule_name: str
    action: str


class ConsultationCard(BaseModel):
    """One consultation: who was asked what, the verdict and the expert's own words, and what the rules made of it."""

    id: str
    expert_id: str
    status: str
    output_type: str
    scenario_id: str
    question: str
    file_name: str | None = None
    task_id: str | None = None
    verdict: Verdict
    summary: str
    """The expert's main words for the verdict (next step, definition, root cause, validation details), or why it
    failed."""
    issues: list[str] = Field(default_factory=list)
    """What stands in the way: blocking issues, missing elements."""
    warnings: list[str] = Field(default_factory=list)
    evidence: list[str] = Field(default_factory=list)
    binding_rules: list[RuleCard] = Field(default_factory=list)
    instruction_updates: dict[str, Any] = Field(default_factory=dict)
    duration_ms: float


class PacketCard(BaseModel):
    """The instruction packet the orchestrator submitted last: accepted (what the assistant was told), or refused
    (`refusal` says why)."""

    accepted: bool
    task_id: str | None = None
    task_status: str | None = None
    guidance_for_ca: str | None = None
    mention_to_student: list[str] = Field(default_factory=list)
    blocked_steps: list[str] = Field(default_factory=list)
    consultation_ids: list[str] = Field(default_factory=list)
    refusal: str | None = None


class TurnView(BaseModel):
    """One turn: the orchestrator's run and, once it handed over, the assistant's."""

    run_id: str
    status: str
    prompt: str | None
    assistant_run_id: str | None = None
    assistant_status: str | None = None
    packet: PacketCard | None = None
    consultations: list[ConsultationCard] = Field(default_factory=list)


def _handed_to(store: Store, run_id: str) -> str | None:
    return next((str(e.data["next_run_id"]) for e in store.list_events(run_id) if e.type == HANDED_OVER), None)


def turn_view(store: Store, run: RunRecord, *, earlier: Iterable[RunRecord] = ()) -> TurnView:
    """The turn `run` belongs to: `run` is its orchestrator's run, or the assistant's run one of the `earlier` runs
    (the same principal's, newest first) handed over to."""
    orchestrator, assistant_id = run, _handed_to(store, run.id)
    if assistant_id is None and run.parent_run_id is None:  # an assistant's run, or a turn not handed over yet
        handing = next((r for r in earlier if r.id != run.id and _handed_to(store, r.id) == run.id), None)
        if handing is not None:
            orchestrator, assistant_id = handing, run.id
    assistant = store.get_run(assistant_id) if assistant_id else None
    consultations = sorted(store.list_consultations(run_id=orchestrator.id, limit=1000), key=lambda c: c.id)
    return TurnView(
        run_id=orchestrator.id,
        status=str(orchestrator.status),
        prompt=orchestrator.prompt,
        assistant_run_id=assistant.id if assistant else None,
        assistant_status=str(assistant.status) if assistant else None,
        packet=_packet(store, orchestrator.id),
        consultations=[consultation_card(c) for c in consultations],
    )


def _packet(store: Store, run_id: str) -> PacketCard | None:
    """The last packet the run submitted, as the tool took it (accepted) or refused it."""
    calls = [c for c in store.list_tool_calls(run_id) if c.tool_name == SUBMIT_PACKET_TOOL_NAME]
    if not calls:
        return None
    last = calls[-1]
    result = last.result if isinstance(last.result, dict) else {}
    if result.get("accepted"):
        return PacketCard(accepted=True, **result["packet"])
    args = last.args if isinstance(last.args, dict) else {}
    known = {k: v for k, v in args.items() if k in PacketCard.model_fields and k not in ("accepted", "refusal")}
    try:
        return PacketCard(accepted=False, refusal=str(result.get("message") or last.error_code or ""), **known)
    except ValueError:  # arguments too malformed to show: the refusal alone
        return PacketCard(accepted=False, refusal=str(result.get("message") or last.error_code or ""))


def _strings(value: Any) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else []


def consultation_card(record: ConsultationRecord) -> ConsultationCard:
    """The consultation with its verdict read from the typed output (`failed` when the expert never answered in
    type)."""
    request = record.request
    context = request.get("context") or {}
    output = record.expert_output or {}
    output_type = str(request.get("expected_output_type", ""))
    verdict: Verdict
    issues: list[str] = []
    warnings: list[str] = []
    evidence: list[str] = []
    if record.status != "done" or record.expert_output is None:
        verdict, summary = "failed", record.error or ""
    elif output_type == "suitability_judgment":
        verdict = "suitable" if output.get("is_suitable") else "not_suitable"
        summary = str(output.get("recommended_next_step", ""))
        issues, warnings, evidence = (
            _strings(output.get("blocking_issues")),
            _strings(output.get("warning_issues")),
            _strings(output.get("evidence")),
        )
    elif output_type == "validation_report":
        verdict = "valid" if output.get("is_valid") else "not_valid"
        summary = str(output.get("validation_details", ""))
        issues = _strings(output.get("missing_elements"))
        evidence = [str(output["recommended_action"])] if output.get("recommended_action") else []
    elif output_type == "error_diagnosis":
        verdict = "diagnosed"
        summary = str(output.get("error_root_cause", ""))
        evidence = [
            s for s in (str(output.get("explanation", "")), str(output.get("suggested_fix_direction", ""))) if s
        ]
    else:  # concept_explanation
        verdict = "explained"
        summary = str(output.get("definition", ""))
        evidence = _strings(output.get("common_pitfalls"))
    return ConsultationCard(
        id=record.id,
        expert_id=record.expert_id,
        status=record.status,
        output_type=output_type,
        scenario_id=str(request.get("scenario_id", "")),
        question=str(request.get("question", "")),
        file_name=context.get("file_name"),
        task_id=context.get("task_id"),
        verdict=verdict,
        summary=summary,
        issues=issues,
        warnings=warnings,
        evidence=evidence,
        binding_rules=[RuleCard.model_validate(r) for r in record.binding_rules],
        instruction_updates=record.instruction_updates,
        duration_ms=record.duration_ms,
    )
