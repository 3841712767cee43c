"""Binding rules (seed 000): conditions on an expert's typed output that, when they hold, bind the orchestrator to
instruction updates. Declared in a YAML file per app, evaluated deterministically in code after the expert answers
(never by a model), returned with the consultation, and checked again on the orchestrator's final packet.

    rules:
      - name: dataset_not_suitable
        output_type: suitability_judgment
        when: {field: is_suitable, equals: false}          # or {field: blocking_issues, not_empty: true},
        action: require_new_dataset                        #    {all: [...]}, {any: [...]}
        instruction_updates:
          guidance_for_ca: Ask the student for a dataset that meets the task's requirements before any analysis.
          blocked_steps: [analysis]

Updates of several triggered rules merge in file order: lists are joined (without repeats), other values of a
later rule replace an earlier one's.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, assert_never

from pydantic import BaseModel, ConfigDict, Field, model_validator

from .._yaml_files import load_yaml_model
from ..runtime import ConfigError
from ._consult import OUTPUT_TYPES, BindingRuleTriggered, ExpertOutput, OutputType

__all__ = ["BindingRule", "RuleBook", "RuleOutcome", "carry_updates", "merge_updates", "missing_updates"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Equals(_Strict):
    field: str
    equals: Any


class NotEmpty(_Strict):
    field: str
    not_empty: Literal[True]


class Empty(_Strict):
    field: str
    empty: Literal[True]


class AllOf(_Strict):
    all: list[Condition] = Field(min_length=1)


class AnyOf(_Strict):
    any: list[Condition] = Field(min_length=1)


Condition = Equals | NotEmpty | Empty | AllOf | AnyOf
AllOf.model_rebuild()
AnyOf.model_rebuild()


def _fields(condition: Condition) -> list[str]:
    match condition:
        case Equals() | NotEmpty() | Empty():
            return [condition.field]
        case AllOf():
            return [f for c in condition.all for f in _fields(c)]
        case AnyOf():
            return [f for c in condition.any for f in _fields(c)]
        case _:
            assert_never(condition)


def _holds(condition: Condition, output: ExpertOutput) -> bool:
    match condition:
        case Equals():
            return getattr(output, condition.field) == condition.equals
        case NotEmpty():
            return bool(getattr(output, condition.field))
        case Empty():
            return not getattr(output, condition.field)
        case AllOf():
            return all(_holds(c, output) for c in condition.all)
        case AnyOf():
            return any(_holds(c, output) for c in condition.any)
        case _:
            assert_never(condition)


class BindingRule(_Strict):
    name: str = Field(min_length=1)
    output_type: OutputType
    when: Condition
    action: str = Field(min_length=1)
    instruction_updates: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _fields_exist(self) -> BindingRule:
        known = OUTPUT_TYPES[self.output_type].model_fields
        unknown = [f for f in _fields(self.when) if f not in known]
        if unknown:
            raise ValueError(f"{self.output_type} has no field {unknown[0]!r}; its fields are {', '.join(known)}")
        return self


class RuleOutcome(BaseModel):
    """The rules that held for one output, and the updates they bind the orchestrator to."""

    triggered: list[BindingRuleTriggered] = Field(default_factory=list)
    instruction_updates: dict[str, Any] = Field(default_factory=dict)


class _File(_Strict):
    rules: list[BindingRule] = Field(default_factory=list)


class RuleBook:
    """An app's binding rules, in file order."""

    def __init__(self, rules: list[BindingRule], *, source: str = "<rules>") -> None:
        names = [r.name for r in rules]
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise ConfigError(f"Binding rule {repeated[0]!r} is declared twice in {source}; rule names must be unique.")
        self.rules = rules

    @classmethod
    def load(cls, path: Path | str) -> RuleBook:
        """Read a rules file; ConfigError naming the file, the rule and the problem when it cannot be used."""
        return cls(load_yaml_model(Path(path), _File, what="binding rules file").rules, source=str(path))

    def evaluate(self, output: ExpertOutput) -> RuleOutcome:
        """Which rules hold for `output` (of its own type), and their merged instruction updates."""
        outcome = RuleOutcome()
        for rule in self.rules:
            if not isinstance(output, OUTPUT_TYPES[rule.output_type]) or not _holds(rule.when, output):
                continue
            outcome.triggered.append(BindingRuleTriggered(rule_name=rule.name, action=rule.action))
            outcome.instruction_updates = merge_updates(outcome.instruction_updates, rule.instruction_updates)
        return outcome


def merge_updates(earlier: Mapping[str, Any], later: Mapping[str, Any]) -> dict[str, Any]:
    """Instruction updates of two rules (or consultations) in order: lists are joined without repeats, any other
    value of the later one replaces the earlier one's."""
    merged = dict(earlier)
    for key, value in later.items():
        before = merged.get(key)
        merged[key] = (
            before + [v for v in value if v not in before]
            if isinstance(before, list) and isinstance(value, list)
            else value
        )
    return merged


_ONE_WORD = re.compile(r"[\w.-]+")


def carry_updates(packet: Mapping[str, Any], updates: Mapping[str, Any]) -> dict[str, Any]:
    """`packet` with what it lacks of `updates` added (what a refusal shows the model to submit): a missing text is
    appended to the packet's text, missing list items are appended, any other value (and a one-word value such as a
    status) is replaced."""
    carried = dict(packet)
    for key, wanted in updates.items():
        have = carried.get(key)
        if isinstance(wanted, str) and not _ONE_WORD.fullmatch(wanted):
            carried[key] = (
                have
                if isinstance(have, str) and wanted in have
                else " ".join(x for x in (have if isinstance(have, str) else "", wanted) if x)
            )
        elif isinstance(wanted, list):
            kept = have if isinstance(have, list) else []
            carried[key] = kept + [item for item in wanted if item not in kept]
        else:
            carried[key] = wanted
    return carried


def missing_updates(packet: Mapping[str, Any], updates: Mapping[str, Any]) -> list[str]:
    """What a final instruction packet drops of the binding updates (empty when it carries them all): a text must
    appear in the packet's value, every item of a list must appear in its list (or text), other values must be
    equal."""
    missing = []
    for key, wanted in updates.items():
        have = packet.get(key)
        if isinstance(wanted, str):
            carried = isinstance(have, str) and wanted in have
        elif isinstance(wanted, list):
            carried = (
                have is not None and all(item in have for item in wanted) if isinstance(have, list | str) else False
            )
        else:
            carried = have == wanted
        if not carried:
            missing.append(f"{key}: must carry {wanted!r}")
    return missing
