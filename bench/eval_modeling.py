"""The modeling team on problems nobody tuned it for: each problem is generated here from a seed with a known truth
(the coefficients the data were made with, the value of the case asked about), written as a problem folder, and
solved by the real command (`consulta chat modeling --problem DIR -p …`, a new data dir each, the model named by
`--model`). Each run is then read from its workspace and checked in code:

- the model kind chosen (regression for rows that are units, forecast for a series, epidemic for case counts);
- exit status, wall time, the PDF, the four gates' verdicts, answers, consultations, reworks;
- against the truth: a regression's effects (how many truths lie in their interval), the most important feature,
  the case's prediction (its error, and whether the truth is in the interval); a forecast's holdout MAPE;
- the paper's text: no forecast words in a regression's paper; every sentence of its results is code's.

The problems: house prices (English, a categorical covariate, a case to predict), student scores (Chinese column
names, a case to predict), a factory's energy use over 60 months as a public benchmark's problem JSON (a forecast),
daily café sales with a date and temperature (a series), and wine ratings with no case asked (a regression where
nothing must be predicted).

    flock /tmp/consulta-model.lock .venv/bin/python bench/eval_modeling.py --model local   # results/modeling_eval.json
    .venv/bin/python bench/eval_modeling.py --model scripted --only houses_en                # the code paths, quickly
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from consulta.apps.modeling._tasks import statement_tasks

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import source_version  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


@dataclass
class Truth:
    kind: str
    effects: dict[str, float] = field(default_factory=dict)
    """term → the coefficient the data were made with (regression)."""
    top: str | None = None
    """The covariate that matters most (regression)."""
    case_value: float | None = None
    """The target's expected value for the case the problem asks about (None: no case is asked)."""
    tasks: int = 0
    """The tasks the statement poses ("Task 1: …"); 0: it names none."""


def _houses(folder: Path, rng: np.random.Generator) -> Truth:
    n = 220
    frame = pd.DataFrame({
        "listing": [f"L-{i:03d}" for i in range(n)], "area_sqm": rng.uniform(35, 190, n).round(1), "bedrooms": rng.integers(1, 6, n),
        "built_year_age": rng.integers(0, 60, n), "km_to_centre": rng.uniform(0.3, 30, n).round(1),
        "garden": rng.choice(["none", "small", "large"], n),
    })  # fmt: skip
    garden = {"large": 0.0, "none": -90.0, "small": -40.0}  # the first value (sorted) is the baseline
    price = (
        650
        + 28 * frame.area_sqm
        + 35 * frame.bedrooms
        - 4 * frame.built_year_age
        - 15 * frame.km_to_centre
        + frame.garden.map(garden)
        + rng.normal(0, 120, n)
    )
    frame["sale_price_k"] = price.round(0)
    frame.to_csv(folder / "sales.csv", index=False)
    (folder / "problem.md").write_text(
        "# What sets the price of a house?\n\nA property website gives the last year's sales (`sales.csv`): floor area, bedrooms, "
        "age, distance to the centre, the garden, and the price in thousands.\n\nTasks: explain how each feature affects the price; "
        "build a model and test it on houses it has not seen; estimate the price of a 120 m2 house with 3 bedrooms, 15 years old, "
        "8 km from the centre; say which feature matters most.\n",
        encoding="utf-8",
    )
    case = 650 + 28 * 120 + 35 * 3 - 4 * 15 - 15 * 8 + np.mean(list(garden.values()))
    effects = {
        "area_sqm": 28.0,
        "bedrooms": 35.0,
        "built_year_age": -4.0,
        "km_to_centre": -15.0,
        "garden=none": -90.0,
        "garden=small": -40.0,
    }
    return Truth(kind="regression", effects=effects, top="area_sqm", case_value=float(case))


