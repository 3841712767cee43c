"""consult_expert's contract (seed 000): the seed's four example requests parse as written; bad requests get
structured errors; expert outputs are typed; binding rules load from YAML, hold deterministically, merge their
updates, and a packet that drops an update is caught."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from consulta.asks import (
    ConceptExplanation,
    ConsultResult,
    RuleBook,
    SuitabilityJudgment,
    ValidationReport,
    carry_updates,
    missing_updates,
    parse_consult_request,
    parse_expert_output,
)
from consulta.runtime import ConfigError, ToolError

# The seed's four example requests, as written (shipped with the tutor app, which answers them).
SEED_EXAMPLES: list[dict[str, Any]] = json.loads(
    resources.files("consulta.apps.tutor").joinpath("data", "seed_examples.json").read_text(encoding="utf-8")
)


@pytest.mark.parametrize("example", SEED_EXAMPLES, ids=lambda e: e["scenario_id"])
def test_the_seeds_examples_parse_as_written(example: dict[str, Any]) -> None:
    request = parse_consult_request(example)
    assert request.model_dump(exclude_none=True) == example  # nothing lost, extra context keys kept


@pytest.mark.parametrize(
    ("change", "code", "field"),
    [
        ({"reasoning": ""}, "missing_reasoning", "reasoning"),
        ({"reasoning": None}, "missing_reasoning", "reasoning"),
        ({"expected_output_type": "essay"}, "unknown_output_type", "expected_output_type"),
        ({"scenario_id": "chit_chat"}, "unknown_scenario", "scenario_id"),
        ({"question": "  "}, "invalid_arguments", "question"),
        ({"surprise": 1}, "invalid_arguments", "surprise"),
        ({"context": {"file_name": "student_data.csv"}}, "invalid_arguments", "context.task_id"),
        ({"context": None}, "invalid_arguments", "context"),
    ],
)
def test_bad_requests_are_structured_errors(change: dict[str, Any], code: str, field: str) -> None:
    request = {**SEED_EXAMPLES[0], **change}
    if change.get("reasoning", "") is None:
        del request["reasoning"]
    with pytest.raises(ToolError) as refused:
        parse_consult_request(request)
    assert (refused.value.error_code, refused.value.field) == (code, field)
    assert refused.value.to_result()["ok"] is False


def test_outputs_are_typed_and_a_wrong_shape_is_a_validation_error() -> None:
    judgment = parse_expert_output(
        "suitability_judgment",
        {
            "is_suitable": False,
            "blocking_issues": ["no 'age' column"],
            "evidence": ["columns: name, city"],
            "recommended_next_step": "upload another file",
        },
    )
    assert isinstance(judgment, SuitabilityJudgment) and judgment.warning_issues == []
    with pytest.raises(ValidationError):
        parse_expert_output(
            "validation_report", {"is_valid": "maybe", "validation_details": "", "recommended_action": ""}
        )
    with pytest.raises(ValidationError):  # a field of another type is not silently dropped
        parse_expert_output(
            "concept_explanation", {"concept_name": "merge", "definition": "d", "simple_example": "e", "is_valid": True}
        )
    result = ConsultResult(
        consultation_id="consult_0001", expert_id="data_inspector", expert_output=judgment.model_dump()
    )
    assert set(result.model_dump()) == {
        "consultation_id",
        "expert_id",
        "expert_output",
        "binding_rules_triggered",
        "instruction_updates",
    }


RULES = """
rules:
  - name: dataset_not_suitable
    output_type: suitability_judgment
    when: {field: is_suitable, equals: false}
    action: require_new_dataset
    instruction_updates:
      guidance_for_ca: Ask the student for a dataset that meets the task's requirements before any analysis.
      blocked_steps: [analysis]
  - name: dataset_has_blocking_issue
    output_type: suitability_judgment
    when: {any: [{field: blocking_issues, not_empty: true}, {field: evidence, empty: true}]}
    action: list_blocking_issues
    instruction_updates:
      blocked_steps: [analysis, plotting]
  - name: evidence_not_enough
    output_type: validation_report
    when: {all: [{field: is_valid, equals: false}, {field: missing_elements, not_empty: true}]}
    action: ask_for_code
    instruction_updates:
      task_status: in_progress
