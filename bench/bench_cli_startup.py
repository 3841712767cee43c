"""How long the `consulta` command takes to start: `consulta --help`, and `consulta asks` on an empty store (made
before the timing by one `consulta asks`), each against `python -c pass` (the interpreter's own start-up) measured in
the same run, rounds interleaved so that a busy machine weighs on all three alike.

Targets (issue 21, on 2 cores): `consulta --help` ≤ 0.5 s, `consulta asks` ≤ 1.0 s (the median wall time). Printed:
the median and best wall time of each, its median CPU time (user + system, which a busy machine inflates less than
wall time), and each command's ratio to `python -c pass`.

    .venv/bin/python bench/bench_cli_startup.py             # 15 rounds
    .venv/bin/python bench/bench_cli_startup.py --quick     # 3 rounds
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import source_version  # noqa: E402

CONSULTA = [sys.executable, "-m", "consulta"]
COMMANDS = {
    "python -c pass": ([sys.executable, "-c", "pass"], None),
    "consulta --help": ([*CONSULTA, "--help"], 0.5),
    "consulta asks": ([*CONSULTA, "asks"], 1.0),
}
"""Name → (argv, target in seconds or None for the baseline)."""


def wall(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """The command's wall time and its CPU time (user + system: what a busy machine does not inflate as much)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {done.returncode}:\n{done.stdout}{done.stderr}")
    return elapsed, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--quick", action="store_true", help="3 rounds")
    args = parser.parse_args()
    rounds = 3 if args.quick else args.rounds

    with tempfile.TemporaryDirectory(prefix="consulta-bench-cli-") as home:
        env = {**os.environ, "CONSULTA_HOME": home, "CONSULTA_LANG": "en", "PYDANTIC_AI_NO_BANNER": "1"}
        env.pop("CONSULTA_DATABASE_URL", None)
        # As installed Python runs: bytecode written by the warm-up and reused (a shell here may turn writing it off;
        # then a fresh install would compile every module from source at each start).
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        for argv, _ in COMMANDS.values():  # warm: .pyc files written, the empty store created and migrated
            wall(argv, env)
        times: dict[str, list[float]] = {name: [] for name in COMMANDS}
        cpu: dict[str, list[float]] = {name: [] for name in COMMANDS}
        for _ in range(rounds):
            for name, (argv, _) in COMMANDS.items():
                elapsed, used = wall(argv, env)
                times[name].append(elapsed)
                cpu[name].append(used)

    base = statistics.median(times["python -c pass"])
    rows = []
    print(f"{'command':<18} {'median s':>9} {'best s':>8} {'cpu s':>7} {'× pass':>8} {'target s':>9}  verdict")
    for name, (_, target) in COMMANDS.items():
        median, best, used = statistics.median(times[name]), min(times[name]), statistics.median(cpu[name])
        verdict = "-" if target is None else ("PASS" if median <= target else "MISS")
        rows.append(
            {"command": name, "median_s": median, "best_s": best, "cpu_s": used, "ratio": median / base, "target_s": target,
             "verdict": verdict}
        )  # fmt: skip
        print(
            f"{name:<18} {median:>9.3f} {best:>8.3f} {used:>7.3f} {median / base:>8.1f} "
            f"{'-' if target is None else f'{target:.1f}':>9}  {verdict}"
        )
    print(f"rounds: {rounds}; load average at the end: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    results = Path(__file__).resolve().parent / "results"
    results.mkdir(exist_ok=True)
    name = "bench_cli_startup" + (".quick" if args.quick else "")
    (results / f"{name}.json").write_text(
        json.dumps(
            {
                "source": source_version(),
                "rounds": rounds,
                "load": os.getloadavg(),
                "rows": rows,
            },
            indent=2,
        )
        + "\n",
        encoding="utf-8",
    )


if __name__ == "__main__":
    main()
