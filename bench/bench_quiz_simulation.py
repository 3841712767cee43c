"""Simulated adaptive tests: bias and RMSE of θ after 10, 20 and 30 items, quiz against catsim 0.21.0's simulator.

Same bank (500 2PL items, a ~ lognormal(0, 0.3), b ~ U(−3, 3)), same examinees (θ ~ N(0, 1), `--examinees`), and
the same random numbers for the responses: catsim's `Simulator(seed=s)` answers item k of examinee i right when
P(θ_i) ≥ the (30·i + k)-th `uniform()` of `default_rng(s)` (every test here has exactly 30 items), and quiz's loop
uses that very sequence. Both start at θ = 0 and select by maximum information; they differ in the estimator:

* **catsim** (baseline): `FixedPointInitializer(0)`, `MaxInfoSelector()`, `NumericalSearchEstimator()` (maximum
  likelihood, Dodd's step while all answers are right or all wrong), `TestLengthStopper(max_items=30)`;
* **quiz**: `next_item(CatRules(randomesque=1))` and `eap` (prior N(0, 1)) after every answer;
* **quiz, exposure + content** [info]: `randomesque=5` and content targets 50/25/25 % over three categories.

Reported at 10, 20, 30 items: bias (mean of θ̂ − θ), RMSE, and for quiz the mean reported SE (EAP posterior SD,
which should be close to the RMSE); the ratio catsim RMSE / quiz RMSE; wall time per examinee of each simulation.

    .venv/bin/python bench/bench_quiz_simulation.py            # 1,000 examinees
    .venv/bin/python bench/bench_quiz_simulation.py --quick    # 150 examinees, writes quiz_simulation.quick.json
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import source_version  # noqa: E402
from _quiz_common import write_result  # noqa: E402

LENGTH = 30
CHECKPOINTS = (10, 20, 30)


def _catsim(
    a: np.ndarray, b: np.ndarray, thetas: np.ndarray, uniforms: np.ndarray, seed: int
) -> tuple[np.ndarray, float]:
    from catsim.estimation import NumericalSearchEstimator
    from catsim.initialization import FixedPointInitializer
    from catsim.selection import MaxInfoSelector
    from catsim.simulation import Simulator
    from catsim.stopping import TestLengthStopper

    n = a.size
    items = np.column_stack([a, b, np.zeros(n), np.ones(n)])
    sim = Simulator(items, thetas, seed=seed)
    t = time.perf_counter()
    sim.simulate(
        FixedPointInitializer(0.0), MaxInfoSelector(), NumericalSearchEstimator(), TestLengthStopper(max_items=LENGTH)
    )
    seconds = time.perf_counter() - t
    assert all(len(x) == LENGTH for x in sim.administered_items), "every catsim test must have 30 items"
    # the claim "same random numbers": catsim's answers are exactly P(θ) >= our uniforms
    from consulta.apps.quiz._irt import prob

    for i, (given, answers) in enumerate(zip(sim.administered_items, sim.response_vectors, strict=True)):
        expected = prob(thetas[i], a[given], b[given]) >= uniforms[i]
        assert np.array_equal(np.asarray(answers, dtype=bool), expected), (
            f"catsim drew examinee {i}'s answers otherwise"
        )
    return np.array([e[1 : LENGTH + 1] for e in sim.estimations]), seconds


def _quiz(
    a: np.ndarray, b: np.ndarray, categories: tuple[str, ...], thetas: np.ndarray, uniforms: np.ndarray, rules
) -> tuple[np.ndarray, np.ndarray, float]:
    from consulta.apps.quiz._cat import Bank, next_item
    from consulta.apps.quiz._irt import eap, prob

    bank = Bank(ids=tuple(f"q{i}" for i in range(a.size)), a=a, b=b, categories=categories)
    pick = np.random.default_rng(7)
    estimates = np.empty((thetas.size, LENGTH))
    ses = np.empty((thetas.size, LENGTH))
    t = time.perf_counter()
    for i, true_theta in enumerate(thetas):
        theta, given, answers = 0.0, [], []
        for k in range(LENGTH):
            item = next_item(bank, theta=theta, administered=given, rules=rules, rng=pick)
            assert item is not None
            given.append(item)
            answers.append(int(prob(true_theta, a[item], b[item]) >= uniforms[i, k]))
            est = eap(a[given], b[given], answers)
            theta = est.theta
            estimates[i, k], ses[i, k] = est.theta, est.se
    return estimates, ses, time.perf_counter() - t


def _stats(estimates: np.ndarray, thetas: np.ndarray, ses: np.ndarray | None = None) -> dict:
    out = {}
    for k in CHECKPOINTS:
        err = estimates[:, k - 1] - thetas
        row = {"bias": float(err.mean()), "rmse": float(np.sqrt(np.mean(err**2)))}
        if ses is not None:
            row["mean_se"] = float(ses[:, k - 1].mean())
        out[str(k)] = row
    return out


def run(args: argparse.Namespace) -> dict:
    from consulta.apps.quiz._cat import CatRules

    rng = np.random.default_rng(args.seed)
    n_items = args.items
    a = rng.lognormal(0.0, 0.3, n_items)
    b = rng.uniform(-3.0, 3.0, n_items)
    categories = tuple(("technical", "business", "general")[i % 3] for i in range(n_items))
    thetas = rng.normal(0.0, 1.0, args.examinees)
    # catsim's response draws, in its order: one uniform() per answer, examinee by examinee
    catsim_rng = np.random.default_rng(args.sim_seed)
    uniforms = np.array([[catsim_rng.uniform() for _ in range(LENGTH)] for _ in thetas])

    cat_est, cat_s = _catsim(a, b, thetas, uniforms, args.sim_seed)
    quiz_est, quiz_se, quiz_s = _quiz(
        a, b, categories, thetas, uniforms, CatRules(randomesque=1, min_items=1, max_items=LENGTH)
    )
    bal_rules = CatRules(
        randomesque=5,
        min_items=1,
        max_items=LENGTH,
        content_targets={"technical": 0.5, "business": 0.25, "general": 0.25},
    )
    bal_est, bal_se, bal_s = _quiz(a, b, categories, thetas, uniforms, bal_rules)

    sides = {
        "catsim 0.21.0 (MLE, baseline)": {"at": _stats(cat_est, thetas), "seconds_per_examinee": cat_s / thetas.size},
        "quiz (EAP, max info)": {"at": _stats(quiz_est, thetas, quiz_se), "seconds_per_examinee": quiz_s / thetas.size},
        "quiz (EAP, randomesque 5 + content) [info]": {
            "at": _stats(bal_est, thetas, bal_se),
            "seconds_per_examinee": bal_s / thetas.size,
        },
    }
    print(f"\nsimulated CATs: {n_items} items, {thetas.size} examinees θ ~ N(0,1), same response random numbers")
    header = (
        f"{'side':44}"
        + "".join(f" {'bias@' + str(k):>9} {'RMSE@' + str(k):>9}" for k in CHECKPOINTS)
        + f" {'ms/exam':>8}"
    )
    print(header)
    for name, s in sides.items():
        cells = "".join(f" {s['at'][str(k)]['bias']:>9.3f} {s['at'][str(k)]['rmse']:>9.3f}" for k in CHECKPOINTS)
        print(f"{name:44}{cells} {s['seconds_per_examinee'] * 1e3:>8.1f}")
    base, ours = sides["catsim 0.21.0 (MLE, baseline)"]["at"], sides["quiz (EAP, max info)"]["at"]
    ratios = {str(k): base[str(k)]["rmse"] / ours[str(k)]["rmse"] for k in CHECKPOINTS}
    print("RMSE ratio catsim/quiz: " + ", ".join(f"{k} items {ratios[str(k)]:.2f}x" for k in CHECKPOINTS))
    print("quiz mean reported SE: " + ", ".join(f"{k} items {ours[str(k)]['mean_se']:.3f}" for k in CHECKPOINTS))
    return {
        "benchmark": "quiz_simulation",
        "source": source_version(),
        "machine": platform.platform(),
        "items": n_items,
        "examinees": int(thetas.size),
        "seed": args.seed,
        "sim_seed": args.sim_seed,
        "baseline": "catsim 0.21.0 Simulator: FixedPointInitializer(0), MaxInfoSelector, NumericalSearchEstimator, TestLengthStopper(30)",
        "sides": sides,
        "rmse_ratio_catsim_over_quiz": ratios,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=500)
    parser.add_argument("--examinees", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=20261123)
    parser.add_argument("--sim-seed", type=int, default=11)
    parser.add_argument("--quick", action="store_true", help="150 examinees; writes quiz_simulation.quick.json")
    args = parser.parse_args(argv)
    if args.quick:
        args.examinees = 150
    result = run(args)
    write_result(result, "quiz_simulation", quick=args.quick)


if __name__ == "__main__":
    main()
