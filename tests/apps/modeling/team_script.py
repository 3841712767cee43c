"""Scripts for the scripted model double playing the modeling team: each agent's answers by mode, and the
consultations to make (asker → colleague)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from consulta.apps.modeling import AGENTS, load_problem, prepare_workspace
from consulta.models import ScriptedModel

SAMPLES = Path(__file__).parents[3] / "src/consulta/apps/modeling/data/samples"

WORK: dict[str, dict[str, Any]] = {
    "reader": {
        "summary": "题目要求分析月度用电量的趋势与季节性，建立预测模型，并做情景分析。",
        "tasks": ["分析趋势与季节性", "建立预测模型", "预测未来各月用电量"],
    },
    "researcher": {
        "methods": ["带季节项的线性回归", "指数平滑"],
        "recommendation": "推荐带趋势、季节虚拟变量与度日数的线性回归：可解释，便于情景分析。",
    },
    "modeler": {
        "assumptions": ["用电规律在预测期内不变", "度日数取历年同月平均"],
        "model_description": "总用电量 = 趋势 + 月份季节项 + 度日数的线性作用 + 误差。",
        "target": "total_gwh",
        "covariates": ["cooling_degree_days", "heating_degree_days"],
        "scenario_column": "cooling_degree_days",
        "scenario_factor": 1.2,
    },
    "data_engineer": {"cleaning_notes": "去掉重复行，按月份排序，缺失值线性插补。"},
    "code_translator": {"explanation": "使用团队模板。", "code": ""},
    "model_trainer": {"holdout": 12, "notes": "用最后一年检验。"},
    "visualizer": {"target_label": "月度总用电量", "captions": ["检验期拟合", "未来各月预测"]},
    "writer": {
        "abstract": "本文建立带季节项与度日数的回归模型预测月度用电量。",
        "discussion": "模型简单可解释，但假设未来气候与历年平均相同。",
        "conclusion": "夏冬两季是用电高峰，需提前安排发电与购电。",
    },
    "validator": {"status": "APPROVED", "reasons": ["产出齐全，检查通过。"]},
    "advisor": {"answer": "按题目要求作答即可。"},
}
ANSWER = {"answer": "可以，按你的理解做。", "note": "注意数据的单位。"}


def _call(args: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"tool_calls": [{"name": "final_result", "args": args}]}]


def team_script(
    consults: dict[str, str] | None = None,
    *,
    answers_consult: dict[str, str] | None = None,
    work: dict[str, dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """The team's script: `consults` asker → colleague (asked in the asker's work), `answers_consult` colleague →
    another (asked while answering a consultation); `work` overrides an agent's work answer."""
    consults, answers_consult, work = consults or {}, answers_consult or {}, {**WORK, **(work or {})}
    agents = []
    for agent in AGENTS:
        own = work[agent] if agent != "advisor" else {}
        agents.append({"when": f"@{agent}/work+reply", "steps": _call({**own, "used_reply": f"{agent} 采纳了回复。"})})
        asked = (
            {"consult_agent": consults[agent], "consult_question": f"{agent} 想确认：这样理解对吗？"}
            if agent in consults
            else {}
        )
        agents.append({"when": f"@{agent}/work", "steps": _call({**own, **asked})})
        agents.append(
            {"when": f"@{agent}/answer+reply", "steps": _call({**ANSWER, "used_reply": f"{agent} 参考了同伴的回复。"})}
        )
        nested = (
            {"consult_agent": answers_consult[agent], "consult_question": f"{agent} 回答前想问：这一点你怎么看？"}
            if agent in answers_consult
            else {}
        )
        agents.append(
            {
                "when": f"@{agent}/answer",
                "steps": _call({**ANSWER, "answer": f"{agent} 的回答：可以这样做。", **nested}),
            }
        )
    return {"agents": agents}


def scripted(**kwargs: Any) -> ScriptedModel:
    return ScriptedModel(team_script(**kwargs))


def write_script(path: Path, **kwargs: Any) -> Path:
    path.write_text(json.dumps(team_script(**kwargs), ensure_ascii=False), encoding="utf-8")
    return path


def workspace(tmp_path: Path, sample: str = "electricity_demand", *, problem: Path | None = None) -> tuple[Path, Any]:
    """A fresh workspace for a copy of the sample (or `problem`), with the problem prepared."""
    source = problem or tmp_path / "problems" / sample
    if problem is None:
        shutil.copytree(SAMPLES / sample, source)
    ws = tmp_path / "ws"
    return ws, prepare_workspace(ws, source)


def problem_loaded(sample: str) -> Any:
    return load_problem(SAMPLES / sample)


HOUSE_EFFECTS = {"floor_area_m2": 32.0, "rooms": 40.0, "age_years": -6.0, "distance_km": -18.0}
"""The coefficients the generated house prices are made with (plus 800, a category effect and noise of sd 150)."""
HEATING_EFFECTS = {"gas": 0.0, "electric": -120.0, "heat_pump": 150.0}
HOUSES_CASE = "Predict the price of a 100 m2, 3-room, 10-year-old house 5 km from the centre."


def houses_problem(folder: Path, *, rows: int = 240, case: str = HOUSES_CASE, seed: int = 7) -> Path:
    """A cross-sectional problem nobody tuned the team for: house prices (thousands) from area, rooms, age, distance
    and heating (text), rows identified by a text id; `case` is the requirement naming a house to predict."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({
        "house_id": [f"H{i:04d}" for i in range(1, rows + 1)], "floor_area_m2": rng.uniform(40, 180, rows).round(1),
        "rooms": rng.integers(1, 7, rows), "age_years": rng.integers(0, 51, rows), "distance_km": rng.uniform(0.5, 25, rows).round(1),
        "heating": rng.choice(list(HEATING_EFFECTS), rows),
    })  # fmt: skip
    price = (
        800
        + sum(frame[c] * b for c, b in HOUSE_EFFECTS.items())
        + frame["heating"].map(HEATING_EFFECTS)
        + rng.normal(0, 150, rows)
    )
    frame["price_k"] = price.round(0)
    folder.mkdir(parents=True, exist_ok=True)
    frame.to_csv(folder / "houses.csv", index=False)
    (folder / "problem.md").write_text(
        "# House prices in a mid-sized city\n\n## Background\nAn estate agency has the sale prices (thousands) of the houses "
        "it sold last year with their floor area, number of rooms, age, distance to the city centre and heating (`houses.csv`).\n\n"
        "## Requirements\n1. Describe how each feature relates to price.\n2. Build a model that predicts the price of a house "
        f"from its features and report its error on held-out houses.\n3. {case}\n4. Which feature matters most for price?\n",
        encoding="utf-8",
    )
    return folder


HOUSES_MODELER = {
    "assumptions": ["Each feature acts linearly on price.", "Houses are independent."],
    "model_description": "price = intercept + a linear term per feature + heating category + error",
    "target": "price_k", "covariates": ["floor_area_m2", "rooms", "age_years", "distance_km", "heating"],
    "values": [{"column": "floor_area_m2", "value": 100}, {"column": "rooms", "value": 3}, {"column": "age_years", "value": 10}, {"column": "distance_km", "value": 5}],
}  # fmt: skip
"""The modeler's answers for the houses problem (its work, and the case it reads from the statement)."""