"""


@pytest.fixture
def book(tmp_path: Path) -> RuleBook:
    path = tmp_path / "rules.yaml"
    path.write_text(RULES, encoding="utf-8")
    return RuleBook.load(path)


def test_rules_hold_in_file_order_and_merge_their_updates(book: RuleBook) -> None:
    bad = SuitabilityJudgment(
        is_suitable=False, blocking_issues=["only 12 rows"], evidence=["12 rows"], recommended_next_step="x"
    )
    outcome = book.evaluate(bad)
    assert [(t.rule_name, t.action) for t in outcome.triggered] == [
        ("dataset_not_suitable", "require_new_dataset"),
        ("dataset_has_blocking_issue", "list_blocking_issues"),
    ]
    assert outcome.instruction_updates == {
        "guidance_for_ca": "Ask the student for a dataset that meets the task's requirements before any analysis.",
        "blocked_steps": ["analysis", "plotting"],
    }
    good = SuitabilityJudgment(is_suitable=True, evidence=["120 rows"], recommended_next_step="start")
    assert book.evaluate(good).triggered == [] and book.evaluate(good).instruction_updates == {}
    report = ValidationReport(
        is_valid=False, validation_details="words only", missing_elements=["code"], recommended_action="show code"
    )
    assert [t.rule_name for t in book.evaluate(report).triggered] == ["evidence_not_enough"]
    explanation = ConceptExplanation(concept_name="merge", definition="d", simple_example="e")
    assert book.evaluate(explanation).triggered == []  # rules only apply to their own output type


def test_a_packet_that_drops_a_binding_update_is_caught(book: RuleBook) -> None:
    outcome = book.evaluate(
        SuitabilityJudgment(is_suitable=False, blocking_issues=["x"], evidence=["y"], recommended_next_step="z")
    )
    carried = {
        "guidance_for_ca": "First: Ask the student for a dataset that meets the task's requirements before any analysis. Then ...",
        "blocked_steps": ["analysis", "plotting", "export"],
    }
    assert missing_updates(carried, outcome.instruction_updates) == []
    dropped = {"guidance_for_ca": "Let's start the analysis.", "blocked_steps": ["analysis"]}
    assert missing_updates(dropped, outcome.instruction_updates) == [
        'guidance_for_ca: must carry "Ask the student for a dataset that meets the task\'s requirements before any analysis."',
        "blocked_steps: must carry ['analysis', 'plotting']",
    ]
    offered = carry_updates(
        {**dropped, "task_status": "in_progress"}, {**outcome.instruction_updates, "task_status": "blocked"}
    )
    assert offered == {  # what the refusal offers back: the model's packet with what it dropped added
        "guidance_for_ca": "Let's start the analysis. Ask the student for a dataset that meets the task's requirements before any analysis.",
        "blocked_steps": ["analysis", "plotting"],
        "task_status": "blocked",
    }
    assert (
        missing_updates(offered, outcome.instruction_updates) == []
        and carry_updates(carried, outcome.instruction_updates) == carried
    )


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("rules: [{name: r, output_type: essay, when: {field: x, equals: 1}, action: a}]", "rules.0.output_type"),
        (
            "rules: [{name: r, output_type: validation_report, when: {field: is_suitable, equals: false}, action: a}]",
            "has no field 'is_suitable'",
        ),
        ("rules: [{name: r, output_type: validation_report, when: {field: is_valid}, action: a}]", "rules.0.when"),
        (
            "rules: [{name: r, output_type: validation_report, when: {field: is_valid, equals: false}, action: a}, "
            "{name: r, output_type: validation_report, when: {field: is_valid, equals: true}, action: b}]",
            "declared twice",
        ),
        ("rules: [unclosed", "not valid YAML"),
    ],
)
def test_a_bad_rules_file_is_a_clear_error(tmp_path: Path, text: str, says: str) -> None:
    path = tmp_path / "rules.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as error:
        RuleBook.load(path)
    assert says in str(error.value) and str(path) in str(error.value)


def test_a_missing_rules_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="Cannot read the binding rules file"):
        RuleBook.load(tmp_path / "nope.yaml")