def _scores(folder: Path, rng: np.random.Generator) -> Truth:
    n = 300
    frame = pd.DataFrame({
        "学号": [f"S{i:04d}" for i in range(n)], "每周学习小时": rng.uniform(2, 25, n).round(1), "睡眠小时": rng.uniform(5, 9.5, n).round(1),
        "缺课次数": rng.integers(0, 12, n), "班级": rng.choice(["一班", "二班", "三班"], n),
    })  # fmt: skip
    score = (
        20 + 2.0 * frame["每周学习小时"] + 2.5 * frame["睡眠小时"] - 1.5 * frame["缺课次数"] + rng.normal(0, 5, n)
    )  # at most 94: never clipped
    frame["期末成绩"] = score.clip(0, 100).round(1)
    frame.to_csv(folder / "students.csv", index=False)
    (folder / "problem.md").write_text(
        "# 期末成绩的影响因素\n\n学校收集了 300 名学生一学期的数据（`students.csv`）：每周学习小时、睡眠小时、缺课次数、班级和期末成绩。\n\n"
        "要求：分析各因素与期末成绩的关系；建立模型并在留出的学生上检验；预测一名每周学习 15 小时、每天睡眠 8 小时、缺课 2 次的学生的期末成绩；"
        "指出最重要的因素。\n",
        encoding="utf-8",
    )
    return Truth(
        kind="regression",
        effects={"每周学习小时": 2.0, "睡眠小时": 2.5, "缺课次数": -1.5},
        top="每周学习小时",
        case_value=20 + 2.0 * 15 + 2.5 * 8 - 1.5 * 2,
    )


def _factory(folder: Path, rng: np.random.Generator) -> Truth:
    months = pd.period_range("2019-01", periods=60, freq="M")
    t = np.arange(60)
    output = 1000 + 8 * t + rng.normal(0, 40, 60)
    energy = 200 + 0.9 * output + 60 * np.sin(2 * np.pi * (t % 12) / 12) + rng.normal(0, 25, 60)
    frame = pd.DataFrame({"month": months.astype(str), "output_tonnes": output.round(1), "energy_mwh": energy.round(1)})
    frame.to_csv(folder / "plant.csv", index=False)
    problem = {
        "background": "A cement plant records its monthly output and electricity use. Management plans next year's energy budget.",
        "problem_requirement": "Model the plant's monthly energy use from its output and the season, check the model on the last year, and forecast the next 12 months with an interval.",
        "dataset_path": ["plant.csv"],
        "dataset_description": {"plant.csv": "60 months of output and energy use"},
        "variable_description": {
            "month": "the month (YYYY-MM)",
            "output_tonnes": "cement produced (tonnes)",
            "energy_mwh": "electricity used (MWh)",
        },
        "addendum": "",
    }
    (folder / "problem.json").write_text(json.dumps(problem, ensure_ascii=False, indent=1), encoding="utf-8")
    return Truth(kind="forecast")


def _cafe(folder: Path, rng: np.random.Generator) -> Truth:
    days = pd.date_range("2024-03-01", periods=200, freq="D")
    temp = 12 + 10 * np.sin(2 * np.pi * np.arange(200) / 365) + rng.normal(0, 3, 200)
    weekend = (days.day_of_week >= 5).astype(int)
    sales = 300 + 6 * temp + 120 * weekend + rng.normal(0, 30, 200)
    pd.DataFrame(
        {
            "date": days.strftime("%Y-%m-%d"),
            "temperature_c": temp.round(1),
            "weekend": weekend,
            "sales_eur": sales.round(0),
        }
    ).to_csv(folder / "cafe.csv", index=False)
    (folder / "problem.md").write_text(
        "# Café sales\n\nA café logged its daily sales, the temperature and whether it was a weekend (`cafe.csv`). "
        "How do temperature and weekends drive sales, and what should it expect over the next two weeks?\n",
        encoding="utf-8",
    )
    return Truth(kind="forecast")


