"""The `consult_expert` tool of seed 000: its parameters, the four typed expert outputs, and its result.

The contract is the seed's, kept as written: parameters `expert_id`, `question`, `context` {file_name, task_id,
task_requirements, student_confusion, error_message, student_code_snippet, learning_objectives, student_evidence,
and the extra keys the seed's examples use (`concept_name`, `error_type`, …)}, `expected_output_type`,
`scenario_id`, `reasoning`; the result `{consultation_id, expert_id, expert_output, binding_rules_triggered:
[{rule_name, action}], instruction_updates}`. Invalid parameters are refused with the seeds' error shape before
anything is recorded.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..runtime import ToolError

__all__ = [
    "OUTPUT_TYPES",
    "SCENARIOS",
    "BindingRuleTriggered",
    "ConceptExplanation",
    "ConsultContext",
    "ConsultRequest",
    "ConsultResult",
    "ErrorDiagnosis",
    "ExpertOutput",
    "OutputType",
    "ScenarioId",
    "SuitabilityJudgment",
    "ValidationReport",
    "parse_consult_request",
    "parse_expert_output",
]

OutputType = Literal["suitability_judgment", "concept_explanation", "error_diagnosis", "validation_report"]
ScenarioId = Literal["dataset_suitability_check", "concept_clarification", "error_diagnosis", "progress_validation"]
SCENARIOS: tuple[str, ...] = (
    "dataset_suitability_check",
    "concept_clarification",
    "error_diagnosis",
    "progress_validation",
)


class _Output(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


class SuitabilityJudgment(_Output):
    """`suitability_judgment`: whether a dataset fits the task."""

    is_suitable: bool
    blocking_issues: list[str] = Field(default_factory=list)
    warning_issues: list[str] = Field(default_factory=list)
    evidence: list[str] = Field(default_factory=list)
    recommended_next_step: str


class ConceptExplanation(_Output):
    """`concept_explanation`: a concept explained without giving the task's answer."""

    concept_name: str = Field(min_length=1)
    definition: str = Field(min_length=1)
    use_cases: list[str] = Field(default_factory=list)
    simple_example: str
    common_pitfalls: list[str] = Field(default_factory=list)


class ErrorDiagnosis(_Output):
    """`error_diagnosis`: the root cause of an error and a direction to fix it (not the solution)."""

    error_root_cause: str = Field(min_length=1)
    explanation: str
    suggested_fix_direction: str = Field(min_length=1)
    related_concepts: list[str] = Field(default_factory=list)


class ValidationReport(_Output):
    """`validation_report`: whether the evidence shows the learning objectives are met."""

    is_valid: bool
    validation_details: str
    missing_elements: list[str] = Field(default_factory=list)
    recommended_action: str


ExpertOutput = SuitabilityJudgment | ConceptExplanation | ErrorDiagnosis | ValidationReport

OUTPUT_TYPES: dict[str, type[ExpertOutput]] = {
    "suitability_judgment": SuitabilityJudgment,
    "concept_explanation": ConceptExplanation,
    "error_diagnosis": ErrorDiagnosis,
    "validation_report": ValidationReport,
}


class ConsultContext(BaseModel):
    """What the orchestrator tells the expert. `task_id` is required (the seed's "current task id", the one field
    not marked "if applicable" that every example carries); the rest are optional, extra keys kept (the seed's
    examples add `concept_name` and `error_type`)."""

    model_config = ConfigDict(extra="allow", str_strip_whitespace=True)

    file_name: str | None = None
    task_id: str = Field(min_length=1, description="The current task's id.")
    task_requirements: str | None = None
    student_confusion: str | None = None
    error_message: str | None = None
    student_code_snippet: str | None = None
    learning_objectives: str | None = None
    student_evidence: str | None = None


class ConsultRequest(BaseModel):
    """The parameters of `consult_expert`, exactly the seed's."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    expert_id: str = Field(min_length=1, description="The expert's id (from the available experts).")
    question: str = Field(min_length=1, description="The specific question for the expert.")
    context: ConsultContext
    expected_output_type: OutputType
    scenario_id: ScenarioId
    reasoning: str = Field(min_length=1, description="Why this consultation is needed (kept for the record).")


class BindingRuleTriggered(BaseModel):
    rule_name: str
    action: str


class ConsultResult(BaseModel):
    """What `consult_expert` returns, exactly the seed's shape."""

    consultation_id: str
    expert_id: str
    expert_output: dict[str, Any]
    binding_rules_triggered: list[BindingRuleTriggered] = Field(default_factory=list)
    instruction_updates: dict[str, Any] = Field(default_factory=dict)


def _first_problem(error: ValidationError) -> tuple[str, str]:
    problem = error.errors()[0]
    return ".".join(str(p) for p in problem["loc"]) or "(arguments)", problem["msg"]


def parse_consult_request(arguments: Any) -> ConsultRequest:
    """The validated request, or ToolError: `missing_reasoning` for an empty or missing reasoning,
    `unknown_output_type`, `unknown_scenario`, else `invalid_arguments` naming the field."""
    try:
        return ConsultRequest.model_validate(arguments)
    except ValidationError as error:
        field, problem = _first_problem(error)
        if field == "reasoning":
            raise ToolError(
                "missing_reasoning",
                "consult_expert needs `reasoning`: why this consultation is needed.",
                hint="Say what the student did and which consultation scenario applies, then call again.",
                field="reasoning",
            ) from None
        if field == "expected_output_type":
            raise ToolError(
                "unknown_output_type",
                f"expected_output_type must be one of {', '.join(OUTPUT_TYPES)}.",
                hint="Pick the output type the expert offers for this scenario.",
                field=field,
            ) from None
        if field == "scenario_id":
            raise ToolError(
                "unknown_scenario",
                f"scenario_id must be one of {', '.join(SCENARIOS)}.",
                hint="Pick the scenario from the consultation guide.",
                field=field,
            ) from None
        raise ToolError(
            "invalid_arguments", f"Invalid arguments for consult_expert: {field}: {problem}.", field=field
        ) from None


def parse_expert_output(output_type: str, data: Any) -> ExpertOutput:
    """The expert's output validated against the type asked for (pydantic's ValidationError when it does not fit:
    the caller retries the expert with those errors)."""
    return OUTPUT_TYPES[output_type].model_validate(data)
