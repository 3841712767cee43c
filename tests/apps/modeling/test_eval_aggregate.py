"""bench/eval_modeling.py --aggregate: issue 24's measures over the latest committed embedded-model run of each
problem (the file git committed last wins; a scripted run and a file git never saw are not read)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import eval_modeling


def _run(problem: str, *, wall: float, found: int, right: int, answered: int, untraced: int = 0) -> dict[str, object]:
    return {"problem": problem, "exit_status": 0, "wall_time_s": wall, "pdf": True, "tasks_expected": 2,
            "tasks_found": found, "families_right": right, "families_expected": 2, "answered_or_declined": answered,
            "untraced_numbers": untraced}  # fmt: skip


def _commit(root: Path, name: str, model: str, runs: list[dict[str, object]], date: str) -> None:
    (root / name).write_text(json.dumps({"model": model, "runs": runs}), encoding="utf-8")
    env = {**os.environ, "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
    for command in (["git", "add", name], ["git", "commit", "-qm", name]):
        subprocess.run(command, cwd=root, env=env, check=True, capture_output=True)


def test_the_latest_committed_local_run_of_each_problem_is_measured(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run(["git", "config", "user.email", "t@t"], cwd=tmp_path, check=True)
    subprocess.run(["git", "config", "user.name", "t"], cwd=tmp_path, check=True)
    _commit(
        tmp_path,
        "modeling_eval.a.old.json",
        "local",
        [_run("a", wall=900, found=1, right=0, answered=0)],
        "2026-01-01T00:00:00",
    )
    _commit(
        tmp_path,
        "modeling_eval.a.new.json",
        "local",
        [_run("a", wall=100, found=2, right=2, answered=2)],
        "2026-01-02T00:00:00",
    )
    _commit(
        tmp_path,
        "modeling_eval.b.x.json",
        "local",
        [_run("b", wall=300, found=2, right=1, answered=2, untraced=1)],
        "2026-01-03T00:00:00",
    )
    _commit(
        tmp_path,
        "modeling_eval.scripted.json",
        "scripted",
        [_run("a", wall=9, found=0, right=0, answered=0)],
        "2026-01-04T00:00:00",
    )
    (tmp_path / "modeling_eval.a.dirty.json").write_text(
        json.dumps({"model": "local", "runs": [_run("a", wall=1, found=0, right=0, answered=0)]}), encoding="utf-8"
    )  # never committed: not read
    report = eval_modeling.aggregate(tmp_path, tmp_path / "out.json")
    assert [(r["problem"], r["file"]) for r in report["rows"]] == [
        ("a", "modeling_eval.a.new.json"), ("b", "modeling_eval.b.x.json")
    ]  # fmt: skip
    summary = report["summary"]
    assert summary["tasks_found_pct"] == 100.0 and summary["family_fits_pct"] == 75.0
    assert summary["tasks_answered_or_declined"] == "4/4" and summary["untraced_numbers"] == 1
    assert summary["median_wall_time_s"] == 200.0 and "a" not in summary["not_run"]
    assert json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))["summary"] == summary