def _wine(folder: Path, rng: np.random.Generator) -> Truth:
    n = 180
    frame = pd.DataFrame(
        {
            "alcohol": rng.uniform(9, 14.5, n).round(2),
            "acidity": rng.uniform(3, 9, n).round(2),
            "sugar": rng.uniform(1, 12, n).round(1),
        }
    )
    frame["rating"] = (2 + 0.4 * frame.alcohol - 0.2 * frame.acidity + rng.normal(0, 0.4, n)).round(2)
    frame.to_csv(folder / "wine.csv", index=False)
    (folder / "problem.md").write_text(
        "# Wine ratings\n\nTasters rated wines (`wine.csv`). Which measured properties explain the ratings, and how well can they be predicted?\n",
        encoding="utf-8",
    )
    return Truth(
        kind="regression", effects={"alcohol": 0.4, "acidity": -0.2, "sugar": 0.0}, top="alcohol", case_value=None
    )


def _herd(folder: Path, rng: np.random.Generator) -> Truth:
    """Issue 24's contest-style problem: two tables of a herd's counts by age and sex (one age given twice, one
    missing), three tasks (survival by age, the age structure's future, a yearly policy). No family the team has fits
    it: the truth is that the tasks are found, each answered or declined with a reason, and a total regressed on its
    parts is rejected."""
    survival = np.linspace(0.92, 0.6, 16)

    def year(n0: int) -> pd.DataFrame:
        female, male = [n0], [n0]
        for s in survival[:-1]:
            female.append(int(female[-1] * s + rng.integers(-3, 4)))
            male.append(int(male[-1] * (s - 0.05) + rng.integers(-3, 4)))
        frame = pd.DataFrame({"age": range(16), "female": female, "male": male})
        frame["total"] = frame.female + frame.male
        return frame

    first = year(400)
    pd.concat([first.iloc[:6], first.iloc[[5]], first.iloc[7:]]).to_csv(folder / "herd_2023.csv", index=False)
    year(420).to_csv(folder / "herd_2024.csv", index=False)
    (folder / "problem.md").write_text(
        "# Managing an elephant herd\n\n## Background\nA park counted its elephants by age and sex in two consecutive "
        "years (`herd_2023.csv`, `herd_2024.csv`: females and males of each age, and their total).\n\n## Tasks\n"
        "Task 1: Estimate the survival rate of each age from the two years' counts.\n"
        "Task 2: Describe the herd's age structure and how it will change over the next 10 years if nothing is done.\n"
        "Task 3: Propose a yearly management policy (how many animals to relocate each year) that keeps the herd near "
        "11,000.\n",
        encoding="utf-8",
    )
    return Truth(kind="population", tasks=3)


PROBLEMS: dict[str, tuple[Callable[[Path, np.random.Generator], Truth], str]] = {
    "houses_en": (_houses, "start"), "scores_zh": (_scores, "开始"), "factory_benchmark_json": (_factory, "start"),
    "cafe_daily": (_cafe, "start"), "wine_no_case": (_wine, "start"), "herd_tasks_en": (_herd, "start"),
}  # fmt: skip


