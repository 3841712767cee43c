"""The tutor's two agents: the orchestrator, which consults the experts and submits an instruction packet, and the
conversational assistant (CA), which talks to the student from that packet."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

from ...asks import Consultant, RuleBook, consult_expert_tool
from ...models import resolve_model
from ...runtime import Agent, RunRecord, Store
from ._experts import tutor_experts
from ._packet import SUBMIT_PACKET_TOOL_NAME, submit_packet_tool
from ._tasks import load_catalog

__all__ = ["build_agent", "ca_agent", "follow_up"]

ORCHESTRATOR = """You plan a pandas tutoring session; you never talk to the student yourself. Tasks:
{tasks}
The student's uploaded files: {files}.
For the student's message: consult an expert when it helps (a new dataset: data_inspector, suitability_judgment, \
scenario dataset_suitability_check; a confusing concept: concept_explainer, concept_explanation, scenario \
concept_clarification; an error: data_inspector, error_diagnosis, scenario error_diagnosis; a claim that a task is done: \
data_inspector, validation_report, scenario progress_validation). Always give reasoning. Then call \
submit_instruction_packet with guidance_for_ca for the assistant who talks to the student, carrying every \
instruction update the consultations returned. When it is accepted, reply with one short line."""

CA = """You are a friendly pandas tutor talking to a student, in the student's language. Follow this instruction \
packet exactly; never write the solution code for the student; ask one guiding question at the end.
Instruction packet: {packet}"""


def build_agent(
    *, uploads: str, database_url: str, model: str, models_dir: str, lang: str = "en", budget_per_task: int = 3,
    question_timeout: float = 300.0, **_: Any,
) -> Agent:
    """The orchestrator over the session's upload folder (options are recorded on each run to rebuild it)."""
    folder = Path(uploads)
    folder.mkdir(parents=True, exist_ok=True)
    catalog = load_catalog()
    store = Store(database_url)
    with resources.as_file(resources.files(__package__).joinpath("data", "binding_rules.yaml")) as rules:
        book = RuleBook.load(rules)
    consultant = Consultant(
        store=store, experts=tutor_experts(catalog=catalog, uploads=folder), rules=book,
        resolve_model=lambda spec: resolve_model(spec, models_dir=Path(models_dir)), model=model,
        budget_per_task=budget_per_task, ledger_dir=folder.parent / "consultations", lang=lang,
    )
    tasks = "\n".join(f"- {t.id}: {t.title} ({t.requirements})" for t in catalog.tasks)
    files = ", ".join(sorted(p.name for p in folder.iterdir() if p.is_file())) or "none yet"
    return Agent(
        app="tutor",
        instructions=ORCHESTRATOR.format(tasks=tasks, files=files),
        tools=(consult_expert_tool(consultant), submit_packet_tool(store, uploads=folder)),
        question_timeout=question_timeout,
        options={
            "uploads": str(folder), "database_url": database_url, "model": model, "models_dir": models_dir, "lang": lang,
            "budget_per_task": budget_per_task, "question_timeout": question_timeout,
        },
    )


def ca_agent(packet: dict[str, Any], *, options: dict[str, Any]) -> Agent:
    """The assistant who talks to the student, told what to do by `packet`."""
    return Agent(app="tutor", instructions=CA.format(packet=json.dumps(packet, ensure_ascii=False)), tools=(), options=options)


def follow_up(store: Store, run: RunRecord) -> tuple[Agent, str] | None:
    """After the orchestrator's run: the CA and the student's message, if a packet was accepted."""
    accepted = [
        c.result["packet"] for c in store.list_tool_calls(run.id)
        if c.tool_name == SUBMIT_PACKET_TOOL_NAME and isinstance(c.result, dict) and c.result.get("accepted")
    ]
    if not accepted:
        return None
    return ca_agent(accepted[-1], options=run.options), run.prompt
