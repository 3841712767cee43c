"""The consultation primitives: the `question` tool (seed 001), the ask kinds built on the runtime's asks, and the
contract of `consult_expert` (seed 000) with its binding rules."""

from ._binding_rules import BindingRule, RuleBook, RuleOutcome, carry_updates, merge_updates, missing_updates
from ._consult import (
    OUTPUT_TYPES,
    BindingRuleTriggered,
    ConceptExplanation,
    ConsultContext,
    ConsultRequest,
    ConsultResult,
    ErrorDiagnosis,
    ExpertOutput,
    SuitabilityJudgment,
    ValidationReport,
    parse_consult_request,
    parse_expert_output,
)
from ._experts import CONSULT_EXPERT_TOOL_NAME, Consultant, Expert, consult_expert_tool, keep_consultation
from ._ledger import consultation_markdown, write_consultation_markdown
from ._question import (
    Question,
    answered_result,
    cancelled_result,
    not_alone_result,
    parse_questions,
    timeout_result,
    unavailable_result,
    validate_answers,
)
from ._question_kind import QuestionKind, question_tool

__all__ = [
    "CONSULT_EXPERT_TOOL_NAME",
    "OUTPUT_TYPES",
    "BindingRule",
    "BindingRuleTriggered",
    "ConceptExplanation",
    "ConsultContext",
    "Consultant",
    "ConsultRequest",
    "ConsultResult",
    "ErrorDiagnosis",
    "Expert",
    "ExpertOutput",
    "Question",
    "QuestionKind",
    "RuleBook",
    "RuleOutcome",
    "SuitabilityJudgment",
    "ValidationReport",
    "answered_result",
    "cancelled_result",
    "consult_expert_tool",
    "carry_updates",
    "consultation_markdown",
    "keep_consultation",
    "merge_updates",
    "missing_updates",
    "not_alone_result",
    "parse_consult_request",
    "parse_expert_output",
    "parse_questions",
    "question_tool",
    "timeout_result",
    "unavailable_result",
    "validate_answers",
    "write_consultation_markdown",
]
