"""The Director's side of a consultation (seed 002 §2): the rules it checks a request against (`refusal`: an empty
question, an unknown agent, the agent itself, a depth over `max_depth`, a cycle, a budget per agent and phase spent,
the same question again in the phase — each refused with the reason), and the consultation's row in the store's
ledger (`ledger`, beside the seed's record file)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...asks import keep_consultation
from ...runtime import Store, ToolCallContext
from ._consult import ConsultationRequest, Reply, kind_of, reply_text
from ._team import AGENTS

__all__ = ["DIRECTOR", "Refusal", "TeamConfig", "agent_named", "brief", "ledger", "refusal"]

DIRECTOR = "director"
"""The Director itself may be consulted (seed §5: the request is addressed to it): it answers from its records."""


def agent_named(name: str) -> str:
    """The agent a request names (`@Director`, `Modeler ` → `director`, `modeler`); unknown names kept as written."""
    plain = name.strip().lstrip("@").strip()
    return plain.lower() if plain.lower() in (*AGENTS, DIRECTOR) else plain


@dataclass(frozen=True, kw_only=True)
class TeamConfig:
    max_depth: int = 2
    """Consultations inside consultations: 1 = an agent asks a colleague; 2 = the colleague may ask another."""
    budget: int = 2
    """Consultations each agent may make in each phase."""


@dataclass(frozen=True)
class Refusal:
    code: str
    reason: str


def refusal(
    request: ConsultationRequest,
    *,
    consults: Iterable[dict[str, Any]],
    config: TeamConfig,
    phase: str,
    depth: int,
    waiting: tuple[str, ...],
) -> Refusal | None:
    """Why the Director will not make this consultation, or None when it will."""
    to, asker = request.to_agent, request.from_agent
    if not request.question.strip():
        return Refusal("empty_question", "咨询必须写明问题（consult_question）。")
    if to not in AGENTS and to != DIRECTOR:
        return Refusal(
            "unknown_agent",
            f"团队里没有 {to or '（空）'}；可以咨询：{', '.join(a for a in (*AGENTS, DIRECTOR) if a != asker)}。",
        )
    if to == asker:
        return Refusal("self_consultation", f"{asker} 不能咨询自己：自己决定，或问另一位同伴。")
    if depth > config.max_depth:
        return Refusal("too_deep", f"咨询嵌套已达 {config.max_depth} 层上限：请根据已有信息回答。")
    if to in waiting:
        chain = " → ".join((*waiting, asker, to))
        return Refusal("cycle", f"{to} 正在等待这条咨询链的回复（{chain}），不能再被咨询：请直接回答。")
    done = [c for c in consults if c.get("from") == asker and c.get("phase") == phase and c["status"] != "refused"]
    if len(done) >= config.budget:
        return Refusal(
            "budget_exhausted", f"{asker} 在 {phase} 阶段已咨询 {len(done)} 次，达到上限：请用已有的回复完成工作。"
        )
    if any(c.get("to") == to and c.get("question") == request.question.strip() for c in done):
        return Refusal("repeated", f"这个问题已经问过 {to}：请使用那次的回复。")
    return None


def ledger(
    store: Store | None,
    call: ToolCallContext | None,
    workspace: Path,
    key: str,
    request: ConsultationRequest,
    *,
    started: str,
    clock: float,
    status: str,
    reply: Reply | None = None,
    record: Path | None = None,
    error: str | None = None,
    expert_run_id: str | None = None,
) -> None:
    """The consultation in the store's ledger (`consulta consultations` lists it) through the consultation primitive
    every app uses (`asks.keep_consultation`: the row `consult_expert` keeps too, with the colleague's run as the
    expert's run and the time from `clock`, the asker's request), once: a resumed run (the same run
    going on) finds it among its own rows by its key and the workspace."""
    if store is None:
        return
    tag = f"{workspace.resolve()}|{key}"
    mine = store.list_consultations(run_id=call.run_id, limit=10_000) if call is not None else []
    if any(c.request.get("record_key") == tag for c in mine):
        return
    keep_consultation(
        store, expert_id=request.to_agent, status=status, started=started, clock=clock, attempts=1, expert_run_id=expert_run_id,
        run_id=call.run_id if call is not None else None, tool_call_id=call.tool_call_id if call is not None else None,
        request={
            "question": request.question, "reasoning": request.background, "expected_output_type": kind_of(request),
            "scenario_id": "director_consultation", "context": {"from_agent": request.from_agent, "understanding": request.understanding,
            "record": f"consultation/{record.name}" if record else None, "workspace": str(workspace)}, "record_key": tag,
        },
        expert_output={"answer": reply.answer, "note": reply.note, "reply": reply_text(reply)} if reply is not None else None,
        error=error,
    )  # fmt: skip


def brief(request: ConsultationRequest, phase: str) -> dict[str, Any]:
    return {"from": request.from_agent, "to": request.to_agent, "question": request.question.strip(), "phase": phase}
