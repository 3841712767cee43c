"""Evaluation and decision: AHP, TOPSIS, entropy weights, grey relational analysis."""

from __future__ import annotations

import re
from typing import Any, Literal

import pandas as pd
from pydantic import Field
from pydantic.json_schema import SkipJsonSchema

from ._base import Family, FamilyParams, ProblemData, columns_problem, num, numeric_columns, without_unit, zh

__all__ = [
    "Ahp",
    "AhpParams",
    "EntropyWeight",
    "EntropyWeightParams",
    "GreyRelational",
    "GreyRelationalParams",
    "Topsis",
    "TopsisParams",
    "stated_costs",
    "with_ahp_weights",
]


class AhpParams(FamilyParams):
    family: Literal["ahp"] = "ahp"
    label_column: str = Field("", max_length=60, description="判断矩阵的行标签列")


class Ahp(Family):
    name = "ahp"
    group = "evaluation"
    title = ("Analytic hierarchy process", "层次分析法（AHP）")
    aliases = ("AHP",)
    answers = frozenset({"ranking", "estimate", "policy"})
    Params = AhpParams
    outputs = ("weights", "ranking", "cr")
    cues = (
        "pairwise", "compar", "judg", "saaty", "hierarch", "criteri", "weight", "importance", "consisten", "两两",
        "比较", "判断矩阵", "层次", "准则", "权重", "重要性", "一致性",
    )  # fmt: skip

    def table_misfit(self, frame: pd.DataFrame) -> str:
        for column in frame.columns:
            labels = {str(v) for v in frame[column]}
            if len(frame) >= 2 and labels and labels <= {str(c) for c in frame.columns}:
                return ""
        return "it needs a square matrix of pairwise comparisons (its rows and columns naming the same items)"

    def check(self, data: ProblemData, params: Any) -> list[str]:
        p = AhpParams.model_validate(params)
        reasons = columns_problem(data, p.table, [p.label_column], numeric=False, min_rows=2)
        if reasons:
            return reasons
        frame = data.tables[p.table].set_index(p.label_column)
        labels = [str(i) for i in frame.index]
        matrix = frame[[c for c in frame.columns if str(c) in labels]]
        if matrix.shape != (len(labels), len(labels)):
            return [
                f"{p.table} is not a square pairwise comparison matrix (its rows and columns must name the same items)"
            ]
        values = matrix.to_numpy(dtype=float)
        if (values <= 0).any() or abs(values * values.T - 1).max() > 0.05:
            return [f"{p.table} is not reciprocal (a[i][j] · a[j][i] must be 1, every entry positive)"]
        return []

    def sentences(self, result: dict[str, Any], *, lang: str) -> list[str]:
        w = ", ".join(f"{k} {num(result['weights'][k])}" for k in result["ranking"])
        if zh(lang):
            verdict = "通过" if result["consistent"] else "未通过"
            return [f"AHP 权重（从大到小）：{w}。", f"最大特征值 {num(result['lambda_max'])}，一致性比率 CR = {num(result['cr'])}，一致性检验{verdict}。"]  # fmt: skip
        verdict = "passes" if result["consistent"] else "fails"
        return [f"AHP weights, largest first: {w}.", f"The largest eigenvalue is {num(result['lambda_max'])}; the consistency ratio CR = {num(result['cr'])}: the matrix {verdict} the consistency check."]  # fmt: skip


class _Criteria(FamilyParams):
    label_column: str = Field("", max_length=60, description="被评价对象的名称列")
    criteria: list[str] = Field(default_factory=list, max_length=12, description="评价指标列")
    cost_criteria: list[str] = Field(default_factory=list, max_length=12, description="越小越好的指标（成本型）")


class _Evaluation(Family):
    """A family that scores alternatives (a row each, named) on criteria (two numeric columns or more)."""

    def table_misfit(self, frame: pd.DataFrame) -> str:
        named = any(frame[c].notna().all() and not frame[c].duplicated().any() for c in frame.columns)
        if len(frame) < 3 or not named or len(numeric_columns(frame)) < 2:
            return "it needs a row per alternative (at least 3, each named once) and two numeric criteria or more"
        return ""


