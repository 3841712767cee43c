"""The grading probe: a linear read-out of the embedded model's final hidden state at the end of the short-answer
verdict prompt, fitted on human-labelled answers (`bench/eval_quiz_grading.py --fit-probe`).

The model's probability of the word "correct" is one fixed read-out of that state (the output head's row for the
word); the probe is another, fitted to what people decided. It reads the same forward pass, so it costs one token more
than the labels, and it is only valid for the model and the prompt it was fitted on: `GradingProbe` records both (the
GGUF's name, a hash of the instruction and the question asked) and `ModelJudge` reads it only where both match. The
shipped probe is `data/grading_probe.json`; its logit is the `probe` reading of the calibration.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

__all__ = ["PROBE_FILE", "GradingProbe", "prompt_key", "shipped_probe"]

PROBE_FILE = Path(__file__).parent / "data" / "grading_probe.json"


def prompt_key(*parts: str) -> str:
    """A short hash of the fixed parts of the prompt a probe reads after (its instruction and its last line)."""
    return hashlib.sha256("\n".join(parts).encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True, kw_only=True)
class GradingProbe:
    """`weights` · state + `bias` is the logit of P(a person says correct), for the states of `model` (a GGUF's
    name) at the end of the prompt whose fixed parts hash to `prompt`. `source` says what it was fitted on."""

    model: str
    prompt: str
    weights: tuple[float, ...]
    bias: float
    source: str

    def applies_to(self, *, model_name: str, prompt: str) -> bool:
        """Whether states of `model_name` after a prompt keyed `prompt` are what this probe was fitted on."""
        return model_name == self.model and prompt == self.prompt

    def logit(self, state: Sequence[float]) -> float:
        """The probe's logit for `state` (ValueError when its length is not the probe's)."""
        if len(state) != len(self.weights):
            raise ValueError(f"a state of {len(state)} numbers, the probe weighs {len(self.weights)}")
        return math.fsum(w * x for w, x in zip(self.weights, state, strict=True)) + self.bias

    def probability(self, state: Sequence[float]) -> float:
        """P(correct) by the probe alone."""
        return 1 / (1 + math.exp(-max(min(self.logit(state), 40.0), -40.0)))

    def to_json(self) -> str:
        data = {
            "model": self.model,
            "prompt": self.prompt,
            "bias": self.bias,
            "source": self.source,
            "weights": [round(w, 7) for w in self.weights],
        }
        return json.dumps(data, ensure_ascii=False) + "\n"

    @classmethod
    def from_file(cls, path: Path) -> GradingProbe:
        data = json.loads(path.read_text(encoding="utf-8"))
        return cls(
            model=str(data["model"]),
            prompt=str(data["prompt"]),
            weights=tuple(float(w) for w in data["weights"]),
            bias=float(data["bias"]),
            source=str(data["source"]),
        )


@cache
def shipped_probe() -> GradingProbe | None:
    """The shipped probe (`data/grading_probe.json`), or None when none ships."""
    return GradingProbe.from_file(PROBE_FILE) if PROBE_FILE.is_file() else None
