"""A short answer's grade: what code can compute, the model's verdict read as probabilities, and the fitted mapping
that turns both into the seed's 0-100 score.

Code does what code knows (`evidence`):
- text is normalised (NFKC, case-folded, full-width forms folded) and tokenised by language: Latin words with a light
  English suffix stemming (`scratches` → `scratch`, `tightened` → `tighten`), Chinese as single characters and
  character bigrams (no segmenter needed to see that `顶点坐标` is in `顶点的坐标是`);
- an expected keyword is found when the answer contains it as written, or all of its (stemmed) words, or one of its
  variants: a keyword may list synonyms with `|` (`harmful|deleterious`, `顶点|最高点`);
- a numeric keyword is found when a number in the answer equals it (`0.5` matches `1/2` and `.50`, within 1e-6
  relative);
- how much of the reference answer the answer covers (the share of its content words, or of its characters for
  Chinese).

The model judges meaning (`Verdict`), read from one prompt (a fixed instruction, the item, the answer), one forward
pass for its probability of each label (`correct`, `partial`, `incorrect`, the reply's first token), and one more
per yes/no reading the calibration weighs (e.g. `same`: "does the answer say what the reference says?"; the prompt
differs only in its last line, so the rest is in the KV cache; the shipped calibration weighs none), and the
grading probe's P(correct) on the embedded model (`_probe`: a fitted read-out of its hidden state at the end of the
labels' prompt, one token more); a backend that cannot give probabilities answers one label under a grammar (that
label gets probability 1; no yes/no reading).

`Calibration` maps both to a probability that a person would call the answer correct (a logistic model fitted by
`bench/fit_quiz_probe.py` — or `bench/eval_quiz_grading.py --fit` without the probe — on training answers scored by
people; the fitted weights ship in `data/grading_calibration.json` with where they came from — today's weighs no
probe: on unseen science domains it graded worse —; a calibration weighing the probe carries a probe-less `fallback`) and that probability to the seed's score: the fitted
decision threshold is 80 (the seed's `is_correct`), 0 → 0 and 1 → 100, linear in between.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from fractions import Fraction
from functools import cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

__all__ = [
    "CODE_FEATURES",
    "LABELS",
    "Calibration",
    "Evidence",
    "Verdict",
    "default_calibration",
    "evidence",
    "ideas_of",
    "keyword_found",
    "negated",
    "tokens",
]

LABELS = ("correct", "partial", "incorrect")
CALIBRATION_FILE = Path(__file__).parent / "data" / "grading_calibration.json"
_CJK_CHAR = r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]"
_WORD = re.compile(rf"{_CJK_CHAR}|[^\W_]+", re.UNICODE)
_IS_CJK = re.compile(_CJK_CHAR)
_NUMBER = re.compile(r"[-+]?(?:\d+(?:\.\d+)?|\.\d+)(?:\s*/\s*\d+)?")  # a comma separates: (2,1) is two numbers
_DASHES = str.maketrans({"\u2212": "-", "\u2013": "-", "\ufe63": "-"})  # minus signs NFKC leaves: −1 reads as -1
_STOP = frozenset(
    "a an the of to in on for and or but is are was were be been being it its this that these those which what when "
    "where why how with by from as at into than then there their they them will would could should can do does did "
    "not no so if very more most less much many some such has have had i you he she we my your his her our "
    "isn aren wasn weren don doesn didn won wouldn couldn shouldn hasn haven t s ll re ve d m".split()  # it's, don't
)
_CJK_STOP = frozenset("的了是在和与及或也都就而吗呢吧啊")
_SUFFIXES = ("ingly", "edly", "ness", "ment", "ing", "ies", "ied", "est", "ed", "es", "er", "ly", "s")


def _normal(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold().translate(_DASHES)


def _stem(word: str) -> str:
    """A light English stem: enough for plural, tense and comparative variants, never below 3 letters. The forms of
    one word meet: `dissolve` / `dissolves` / `dissolved` → `dissolv`, `tight` / `tighter` / `tighten(ed)` → `tight`,
    `high` / `higher` / `highest` → `high`."""
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            if suffix in ("ies", "ied"):
                word += "y"
            break
    if word.endswith("en") and len(word) >= 6:
        word = word[:-2]  # tighten → tight, harden → hard
    if word.endswith("e") and len(word) > 3:
        word = word[:-1]  # dissolve meets dissolv(es), mak(es) meets make
    if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "aeiouls":
        word = word[:-1]  # stopp(ed) → stop
    return word


def tokens(text: str) -> list[str]:
    """The content tokens of `text`: stemmed Latin words without stop words, and Chinese characters with their
    bigrams, particles left out (a Chinese run `二次函数` gives 二 次 函 数 二次 次函 函数)."""
    out: list[str] = []
    run: list[str] = []

    def flush() -> None:
        kept = [c for c in run if c not in _CJK_STOP]  # 顶点的坐标 reads as 顶点坐标
        out.extend(kept)
        out.extend(a + b for a, b in zip(kept, kept[1:], strict=False))
        run.clear()

    for match in _WORD.finditer(_normal(text)):
        word = match.group()
        if _IS_CJK.fullmatch(word):
            run.append(word)
            continue
        flush()
        if word not in _STOP:
            out.append(_stem(word) if word.isalpha() else word)
    flush()
    return out


def _numbers(text: str) -> list[float]:
    values = []
    for raw in _NUMBER.findall(_normal(text)):
        raw = raw.replace(" ", "")
        try:
            values.append(float(Fraction(raw)))
        except (ValueError, ZeroDivisionError):
            continue
    return values


def _is_number(text: str) -> bool:
    return bool(_NUMBER.fullmatch(_normal(text).strip()))


def keyword_found(answer: str, keyword: str) -> bool:
    """Whether `answer` says `keyword`: as written, by all of its words (stemmed; for Chinese its characters in
    order-free bigrams), numerically for a number, or by any of its `|`-separated variants."""
    variants = [v.strip() for v in keyword.split("|") if v.strip()]
    normal = _normal(answer)
    said = set(tokens(answer))
    numbers = _numbers(answer)
    for variant in variants:
        if _is_number(variant):  # 5 is not found in 15
            target = _numbers(variant)
            if target and any(math.isclose(n, target[0], rel_tol=1e-6, abs_tol=1e-9) for n in numbers):
                return True
            continue
        if _normal(variant) in normal:
            return True
        wanted = set(tokens(variant))
        if wanted and wanted <= said:
            return True
    return False


_CLAUSE_END = re.compile(r"(?<=[.!?;。！？；，,])\s*|\s+(?=because\b)")
_CLAUSE_TRIM = " .。,，;；"


def ideas_of(reference: str, *, limit: int = 3) -> list[str]:
    """The ideas of a reference answer, each to be looked for in an answer on its own: its sentences and clauses (cut
    at `.`, `;`, `,`, `，`, `。` … and before "because"), a piece of fewer than 3 words (and 4 Chinese characters)
    joined to the one before it, at most `limit` (the two shortest neighbours joined until so). `Terminals 1 and 6 are
    separated by the gap` is one idea; `When the string was tighter, the pitch was higher` two; `弦拧得越紧，音调越高` two."""
    parts = [p.strip(_CLAUSE_TRIM) for p in _CLAUSE_END.split(reference) if p and p.strip(_CLAUSE_TRIM)]

    def small(part: str) -> bool:
        return len(re.findall(r"[^\W\d_]+|\d+", part)) < 3 and len(_IS_CJK.findall(part)) < 4

    out: list[str] = []
    for part in parts:
        if out and (small(part) or small(out[-1])):
            out[-1] = f"{out[-1]}, {part}"
        else:
            out.append(part)
    while len(out) > limit:
        i = min(range(len(out) - 1), key=lambda j: len(out[j]) + len(out[j + 1]))
        out[i : i + 2] = [f"{out[i]}, {out[i + 1]}"]
    return out or ([whole] if (whole := reference.strip(_CLAUSE_TRIM)) else [])


_NEGATION = re.compile(
    r"\b(?:not|no|never|none|nothing|neither|nor|cannot|without)\b|n't|n’t|[不没無无未非別别]", re.UNICODE
)


def negated(text: str) -> bool:
    """Whether `text` says a negation (not, no, never, -n't, 不, 没 …): the stop words `tokens` drops."""
    return bool(_NEGATION.search(_normal(text)))


@dataclass(frozen=True, kw_only=True)
class Evidence:
    """What code sees in an answer: the keywords it says, the share of the reference it covers, its length; whether
    it negates where the reference does not (or the reverse: `negation_differs`), and the share of its own content
    words the question or the reference also use (`on_topic_share`, None for an answer with none)."""

    found: tuple[str, ...]
    missing: tuple[str, ...]
    keyword_share: float
    reference_share: float | None
    answer_tokens: int
    negation_differs: bool = False
    on_topic_share: float | None = None


def evidence(
    answer: str, keywords: Sequence[str], *, reference: str | None = None, stem: str | None = None
) -> Evidence:
    """Code's evidence about `answer`. The reference's share counts its content tokens the question does not already
    say (saying the question back is not an answer); None without a reference."""
    wanted = [k for k in keywords if k.strip()]
    found = tuple(k for k in wanted if keyword_found(answer, k))
    said = set(tokens(answer))
    share: float | None = None
    asked = set(tokens(stem or ""))
    ref = set(tokens(reference or ""))
    if reference and reference.strip():
        new = ref - asked or ref
        share = len(new & said) / len(new) if new else None
    known = ref | asked | {t for k in wanted for t in tokens(k.replace("|", " "))}
    return Evidence(
        found=found,
        missing=tuple(k for k in wanted if k not in found),
        keyword_share=len(found) / len(wanted) if wanted else 0.0,
        reference_share=share,
        answer_tokens=len(said),
        negation_differs=bool(reference and reference.strip()) and negated(answer) != negated(reference or ""),
        on_topic_share=len(said & known) / len(said) if said and known else None,
    )


class Verdict(BaseModel):
    """The model's label for an answer when its probabilities cannot be read (one constrained word)."""

    verdict: Literal["correct", "partial", "incorrect"] = Field(
        description="correct: says what the expected answer says; partial: part of it; incorrect: wrong or off-topic"
    )


CODE_FEATURES = ("keywords", "reference", "negation", "on_topic", "length")
"""Code's evidence as features: the shares of expected ideas and of the reference said, a negation the reference does
not share (1/0), the share of the answer's words on the item's topic, log(1 + the answer's content words)."""
_FIXED_FEATURES = frozenset({"bias", "model", *CODE_FEATURES})


def _logit(p: float) -> float:
    p = min(max(p, 1e-4), 1 - 1e-4)
    return math.log(p / (1 - p))


@dataclass(frozen=True, kw_only=True)
class Calibration:
    """The fitted mapping from (the model's probabilities, code's evidence) to P(a person says correct).

    `weights` name the features: `bias`; `model` — the logit of P(correct) + P(partial)/2 —; code's evidence
    (`CODE_FEATURES`); any other name is a yes/no reading of the verdict (`_judge.VERDICT_READINGS`, e.g.
    `same`: "does the answer say what the reference says?"), its feature the logit of the model's P(yes), and
    `readings` lists them for the judge to read. `threshold` is the probability at which an answer counts as correct
    (score 80). `source` says what it was fitted on."""

    weights: Mapping[str, float]
    threshold: float
    source: str
    fallback: Calibration | None = None
    """The mapping for a verdict that lacks one of this one's readings (no time left, a model that cannot give it —
    the grading probe reads only the model it was fitted on); None: a missing reading stands as `model`."""

    @property
    def readings(self) -> tuple[str, ...]:
        """The verdict's yes/no readings this mapping uses (weights other than the fixed features, not zero)."""
        return tuple(name for name, w in self.weights.items() if name not in _FIXED_FEATURES and w != 0.0)

    @property
    def wanted(self) -> tuple[str, ...]:
        """The readings to ask the judge for: this mapping's, then its fallbacks' (read where they can be)."""
        later = self.fallback.wanted if self.fallback is not None else ()
        return tuple(dict.fromkeys((*self.readings, *later)))

    @staticmethod
    def features(
        probabilities: Mapping[str, float] | None, found: Evidence, readings: Sequence[str] = ("same",)
    ) -> dict[str, float]:
        """The features of an answer: the fixed ones and one per name of `readings` (a reading missing — no time
        left, or a model without probabilities — stands as the labels' `model` feature)."""
        model = 0.0 if probabilities is None else _logit(probabilities["correct"] + probabilities.get("partial", 0) / 2)
        read = {name: (probabilities or {}).get(name) for name in readings}
        return {
            "bias": 1.0,
            "model": model,
            "keywords": found.keyword_share,
            "reference": found.reference_share if found.reference_share is not None else found.keyword_share,
            "negation": float(found.negation_differs),
            "on_topic": found.on_topic_share if found.on_topic_share is not None else 0.0,
            "length": math.log1p(found.answer_tokens),
            **{name: model if p is None else _logit(p) for name, p in read.items()},
        }

    def for_verdict(self, probabilities: Mapping[str, float] | None) -> Calibration:
        """The mapping for this verdict: this one, or its `fallback` (in turn) when a reading it weighs is missing."""
        if self.fallback is not None and any(name not in (probabilities or {}) for name in self.readings):
            return self.fallback.for_verdict(probabilities)
        return self

    def probability(self, probabilities: Mapping[str, float] | None, found: Evidence) -> float:
        """P(correct) by the fitted logistic model (`for_verdict` picks the model first)."""
        x = self.features(probabilities, found, self.readings)
        z = sum(self.weights.get(name, 0.0) * value for name, value in x.items())
        return 1 / (1 + math.exp(-max(min(z, 40.0), -40.0)))

    def score(self, p: float) -> int:
        """P(correct) as the seed's 0-100 score: `threshold` is 80, linear on each side."""
        t = min(max(self.threshold, 1e-6), 1 - 1e-6)
        value = 80 * p / t if p < t else 80 + 20 * (p - t) / (1 - t)
        return max(0, min(100, math.floor(value + 1e-9)))

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=1, ensure_ascii=False) + "\n"

    @classmethod
    def from_file(cls, path: Path) -> Calibration:
        return cls.from_dict(json.loads(path.read_text(encoding="utf-8")))

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> Calibration:
        fallback = data.get("fallback")
        return cls(
            weights={str(k): float(v) for k, v in dict(data["weights"]).items()},  # type: ignore[call-overload]
            threshold=float(data["threshold"]),  # type: ignore[arg-type]
            source=str(data["source"]),
            fallback=cls.from_dict(fallback) if isinstance(fallback, Mapping) else None,
        )


@cache
def default_calibration() -> Calibration:
    """The shipped calibration (`data/grading_calibration.json`)."""
    return Calibration.from_file(CALIBRATION_FILE)