def _rows(path: Path) -> list[dict[str, str]]:
    if not path.is_file():
        return []
    with path.open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def _judge(ws: Path, truth: Truth) -> dict[str, Any]:
    """What the run's files say, against the truth."""
    memo = (
        json.loads((ws / "state" / "director.json").read_text(encoding="utf-8"))
        if (ws / "state" / "director.json").is_file()
        else {}
    )
    plan = (memo.get("notes", {}).get("plan") or [""])[0]
    kind = plan.split(":", 1)[1].split()[0] if plan.startswith("model:") else None
    verdicts = {}
    for path in sorted((ws / "validation").glob("*.md")):
        text = path.read_text(encoding="utf-8")
        verdicts[path.stem] = text.split("## 结论", 1)[1].split("##", 1)[0].strip() if "## 结论" in text else "?"
    paper = (ws / "paper" / "paper.md").read_text(encoding="utf-8") if (ws / "paper" / "paper.md").is_file() else ""
    out: dict[str, Any] = {
        "kind_chosen": kind, "kind_expected": truth.kind, "kind_right": kind == truth.kind, "plan_notes": memo.get("notes", {}).get("plan", []),
        "verdicts": verdicts, "pdf": (ws / "paper" / "paper.pdf").is_file(), "results": sorted(p.name for p in (ws / "results").glob("*.csv")),
        "provenance": memo.get("notes", {}).get("provenance", {}),
    }  # fmt: skip
    if kind == "regression":
        coefficients = {r["term"]: r for r in _rows(ws / "results" / "coefficients.csv")}
        covered = {
            t: float(coefficients[t]["lower_95"]) <= v <= float(coefficients[t]["upper_95"])
            for t, v in truth.effects.items()
            if t in coefficients
        }
        out["effects_in_interval"] = f"{sum(covered.values())}/{len(truth.effects)}"
        out["effects_missing"] = sorted(set(truth.effects) - set(coefficients))
        ranked = _rows(ws / "results" / "importance.csv")
        out["top_feature"] = ranked[0]["covariate"] if ranked else None
        out["top_right"] = out["top_feature"] == truth.top
        prediction = _rows(ws / "results" / "prediction.csv")
        out["case_asked"] = truth.case_value is not None
        out["case_predicted"] = bool(prediction)
        out["scenario"] = _rows(ws / "results" / "scenario.csv")
        if prediction and truth.case_value is not None:
            p = prediction[0]
            out["case_error"] = round(float(p["predicted"]) - truth.case_value, 2)
            out["case_truth_in_interval"] = float(p["lower_95"]) <= truth.case_value <= float(p["upper_95"])
        out["forecast_words_in_paper"] = any(w in paper.lower() for w in ("forecast", "trend", "预测期", "趋势"))
    metrics = {r["metric"]: r["value"] for r in _rows(ws / "results" / "metrics.csv")}
    out["metrics"] = metrics
    statement = "".join(p.read_text(encoding="utf-8") for p in sorted((ws / "problem").glob("problem.md")))
    sections = re.findall(r"^### \d+\.\d+ (?:Task|问题) (\d+)\n\n[^\n]*\n\n([^\n]*)", paper, re.M)
    out["tasks_expected"] = truth.tasks
    out["tasks_found"] = len(statement_tasks(statement))
    out["tasks_answered"] = sum(not text.startswith(("Not answered", "未能回答")) for _, text in sections)
    out["tasks_declined_with_reason"] = sum(text.startswith(("Not answered", "未能回答")) for _, text in sections)
    return out


