"""The cost of the OS sandbox (bubblewrap: namespaces, a dropped uid, read-only binds) per run of untrusted code.

Baseline: the audit-hook-only sandbox of commit 0597aa6 (`src/consulta/sandbox/_sandbox.py` and `_runner.py` as they
were there, read with `git show` into a temporary folder and imported under another name), measured in the same run
on the same machine. Measured: today's `consulta.sandbox.run_python`.

Two workloads, alternating between the two sandboxes run by run (so a burst of load on the shared machine hits both):
- `print(1)`: the median of 20 runs (the fixed cost: process start, isolation, the result back);
- the modeling app's `code/train.py` (the template for the electricity sample, after its clean_data and model
  scripts ran once), through `run_script` (staging, the run, the outputs taken back): the median of 5 runs.

Prints both medians and their ratio (new / baseline); writes bench/results/sandbox.json.

    .venv/bin/python bench/bench_sandbox.py [--print-runs 20] [--train-runs 5]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import source_version  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "apps" / "modeling"))
from team_script import SAMPLES, WORK  # noqa: E402

from consulta.apps.modeling import _sandbox_run, prepare_workspace  # noqa: E402
from consulta.apps.modeling._plan import plan_for  # noqa: E402
from consulta.apps.modeling._shape import describe_data  # noqa: E402
from consulta.apps.modeling._templates import script  # noqa: E402
from consulta.sandbox import run_python  # noqa: E402

BASELINE_COMMIT = "0597aa6"


def baseline_sandbox(folder: Path) -> ModuleType:
    """The audit-hook-only sandbox of BASELINE_COMMIT, imported from `folder` as `baseline_sandbox`."""
    for name in ("_sandbox.py", "_runner.py"):
        source = subprocess.run(
            ["git", "show", f"{BASELINE_COMMIT}:src/consulta/sandbox/{name}"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        (folder / name).write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("baseline_sandbox", folder / "_sandbox.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["baseline_sandbox"] = module
    spec.loader.exec_module(module)
    return module


def timed(action) -> float:  # noqa: ANN001 - a callable of no arguments
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def train_workspace(root: Path) -> Path:
    """A workspace of the electricity sample with the template's scripts and the cleaned data (clean_data and model
    run once in today's sandbox), ready for code/train.py."""
    workspace = root / "ws"
    problem = prepare_workspace(workspace, SAMPLES / "electricity_demand")
    plan, _ = plan_for(
        describe_data(workspace / "problem"), {**WORK["modeler"], **WORK["model_trainer"]}, problem.statement
    )
    for name in ("clean_data", "model", "train"):
        (workspace / "code" / f"{name}.py").write_text(script(name, plan), encoding="utf-8")
    for name in ("clean_data", "model"):
        ran = _sandbox_run.run_script(workspace, workspace / "code" / f"{name}.py")
        assert ran.ok, (name, ran.error, ran.stderr[-500:])
    return workspace


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--print-runs", type=int, default=20)
    parser.add_argument("--train-runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-sandbox-") as root:
        old = baseline_sandbox(Path(root))
        sides = {"baseline": old.run_python, "bwrap": run_python}
        for side in sides.values():  # warm both (imports, the probe) before timing
            assert side("print(1)").stdout == "1\n"
        prints: dict[str, list[float]] = {name: [] for name in sides}
        for _ in range(args.print_runs):
            for name, run in sides.items():
                prints[name].append(timed(lambda run=run: run("print(1)")))
        workspace = train_workspace(Path(root))
        train = workspace / "code" / "train.py"
        trains: dict[str, list[float]] = {name: [] for name in sides}
        for _ in range(args.train_runs):
            for name, run in sides.items():
                _sandbox_run.run_python = run  # run_script's sandbox: the baseline's or today's
                try:
                    took = timed(lambda: trains_ok(workspace, train))
                finally:
                    _sandbox_run.run_python = run_python
                trains[name].append(took)
    results = {"source": source_version(), "baseline": f"audit hook only ({BASELINE_COMMIT})", "workloads": {}}
    print(f"sandbox cost per run, {source_version()} vs the audit-hook-only sandbox of {BASELINE_COMMIT}")
    print(f"{'workload':<28}{'baseline ms':>14}{'bwrap ms':>12}{'ratio':>8}")
    for label, times, n in (("print(1)", prints, args.print_runs), ("modeling train.py", trains, args.train_runs)):
        base, new = statistics.median(times["baseline"]) * 1000, statistics.median(times["bwrap"]) * 1000
        print(f"{label + f' (median of {n})':<28}{base:>14.1f}{new:>12.1f}{new / base:>7.2f}×")
        results["workloads"][label] = {
            "runs": n,
            "baseline_median_ms": round(base, 1),
            "bwrap_median_ms": round(new, 1),
            "ratio": round(new / base, 3),
        }
    out = ROOT / "bench" / "results" / "sandbox.json"
    out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(f"written: {out.relative_to(ROOT)}")


def trains_ok(workspace: Path, train: Path) -> None:
    ran = _sandbox_run.run_script(workspace, train)
    assert ran.ok, (ran.error, ran.stderr[-500:])


if __name__ == "__main__":
    main()
