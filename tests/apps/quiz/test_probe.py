"""The grading probe: a fitted read-out of the model's hidden state, read only for the model and prompt it was fitted
on, and the calibration's fall-back to the probe-less mapping when the reading is missing."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

import pytest

from consulta.apps.quiz._judge import PROBE_READING, VERDICT_PROMPT_KEY, ModelJudge
from consulta.apps.quiz._probe import GradingProbe, shipped_probe
from consulta.apps.quiz._short_answer import Calibration, default_calibration, evidence

_PROBE = GradingProbe(model="tiny", prompt=VERDICT_PROMPT_KEY, weights=(1.0, -2.0, 0.5), bias=0.25, source="test")


class StateDouble:
    """A test double of a model that reads label probabilities and gives its hidden state (as the embedded one does)."""

    def __init__(self, name: str = "tiny", state: Sequence[float] = (2.0, 0.5, 1.0)) -> None:
        self.name, self.state = name, list(state)
        self.asked: list[tuple[str, str]] = []

    @property
    def model_name(self) -> str:
        return self.name

    async def label_probabilities(self, *, system: str, prompt: str, labels: Sequence[str]) -> dict[str, float]:
        self.asked.append(("labels", prompt))
        return {"correct": 0.2, "partial": 0.2, "incorrect": 0.6}

    async def last_state(self, *, system: str, prompt: str) -> list[float]:
        self.asked.append(("state", prompt))
        return self.state


def test_the_probe_is_a_logistic_read_out_and_refuses_a_state_of_another_size(tmp_path: Path) -> None:
    assert _PROBE.logit([2.0, 0.5, 1.0]) == pytest.approx(2.0 - 1.0 + 0.5 + 0.25)
    assert _PROBE.probability([2.0, 0.5, 1.0]) == pytest.approx(1 / (1 + 2.718281828459045**-1.75))
    with pytest.raises(ValueError, match="a state of 2 numbers, the probe weighs 3"):
        _PROBE.logit([1.0, 2.0])
    path = tmp_path / "probe.json"
    path.write_text(_PROBE.to_json(), encoding="utf-8")
    assert GradingProbe.from_file(path) == _PROBE
    assert _PROBE.applies_to(model_name="tiny", prompt=VERDICT_PROMPT_KEY)
    assert not _PROBE.applies_to(model_name="other.gguf", prompt=VERDICT_PROMPT_KEY)
    assert not _PROBE.applies_to(model_name="tiny", prompt="a-changed-prompt")


def test_a_verdict_reads_the_probe_at_the_end_of_the_labels_prompt() -> None:
    model = StateDouble()
    judge = ModelJudge(model, probe=_PROBE)  # type: ignore[arg-type]
    assert judge.reads_probe
    said = asyncio.run(
        judge.verdict(user_answer="higher", expected=["pitch"], reference_answer="Higher.", readings=(PROBE_READING,))
    )
    assert said[PROBE_READING] == pytest.approx(_PROBE.probability(model.state))
    (kind1, labels_prompt), (kind2, state_prompt) = model.asked
    assert (kind1, kind2) == ("labels", "state") and state_prompt == labels_prompt  # the KV cache holds it: one token


class LabelsOnly:
    """A test double of a model that reads label probabilities but gives no hidden state (an endpoint, say)."""

    model_name = "tiny"

    def __init__(self) -> None:
        self.asked: list[tuple[str, str]] = []

    async def label_probabilities(self, *, system: str, prompt: str, labels: Sequence[str]) -> dict[str, float]:
        self.asked.append(("labels", prompt))
        return {"correct": 0.2, "partial": 0.2, "incorrect": 0.6}


@pytest.mark.parametrize(
    "model", [StateDouble(name="another.gguf"), LabelsOnly()], ids=["another model's states", "no states"]
)
def test_the_probe_is_not_read_for_a_model_it_was_not_fitted_on(model: StateDouble | LabelsOnly) -> None:
    judge = ModelJudge(model, probe=_PROBE)  # type: ignore[arg-type]
    assert not judge.reads_probe
    said = asyncio.run(judge.verdict(user_answer="higher", expected=["pitch"], readings=(PROBE_READING,)))
    assert PROBE_READING not in said and [kind for kind, _ in model.asked] == ["labels"]


def test_a_calibration_without_its_reading_falls_back_to_the_probe_less_mapping() -> None:
    plain = Calibration(weights={"bias": -1.0, "keywords": 3.0, "same": 0.5}, threshold=0.5, source="plain")
    mapping = Calibration(weights={"bias": 0.0, "probe": 1.0}, threshold=0.5, source="probe", fallback=plain)
    assert mapping.readings == ("probe",) and mapping.wanted == ("probe", "same")
    labels = {"correct": 0.2, "partial": 0.2, "incorrect": 0.6}
    assert mapping.for_verdict({**labels, "probe": 0.9}) is mapping
    assert mapping.for_verdict(labels) is plain and mapping.for_verdict(None) is plain
    found = evidence("higher pitch", ["pitch"])
    assert plain.probability(labels, found) != mapping.probability({**labels, "probe": 0.9}, found)
    assert Calibration.from_dict(__import__("json").loads(mapping.to_json())) == mapping


def test_the_shipped_probe_matches_the_verdict_prompt_and_the_shipped_calibration_does_not_weigh_it() -> None:
    probe = shipped_probe()
    assert probe is not None, "data/grading_probe.json is missing: run bench/fit_quiz_probe.py"
    # A changed verdict instruction or question makes the probe read states it was not fitted on: refit it.
    assert probe.prompt == VERDICT_PROMPT_KEY, "the verdict prompt changed: rerun bench/fit_quiz_probe.py"
    assert len(probe.weights) == 1536  # the embedded model's hidden size
    # Not weighed by the shipped calibration: on SciEntsBank's unseen domains it graded worse than the labels and the
    # keywords (bench/results/quiz_grading.seb_domains.probe.bf93a32.json); a calibration may opt in.
    assert PROBE_READING not in default_calibration().wanted


def test_tool_6_grades_with_the_fallback_mapping_when_the_model_gives_no_state() -> None:
    from consulta.apps.quiz._score import score_and_explain

    plain = Calibration(weights={"bias": -5.0, "keywords": 10.0}, threshold=0.5, source="plain")
    mapping = Calibration(weights={"bias": -5.0, "probe": 0.0001}, threshold=0.5, source="probe", fallback=plain)

    def grade(model: object) -> object:
        return asyncio.run(
            score_and_explain(
                "s", "u", "q", "short_answer", "higher pitch", correct_keywords=["pitch"], difficulty=3,
                category="physics", judge=ModelJudge(model, probe=_PROBE), calibration=mapping,  # type: ignore[arg-type]
                correct_answer="Higher pitch.", model_explains=False,
            )
        )  # fmt: skip

    assert grade(StateDouble(name="another.gguf"))["is_correct"] is True  # type: ignore[index]  # keywords: the fallback
    assert grade(StateDouble())["is_correct"] is False  # type: ignore[index]  # the probe's mapping: bias -5