def run_one(name: str, *, model: str, script: Path | None, timeout: float, keep: Path | None) -> dict[str, Any]:
    make, prompt = PROBLEMS[name]
    base = Path(tempfile.mkdtemp(prefix=f"eval-modeling-{name}-", dir=keep))
    folder = base / "problem" / name
    folder.mkdir(parents=True)
    truth = make(folder, np.random.default_rng(sum(map(ord, name))))  # a seed of its own name: the same data every run
    home = base / "home"
    home.mkdir()
    models = Path(os.environ.get("CONSULTA_HOME", Path.home() / ".consulta")) / "models"
    if models.is_dir():
        (home / "models").symlink_to(models)  # the embedded model is not downloaded again
    spec = f"scripted:{script}" if model == "scripted" else model
    command = [
        sys.executable,
        "-m",
        "consulta",
        "chat",
        "modeling",
        "--model",
        spec,
        "--problem",
        str(folder),
        "-p",
        prompt,
        "--quiet",
    ]
    started = time.perf_counter()
    try:
        done = subprocess.run(
            command, env={**os.environ, "CONSULTA_HOME": str(home)}, capture_output=True, text=True, timeout=timeout
        )
        status, tail = done.returncode, (done.stdout + done.stderr)[-600:]
    except subprocess.TimeoutExpired:
        status, tail = "timeout", ""
    seconds = round(time.perf_counter() - started, 1)
    workspaces = list((home / "apps" / "modeling" / "runs").glob("*/*"))  # runs/<problem>/<run>/
    result: dict[str, Any] = {"problem": name, "exit_status": status, "wall_time_s": seconds, "output_tail": tail}
    if workspaces:
        ws = workspaces[0]
        memo = (
            json.loads((ws / "state" / "director.json").read_text(encoding="utf-8"))
            if (ws / "state" / "director.json").is_file()
            else {}
        )
        consults = list(memo.get("consults", {}).values())
        result |= {
            "workspace": str(ws), "answers": len(memo.get("answers", {})), "consultations": sum(c["status"] == "done" for c in consults),
            "refused": sum(c["status"] == "refused" for c in consults), **_judge(ws, truth),
        }  # fmt: skip
        result["reworks"] = sum(v == "REJECTED" for v in result["verdicts"].values())
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--model",
        default="local",
        help="local (the embedded model), openai:NAME, or scripted (the test double's team script)",
    )
    parser.add_argument("--only", nargs="*", choices=sorted(PROBLEMS), help="run only these problems")
    parser.add_argument("--timeout", type=float, default=1500.0, help="seconds per problem")
    parser.add_argument(
        "--keep",
        type=Path,
        default=None,
        help="make the problems and workspaces under this folder (default: a temp folder)",
    )
    parser.add_argument(
        "--out", type=Path, default=None, help="results file (default: bench/results/modeling_eval[.scripted].json)"
    )
    args = parser.parse_args()
    script = None
    if args.model == "scripted":
        sys.path.insert(0, str(ROOT / "tests"))
        from apps.modeling.team_script import write_script

        script = write_script(Path(tempfile.mkdtemp()) / "team.json")
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
    runs = []
    for name in args.only or list(PROBLEMS):
        print(f"… {name}", flush=True)
        result = run_one(name, model=args.model, script=script, timeout=args.timeout, keep=args.keep)
        runs.append(result)
        brief = {
            k: result.get(k)
            for k in (
                "exit_status",
                "wall_time_s",
                "kind_chosen",
                "pdf",
                "reworks",
                "consultations",
                "effects_in_interval",
                "top_right",
                "case_predicted",
                "case_error",
            )
        }
        print(f"  {json.dumps(brief, ensure_ascii=False)}", flush=True)
    summary = {
        "problems": len(runs), "exit_0": sum(r["exit_status"] == 0 for r in runs), "pdf": sum(bool(r.get("pdf")) for r in runs),
        "kind_right": sum(bool(r.get("kind_right")) for r in runs),
        "all_gates_passed": sum(bool(r.get("verdicts")) and list(r["verdicts"].values()).count("REJECTED") == 0 and len(r["verdicts"]) == 4 for r in runs),
        "cases_asked": sum(bool(r.get("case_asked")) for r in runs), "cases_predicted_when_asked": sum(bool(r.get("case_predicted")) and bool(r.get("case_asked")) for r in runs),
        "cases_predicted_when_not_asked": sum(bool(r.get("case_predicted")) and not r.get("case_asked") for r in runs if r.get("kind_chosen") == "regression"),
        "median_wall_time_s": float(np.median([r["wall_time_s"] for r in runs])) if runs else None,
    }  # fmt: skip
    out = args.out or ROOT / "bench" / "results" / (
        "modeling_eval.scripted.json" if args.model == "scripted" else "modeling_eval.json"
    )
    out.write_text(
        json.dumps(
            {
                "benchmark": "modeling_eval",
                "source": source_version(),
                "model": args.model,
                "summary": summary,
                "runs": runs,
            },
            ensure_ascii=False,
            indent=1,
        ),
        encoding="utf-8",
    )
    print(json.dumps(summary, ensure_ascii=False))
    print(f"written {out}")


if __name__ == "__main__":
    main()