_RANKING = ("rank", "evaluat", "assess", "score", "criteri", "indicator", "best", "排序", "排名", "评价", "评估", "指标",
            "综合", "优劣")  # fmt: skip
"""Words a statement asking to score and rank alternatives uses."""


_LOWER = re.compile(
    r"(?:lower|smaller|less|fewer|shorter|cheaper)\s+(?:is|are)\s+better|\bthe\s+(?:lower|smaller|less|fewer|shorter)\b"
    r"[^.;]{0,30}?\bthe\s+better|\b(?:should|must)\s+be\s+(?:low|small|short|as low)|\bminimi[sz]|成本型|越(?:低|小|少|短|便宜)",
    re.I,
)
_HIGHER = re.compile(
    r"(?:higher|larger|greater|more|bigger|longer)\s+(?:is|are)\s+better|\bthe\s+(?:higher|larger|greater|more|bigger)\b"
    r"[^.;]{0,30}?\bthe\s+better|\b(?:should|must)\s+be\s+(?:high|large|as high)|\bmaximi[sz]|效益型|越(?:高|大|多|长)",
    re.I,
)
"""What a statement says of a criterion that is better low (a cost) or high (a benefit)."""
_COST_NAME = re.compile(
    r"(?<![A-Za-z])(?:costs?|prices?|expenses?|fees?|rents?|distances?|durations?|delays?|km|minutes?|min|hours?)"
    r"(?![A-Za-z])|费用|成本|价格|单价|价钱|租金|耗时|时间|距离|时长|能耗",
    re.I,
)
"""A criterion's name that says it is a cost (a price, a distance, a time measured in minutes)."""


_REST = re.compile(
    r"(?:其余|其他|其它|余下)(?:指标|的)?\s*(?P<zh>越(?:低|小|少|短)|越(?:高|大|多|长))"
    r"|(?:the\s+(?:others?|rest)|all\s+others?|other\s+criteria)\b[^.;]{0,20}?\b(?P<en>lower|smaller|less|higher|larger|greater|more)\b",
    re.I,
)
"""What a statement says of the criteria it names no direction for ("其余越高越好", "the others: higher is better")."""


def _mentions(statement: str, name: str) -> list[int]:
    """Where the statement names the criterion `name` (its column name, the unit in brackets or after its last "_"
    set aside, or its words with "_" read as a space)."""
    head = re.split(r"[（(\[]", name, maxsplit=1)[0].strip() or name
    bare = without_unit(name)
    forms = {name, head, head.replace("_", " "), bare, bare.replace("_", " ")}
    return sorted({m.start() for f in forms if f for m in re.finditer(re.escape(f), statement, re.I)})


def _stated_cost(statement: str, name: str, others: tuple[str, ...] = ()) -> bool | None:
    """Whether the statement says criterion `name` is better low (True) or high (False), by the nearest such words
    after a mention of it in the same sentence, before a mention of another criterion (`others`: in "质量、单价和服务，
    单价越低越好" the words are the price's), else just before it; None when it says neither."""
    for at in _mentions(statement, name):
        sentence_end = re.search(r"[。；;\n]|\.(?:\s|$)", statement[at:])
        after = statement[at : at + (sentence_end.start() if sentence_end else len(statement) - at)][:60]
        nxt = [i - at for o in others if o != name for i in _mentions(statement, o) if at < i < at + len(after)]
        after = after[: min(nxt)] if nxt else after
        found = [(m.start(), True) for m in _LOWER.finditer(after)] + [
            (m.start(), False) for m in _HIGHER.finditer(after)
        ]
        if found:
            return min(found)[1]
        before = re.split(r"[。；;\n,，]|\.(?:\s|$)", statement[max(0, at - 40) : at])[-1]
        found = [(m.end(), True) for m in _LOWER.finditer(before)] + [
            (m.end(), False) for m in _HIGHER.finditer(before)
        ]
        if found:
            return max(found)[1]
    return None


