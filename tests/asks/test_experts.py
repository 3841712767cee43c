"""consult_expert end to end with scripted models (test doubles): the expert's code-side facts, its typed answer
(retried on a wrong shape or a failed check), binding rules applied, the ledger row and markdown; every refusal is
structured and records nothing as done; inside a run, the ledger names the run and tool call and the expert's own
run hangs under it."""

from __future__ import annotations

import asyncio
import csv
from pathlib import Path
from typing import Any

import pytest

from consulta.asks import Consultant, ConsultRequest, Expert, RuleBook, consult_expert_tool
from consulta.models import ScriptedModel
from consulta.runtime import Agent, RunStatus, Runtime, Store, ToolError
from consulta.runtime._engine import load_messages

from .test_consult import RULES, SEED_EXAMPLES


def final(**output: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": "final_result", "args": output}]}


NOT_SUITABLE = dict(
    is_suitable=False,
    blocking_issues=["only 3 rows (needs 100)", "no 'age' column"],
    warning_issues=[],
    evidence=["columns: name, city", "rows: 3"],
    recommended_next_step="Upload a dataset with 100+ rows and an age column.",
)


def inspect_csv(folder: Path):  # noqa: ANN201
    def inspect(request: ConsultRequest) -> dict[str, Any]:
        with (folder / str(request.context.file_name)).open(encoding="utf-8") as f:
            rows = list(csv.reader(f))
        return {"columns": rows[0], "rows": len(rows) - 1}

    return inspect


@pytest.fixture
def setup(tmp_path: Path):  # noqa: ANN201
    (tmp_path / "student_data.csv").write_text("name,city\nAda,Paris\nBo,Rome\nCy,Oslo\n", encoding="utf-8")
    rules_file = tmp_path / "rules.yaml"
    rules_file.write_text(RULES, encoding="utf-8")
    store = Store(f"sqlite:///{tmp_path}/consulta.db")

    def make(steps: list[dict[str, Any]], **kw: Any) -> Consultant:
        model = ScriptedModel(steps)
        experts = [
            Expert(
                expert_id="data_inspector",
                role="You inspect datasets.",
                output_types=("suitability_judgment", "error_diagnosis", "validation_report"),
                inspect=inspect_csv(tmp_path),
            ),
            Expert(
                expert_id="concept_explainer",
                role="You explain pandas concepts.",
                output_types=("concept_explanation",),
                check=lambda request, facts, output: _no_answer(output),
            ),
        ]
        return Consultant(
            store=store,
            experts=experts,
            rules=RuleBook.load(rules_file),
            resolve_model=lambda spec: model,
            model="scripted",
            ledger_dir=tmp_path / "ledger",
            **kw,
        )

    return store, make, tmp_path


def _no_answer(output: Any) -> None:
    if "on='city'" in output.simple_example:
        raise ValueError("The example gives away the task's answer (merge on 'city'); use an unrelated example.")


def test_the_seeds_first_example_facts_typed_answer_rules_and_ledger(setup) -> None:  # noqa: ANN001
    store, make, tmp_path = setup
    consultant = make([final(**NOT_SUITABLE)])
    result = asyncio.run(consultant.consult(SEED_EXAMPLES[0]))
    assert result["consultation_id"] == "consult_0001" and result["expert_id"] == "data_inspector"
    assert result["expert_output"]["is_suitable"] is False
    assert [r["rule_name"] for r in result["binding_rules_triggered"]] == [
        "dataset_not_suitable",
        "dataset_has_blocking_issue",
    ]
    assert result["instruction_updates"]["blocked_steps"] == ["analysis", "plotting"]
    assert set(result) == {
        "consultation_id",
        "expert_id",
        "expert_output",
        "binding_rules_triggered",
        "instruction_updates",
    }
    (kept,) = store.list_consultations()
    assert (kept.status, kept.attempts, kept.request["reasoning"]) == ("done", 1, SEED_EXAMPLES[0]["reasoning"])
    expert_run = store.get_run(kept.expert_run_id)
    assert expert_run.app == "expert:data_inspector" and expert_run.status == RunStatus.finished
    (asked,) = [
        part.content
        for m in load_messages(store.load_checkpoint(expert_run.id)[1])
        for part in m.parts
        if part.part_kind == "user-prompt"
    ]
    assert 'Facts established in code: {"columns": ["name", "city"], "rows": 3}' in asked
    assert (
        (tmp_path / "ledger" / "consult_0001.md")
        .read_text(encoding="utf-8")
        .startswith("# consult_0001 · data_inspector")
    )


def test_a_wrong_shape_is_retried_with_the_errors_then_accepted(setup) -> None:  # noqa: ANN001
    store, make, _ = setup
    consultant = make([final(is_suitable="perhaps"), final(**NOT_SUITABLE)])
    result = asyncio.run(consultant.consult(SEED_EXAMPLES[0]))
    assert result["expert_output"]["blocking_issues"][0].startswith("only 3 rows")
    assert store.get_consultation(result["consultation_id"]).attempts == 2


def test_an_answer_that_never_fits_is_a_structured_error_and_a_failed_record(setup) -> None:  # noqa: ANN001
    store, make, _ = setup
    consultant = make([final(is_suitable="perhaps")] * 3, retries=2)
    with pytest.raises(ToolError) as refused:
        asyncio.run(consultant.consult(SEED_EXAMPLES[0]))
    assert refused.value.error_code == "invalid_expert_output"
    (kept,) = store.list_consultations()
    assert (kept.status, kept.expert_output) == ("failed", None)
    assert store.get_run(kept.expert_run_id).status == RunStatus.failed


def test_a_check_in_code_regenerates_an_explanation_that_gives_the_answer_away(setup) -> None:  # noqa: ANN001
    store, make, _ = setup
    leaky = dict(
        concept_name="pandas.merge()",
        definition="Joins two frames on keys.",
        use_cases=["join tables"],
        simple_example="pd.merge(a, b, on='city')",
        common_pitfalls=[],
    )
    clean = {**leaky, "simple_example": "pd.merge(orders, customers, on='customer_id', how='left')"}
    consultant = make([final(**leaky), final(**clean)])
    result = asyncio.run(consultant.consult(SEED_EXAMPLES[1]))
    assert result["expert_output"]["simple_example"] == clean["simple_example"]
    assert store.get_consultation(result["consultation_id"]).attempts == 2


@pytest.mark.parametrize(
    ("change", "code"),
    [
        ({"expert_id": "oracle"}, "unknown_expert"),
        ({"expected_output_type": "concept_explanation"}, "output_type_not_offered"),
        ({"reasoning": "  "}, "missing_reasoning"),
        ({"scenario_id": "smalltalk"}, "unknown_scenario"),
    ],
)
def test_refusals_record_nothing(setup, change: dict[str, Any], code: str) -> None:  # noqa: ANN001
    store, make, _ = setup
    with pytest.raises(ToolError) as refused:
        asyncio.run(make([final(**NOT_SUITABLE)]).consult({**SEED_EXAMPLES[0], **change}))
    assert refused.value.error_code == code
    assert store.list_consultations() == [] and store.list_runs() == []


def test_inside_a_run_the_ledger_names_the_call_and_the_budget_holds(setup, run_once) -> None:  # noqa: ANN001
    store, make, _ = setup
    consultant = make([final(**NOT_SUITABLE)] * 3, budget_per_task=2)
    tool = consult_expert_tool(consultant)
    orchestrator = Agent(app="tutor", instructions="Plan the session.", tools=(tool,))
    asks = [{**SEED_EXAMPLES[0], "question": f"{SEED_EXAMPLES[0]['question']} (round {n})"} for n in range(3)]
    calls = [{"tool_calls": [{"name": "consult_expert", "args": args}]} for args in asks]
    model = ScriptedModel([*calls, {"text": "Packet ready."}])
    run = run_once(store, orchestrator, "The student uploaded student_data.csv for task_2_1.", model)
    assert run.status == RunStatus.finished
    kept = sorted(store.list_consultations(run_id=run.id), key=lambda c: c.id)
    assert [c.id for c in kept] == ["consult_0001", "consult_0002"]  # the third was refused: budget 2 per task
    calls_on_record = {c.tool_call_id: c for c in store.list_tool_calls(run.id)}
    assert all(c.tool_call_id in calls_on_record for c in kept)
    third = [c for c in store.list_tool_calls(run.id) if c.tool_call_id not in {k.tool_call_id for k in kept}]
    assert third and third[0].error_code == "consultation_budget_exceeded"
    assert all(store.get_run(c.expert_run_id).parent_run_id == run.id for c in kept)
    assert all(store.get_run(c.expert_run_id).trace_id == run.trace_id for c in kept)  # one trace
    assert tool.parameters is not None and set(tool.parameters["required"]) >= {
        "expert_id",
        "question",
        "expected_output_type",
        "scenario_id",
        "reasoning",
    }


@pytest.mark.parametrize(("max_steps", "status"), [(3, RunStatus.failed), (4, RunStatus.finished)])
def test_the_experts_model_requests_count_against_the_runs_limits(
    setup, run_once, max_steps: int, status: RunStatus
) -> None:  # noqa: ANN001
    """One orchestrator request, two expert requests (a wrong shape, then the answer), the orchestrator's last one:
    four in all, so a limit of 3 ends the run (it would not if the expert's requests were not counted)."""
    store, make, _ = setup
    consultant = make([final(is_suitable="perhaps"), final(**NOT_SUITABLE)])
    orchestrator = Agent(
        app="tutor", instructions="Plan the session.", tools=(consult_expert_tool(consultant),), max_steps=max_steps
    )
    model = ScriptedModel(
        [{"tool_calls": [{"name": "consult_expert", "args": SEED_EXAMPLES[0]}]}, {"text": "Packet ready."}]
    )
    run = run_once(store, orchestrator, "The student uploaded student_data.csv for task_2_1.", model)
    assert run.status == status, run.error
    assert [c.status for c in store.list_consultations(run_id=run.id)] == ["done"]
    if status == RunStatus.failed:
        assert run.error is not None and "step limit" in run.error


def test_the_experts_run_is_recorded_like_every_run_under_the_consulting_run(setup) -> None:  # noqa: ANN001
    """The nested run goes through the runtime's run recorder: its agent, its numbered events (started, ended) in the
    store and told to the runtime's listeners, its checkpoint, its parent and trace."""
    store, make, _ = setup
    consultant = make([final(**NOT_SUITABLE)])
    orchestrator = Agent(
        app="tutor", name="orchestrator", instructions="Plan the session.", tools=(consult_expert_tool(consultant),)
    )
    model = ScriptedModel(
        [{"tool_calls": [{"name": "consult_expert", "args": SEED_EXAMPLES[0]}]}, {"text": "Packet ready."}]
    )

    async def scenario() -> tuple[Any, list[Any]]:
        runtime = Runtime(store=store, resolve_model=lambda _: model)
        heard: list[Any] = []
        runtime.subscribe(heard.append)
        try:
            return await runtime.run(
                orchestrator, "The student uploaded student_data.csv for task_2_1.", model="scripted"
            ), heard
        finally:
            await runtime.aclose()

    run, heard = asyncio.run(scenario())
    assert run.status == RunStatus.finished and run.agent == "orchestrator"
    (kept,) = store.list_consultations(run_id=run.id)
    expert_run = store.get_run(kept.expert_run_id)
    assert (expert_run.app, expert_run.agent, expert_run.status) == (
        "expert:data_inspector",
        "data_inspector",
        RunStatus.finished,
    )
    assert (expert_run.parent_run_id, expert_run.trace_id, expert_run.principal) == (
        run.id,
        run.trace_id,
        run.principal,
    )
    events = store.list_events(expert_run.id)
    assert [(e.seq, e.type) for e in events] == [(1, "run_started"), (2, "run_ended")]
    assert events[0].data["agent"] == "data_inspector" and events[1].data["status"] == "finished"
    assert [(e.seq, e.type) for e in heard if e.run_id == expert_run.id] == [(1, "run_started"), (2, "run_ended")]
    assert store.load_checkpoint(expert_run.id)[0] == kept.attempts  # the expert's conversation is on record


def test_a_failed_consultation_ends_the_experts_run_failed_on_record(setup) -> None:  # noqa: ANN001
    store, make, _ = setup
    with pytest.raises(ToolError):
        asyncio.run(make([final(is_suitable="perhaps")] * 3, retries=1).consult(SEED_EXAMPLES[0]))
    (expert_run,) = store.list_runs()
    assert expert_run.status == RunStatus.failed and expert_run.error
    assert [e.type for e in store.list_events(expert_run.id)] == ["run_started", "run_ended"]
