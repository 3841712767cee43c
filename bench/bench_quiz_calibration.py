"""2PL calibration: quiz's `calibrate_2pl` (PyPI mirt 1.2.0, MML-EM) against PyPI girth 0.8.0's `twopl_mml`.

Data, the same for both sides:
* **dense**: 20 items × 5,000 people, a ~ U(0.5, 2.0), b ~ N(0, 1), θ ~ N(0, 1), `--reps` datasets (seeds);
* **sparse** (skipped with `--quick`): 300 items × 5,000 people, each answering 20 random items (NaN elsewhere;
  girth gets its `INVALID_RESPONSE` code), the shape adaptive tests leave behind;
* **LSAT-6** (Bock & Lieberman 1970, 1,000 × 5): max |difference| from R ltm's published estimates.

Reported per side: seconds per fit (median over reps, after one warm-up fit each), RMSE of a and b against the
generating values, and the time ratio girth/quiz. Fits alternate which side goes first.

    .venv/bin/python bench/bench_quiz_calibration.py            # 5 dense reps + sparse + LSAT-6
    .venv/bin/python bench/bench_quiz_calibration.py --quick    # 2 dense reps + LSAT-6
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import source_version  # noqa: E402
from _quiz_common import write_result  # noqa: E402


def _simulate(
    n_items: int, n_people: int, per_person: int | None, seed: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    from consulta.apps.quiz._irt import prob

    rng = np.random.default_rng(seed)
    a = rng.uniform(0.5, 2.0, n_items)
    b = rng.normal(0.0, 1.0, n_items)
    theta = rng.normal(0.0, 1.0, n_people)
    u = (rng.random((n_people, n_items)) < prob(theta[:, None], a, b)).astype(float)
    if per_person is not None:
        keep = np.zeros_like(u, dtype=bool)
        for i in range(n_people):
            keep[i, rng.choice(n_items, per_person, replace=False)] = True
        u[~keep] = np.nan
    return a, b, u


def _quiz(u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    from consulta.apps.quiz._calibration import calibrate_2pl

    return calibrate_2pl(u)


def _girth(u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    import girth

    coded = np.where(np.isnan(u), girth.INVALID_RESPONSE, u).astype(int).T  # girth: items × people
    out = girth.twopl_mml(coded)
    return np.asarray(out["Discrimination"], dtype=float), np.asarray(out["Difficulty"], dtype=float)


SIDES = {"quiz (mirt 1.2.0)": _quiz, "girth 0.8.0 twopl_mml": _girth}


def _rmse(x: np.ndarray, y: np.ndarray) -> float:
    return float(np.sqrt(np.mean((x - y) ** 2)))


def _compare(datasets: list[tuple[np.ndarray, np.ndarray, np.ndarray]]) -> dict:
    out: dict[str, dict] = {name: {"seconds": [], "rmse_a": [], "rmse_b": []} for name in SIDES}
    for r, (a, b, u) in enumerate(datasets):
        order = list(SIDES) if r % 2 == 0 else list(reversed(SIDES))
        for name in order:
            t = time.perf_counter()
            a_hat, b_hat = SIDES[name](u)
            out[name]["seconds"].append(time.perf_counter() - t)
            out[name]["rmse_a"].append(_rmse(a_hat, a))
            out[name]["rmse_b"].append(_rmse(b_hat, b))
    summary = {}
    for name, v in out.items():
        summary[name] = {
            "seconds_median": statistics.median(v["seconds"]),
            "rmse_a_mean": statistics.fmean(v["rmse_a"]),
            "rmse_b_mean": statistics.fmean(v["rmse_b"]),
            **v,
        }
    quiz, girth = (summary[name]["seconds_median"] for name in SIDES)
    return {"sides": summary, "time_ratio_girth_over_quiz": girth / quiz}


def _print(title: str, result: dict) -> None:
    print(f"\n{title}")
    print(f"{'side':26} {'s per fit':>10} {'RMSE a':>8} {'RMSE b':>8}")
    for name, s in result["sides"].items():
        print(f"{name:26} {s['seconds_median']:>10.3f} {s['rmse_a_mean']:>8.4f} {s['rmse_b_mean']:>8.4f}")
    print(f"time ratio girth/quiz: {result['time_ratio_girth_over_quiz']:.1f}x")


def run(args: argparse.Namespace) -> dict:
    # warm-up: imports, mirt's Rust backend, girth's numba-free paths
    warm = _simulate(20, 500, None, 1)[2]
    for fit in SIDES.values():
        fit(warm)
    result: dict = {
        "benchmark": "quiz_calibration",
        "source": source_version(),
        "machine": platform.platform(),
        "baseline": "girth 0.8.0 twopl_mml (default options)",
    }
    dense = [_simulate(20, 5000, None, args.seed + r) for r in range(args.reps)]
    result["dense_20x5000"] = _compare(dense)
    _print(f"dense: 20 items × 5,000 people, {args.reps} datasets", result["dense_20x5000"])
    if not args.quick:
        sparse = [_simulate(300, 5000, 20, args.seed + 100)]
        result["sparse_300x5000_20each"] = _compare(sparse)
        _print("sparse: 300 items × 5,000 people answering 20 each, 1 dataset", result["sparse_300x5000_20each"])
    from consulta.apps.quiz._calibration import LSAT6_LTM_A, LSAT6_LTM_B, lsat6_matrix

    lsat = lsat6_matrix()
    ltm_a, ltm_b = np.array(LSAT6_LTM_A), np.array(LSAT6_LTM_B)
    published = {}
    print("\nLSAT-6 against R ltm's published 2PL estimates: max |difference|")
    for name, fit in SIDES.items():
        a_hat, b_hat = fit(lsat)
        published[name] = {
            "a": a_hat.round(4).tolist(),
            "b": b_hat.round(4).tolist(),
            "max_abs_diff_a": float(np.max(np.abs(a_hat - ltm_a))),
            "max_abs_diff_b": float(np.max(np.abs(b_hat - ltm_b))),
        }
        print(f"{name:26} a {published[name]['max_abs_diff_a']:.4f}   b {published[name]['max_abs_diff_b']:.4f}")
    result["lsat6_vs_ltm"] = {"ltm_a": list(LSAT6_LTM_A), "ltm_b": list(LSAT6_LTM_B), **published}
    return result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--seed", type=int, default=20261123)
    parser.add_argument(
        "--quick", action="store_true", help="2 dense reps, no sparse; writes quiz_calibration.quick.json"
    )
    args = parser.parse_args(argv)
    if args.quick:
        args.reps = 2
    result = run(args)
    write_result(result, "quiz_calibration", quick=args.quick)


if __name__ == "__main__":
    main()