def stated_costs(params: FamilyParams, statement: str, columns: tuple[str, ...] = ()) -> FamilyParams:
    """`params` of an evaluation with its cost criteria (smaller better) as code reads them, not as the modeler
    guessed: a criterion the statement says is better low or high ("price (lower is better)", "价格越低越好"), else one
    whose name says it is a cost (a price, a distance, a time in minutes); the modeler's word only for a criterion of
    which neither says anything. Any other family's `params` as they are."""
    if not isinstance(params, _Criteria):
        return params
    costs = []
    rest = _REST.search(statement)
    rest_cost = bool(
        rest and re.match(r"越(?:低|小|少|短)|lower|smaller|less", rest.group("zh") or rest.group("en"), re.I)
    )
    for criterion in params.criteria:
        said = _stated_cost(statement, criterion, (*params.criteria, *columns))
        if said is None:
            said = True if _COST_NAME.search(criterion) else None
        if said is None and rest:  # "其余越高越好": what the statement says of the criteria it names no direction for
            said = rest_cost
        if said or (said is None and criterion in params.cost_criteria):
            costs.append(criterion)
    return params.model_copy(update={"cost_criteria": costs})


def _criteria_problem(data: ProblemData, p: _Criteria) -> list[str]:
    if len(p.criteria) < 2:
        return ["an evaluation needs at least two criteria"]
    reasons = columns_problem(data, p.table, p.criteria, min_rows=3)
    if p.table in data.tables:
        frame = data.tables[p.table]
        if p.label_column not in frame.columns:
            reasons.append(f"{p.table} has no label column {p.label_column!r}")
        elif frame[p.label_column].duplicated().any():
            reasons.append(f"{p.label_column} names an alternative twice")
        if not reasons and pd.api.types.is_numeric_dtype(frame[p.label_column]) and p.label_column in p.criteria:
            reasons.append("the label column cannot be a criterion")
    stray = sorted(set(p.cost_criteria) - set(p.criteria))
    if stray:
        reasons.append(f"cost criteria {stray} are not among the criteria")
    return reasons


def _ranking_sentence(result: dict[str, Any], key: str, lang: str, what: tuple[str, str]) -> str:
    top = ", ".join(f"{a} ({num(result[key][a])})" for a in result["ranking"])
    return f"按{what[1]}排序：{top}。" if zh(lang) else f"Ranked by {what[0]}: {top}."


def _weights_sentence(result: dict[str, Any], lang: str) -> str:
    w = ", ".join(f"{k} {num(v)}" for k, v in result["weights"].items())
    return f"指标权重：{w}。" if zh(lang) else f"Criteria weights: {w}."


class TopsisParams(_Criteria):
    family: Literal["topsis"] = "topsis"
    weighting: Literal["entropy", "equal"] = "entropy"
    ahp_weights: SkipJsonSchema[dict[str, float]] = Field(default_factory=dict)
    """The criteria's weights an earlier task's AHP computed, set by code (`with_ahp_weights`), never by the modeler:
    used in place of `weighting` when there."""
    weights_from: SkipJsonSchema[str] = ""
    """The result file those weights are read from (`results/<out>.json`)."""


def with_ahp_weights(params: FamilyParams, ahp: dict[str, dict[str, Any]]) -> FamilyParams:
    """A TOPSIS's `params` with the weights of an AHP run earlier for the same criteria (`ahp`: each AHP result
    file's name → its result JSON, the earliest first; its weights' names matching the criteria without case):
    the problem's own judgment of the criteria, in place of entropy or equal weights. Anything else as it is."""
    if not isinstance(params, TopsisParams):
        return params
    for file, result in ahp.items():
        weights = {str(k).strip().lower(): float(v) for k, v in (result.get("weights") or {}).items()}
        if len(params.criteria) >= 2 and sorted(weights) == sorted(c.strip().lower() for c in params.criteria):
            found = {c: weights[c.strip().lower()] for c in params.criteria}
            return params.model_copy(update={"ahp_weights": found, "weights_from": file})
    return params


class Topsis(_Evaluation):
    name = "topsis"
    group = "evaluation"
    title = ("TOPSIS", "TOPSIS 逼近理想解排序法")
    answers = frozenset({"ranking", "policy"})
    Params = TopsisParams
    outputs = ("weights", "scores", "ranking")
    weighed_by = frozenset({"ahp"})
    cues = (*_RANKING, "ideal", "select", "choose", "alternative", "candidate", "理想解", "选择", "选出", "方案优选")

    def check(self, data: ProblemData, params: Any) -> list[str]:
        return _criteria_problem(data, TopsisParams.model_validate(params))

    def sentences(self, result: dict[str, Any], *, lang: str) -> list[str]:
        w = ", ".join(f"{k} {num(v)}" for k, v in result["weights"].items())
        source, costs = result.get("weights_from") or "", result.get("cost_criteria") or []
        if zh(lang):
            how = {"ahp": f"取自层次分析法的结果 `{source}`", "entropy": "熵权法", "equal": "等权"}.get(
                result.get("weighting", ""), ""
            )
            lines = [f"指标权重（{how}）：{w}。"]
            lines += [f"成本型指标（越小越好）：{'、'.join(costs)}。"] if costs else []
        else:
            how = {"ahp": f"the AHP's, from `{source}`", "entropy": "entropy weights", "equal": "equal weights"}.get(
                result.get("weighting", ""), ""
            )
            lines = [f"Criteria weights ({how}): {w}."]
            lines += [f"Cost criteria (smaller is better): {', '.join(costs)}."] if costs else []
        return [*lines, _ranking_sentence(result, "scores", lang, ("closeness to the ideal", "与理想解的贴近度"))]  # fmt: skip


class EntropyWeightParams(_Criteria):
    family: Literal["entropy_weight"] = "entropy_weight"


class EntropyWeight(_Evaluation):
    name = "entropy_weight"
    group = "evaluation"
    title = ("Entropy weight method", "熵权法")
    answers = frozenset({"ranking", "estimate"})
    Params = EntropyWeightParams
    outputs = ("weights", "scores", "ranking")
    cues = (*_RANKING, "weight", "objective", "entropy", "权重", "赋权", "客观", "熵")

    def check(self, data: ProblemData, params: Any) -> list[str]:
        return _criteria_problem(data, EntropyWeightParams.model_validate(params))

    def sentences(self, result: dict[str, Any], *, lang: str) -> list[str]:
        first = (
            f"权重最大的指标：{result['top_criterion']}。"
            if zh(lang)
            else f"The criterion that weighs most: {result['top_criterion']}."
        )
        return [_weights_sentence(result, lang), first, _ranking_sentence(result, "scores", lang, ("weighted score", "加权得分"))]  # fmt: skip


class GreyRelationalParams(_Criteria):
    family: Literal["grey_relational"] = "grey_relational"
    rho: float = Field(0.5, gt=0, le=1, description="分辨系数")


class GreyRelational(_Evaluation):
    name = "grey_relational"
    group = "evaluation"
    title = ("Grey relational analysis", "灰色关联分析")
    answers = frozenset({"ranking", "explanation"})
    Params = GreyRelationalParams
    outputs = ("grades", "ranking")
    cues = (
        *_RANKING, "relat", "correlat", "factor", "influenc", "associat", "grey", "gray", "关联", "相关", "因素", "影响",
        "灰色",
    )  # fmt: skip

    def check(self, data: ProblemData, params: Any) -> list[str]:
        return _criteria_problem(data, GreyRelationalParams.model_validate(params))

    def sentences(self, result: dict[str, Any], *, lang: str) -> list[str]:
        return [_ranking_sentence(result, "grades", lang, (f"grey relational grade (ρ = {num(result['rho'])})", f"灰色关联度（ρ = {num(result['rho'])}）"))]  # fmt: skip
