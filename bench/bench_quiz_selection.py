"""Next-item selection on a 10,000-item 2PL bank: quiz's indexed selection against catsim 0.21.0's MaxInfoSelector.

Both sides get the same bank (a ~ lognormal(0, 0.3), b ~ N(0, 1.2)), the same θ and the same administered set for
every case; quiz runs with `CatRules(randomesque=1)` and no content balance, so both must return the item of maximum
information left — the choice is asserted equal for every case (the run fails otherwise). Cases: θ ~ N(0, 1.5) plus
a few extremes; administered = 0-30 random items, and in half the cases also the 1-40 most informative items at θ
(as a real test has given the items near θ, which the indexed walk must skip).

Timing: the cases are split into rounds; each round times catsim over its cases, then quiz over the same cases
(per call, `perf_counter_ns`), alternating which side goes first. Reported: median and p99 µs per selection and the
ratio catsim/quiz of medians (target ≥ 50×). Also printed: quiz's one-time index build for the bank, and quiz with
exposure control and content balance on (randomesque=5, three categories) for information.

    .venv/bin/python bench/bench_quiz_selection.py           # 2,000 cases
    .venv/bin/python bench/bench_quiz_selection.py --quick   # 200 cases, writes quiz_selection.quick.json
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

TARGET_RATIO = 50.0


def _cases(
    bank_a: np.ndarray, bank_b: np.ndarray, n_cases: int, rng: np.random.Generator
) -> list[tuple[float, list[int]]]:
    from consulta.apps.quiz._irt import information

    n = bank_a.size
    thetas = [*rng.normal(0.0, 1.5, n_cases - 6), -6.0, -4.0, -3.95, 0.0, 4.0, 6.0]
    cases = []
    for theta in thetas:
        administered = [int(i) for i in rng.choice(n, int(rng.integers(0, 31)), replace=False)]
        if rng.random() < 0.5:
            best = np.argsort(-information(theta, bank_a, bank_b))[: int(rng.integers(1, 41))]
            administered = list(dict.fromkeys([*administered, *(int(i) for i in best)]))
        rng.shuffle(administered)
        cases.append((float(theta), administered))
    return cases


def _pct(values: list[float], q: float) -> float:
    return float(np.percentile(values, q))


def run(args: argparse.Namespace) -> dict:
    from catsim.item_bank import ItemBank
    from catsim.selection import MaxInfoSelector

    from consulta.apps.quiz._cat import Bank, CatRules, next_item

    rng = np.random.default_rng(args.seed)
    n = args.items
    a = rng.lognormal(0.0, 0.3, n)
    b = rng.normal(0.0, 1.2, n)
    categories = tuple(("technical", "business", "general")[i % 3] for i in range(n))
    cases = _cases(a, b, args.cases, rng)

    t0 = time.perf_counter()
    bank = Bank(ids=tuple(f"q{i}" for i in range(n)), a=a, b=b, categories=categories)
    bank._index(None)
    build_ms = (time.perf_counter() - t0) * 1e3
    theirs = ItemBank(np.column_stack([a, b, np.zeros(n), np.ones(n)]))
    selector = MaxInfoSelector()
    rules = CatRules(randomesque=1)
    pick_rng = np.random.default_rng(0)

    # warm-up both (imports, caches), and the same-choice assertion over every case
    mismatches = []
    for theta, administered in cases:
        mine = next_item(bank, theta=theta, administered=administered, rules=rules, rng=pick_rng)
        ref = selector.select(item_bank=theirs, administered_items=administered, est_theta=theta)
        if mine != ref:
            mismatches.append({"theta": theta, "administered": administered, "quiz": mine, "catsim": ref})

    quiz_us: list[float] = []
    catsim_us: list[float] = []
    rounds = [cases[i : i + args.round_size] for i in range(0, len(cases), args.round_size)]
    for r, block in enumerate(rounds):
        sides = ["catsim", "quiz"] if r % 2 == 0 else ["quiz", "catsim"]
        for side in sides:
            for theta, administered in block:
                if side == "quiz":
                    t = time.perf_counter_ns()
                    next_item(bank, theta=theta, administered=administered, rules=rules, rng=pick_rng)
                    quiz_us.append((time.perf_counter_ns() - t) / 1e3)
                else:
                    t = time.perf_counter_ns()
                    selector.select(item_bank=theirs, administered_items=administered, est_theta=theta)
                    catsim_us.append((time.perf_counter_ns() - t) / 1e3)

    balanced = CatRules(randomesque=5, content_targets={"technical": 0.5, "business": 0.25, "general": 0.25})
    for theta, administered in cases[:50]:  # warm the per-category indexes
        next_item(bank, theta=theta, administered=administered, rules=balanced, rng=pick_rng)
    balanced_us = []
    for theta, administered in cases:
        t = time.perf_counter_ns()
        next_item(bank, theta=theta, administered=administered, rules=balanced, rng=pick_rng)
        balanced_us.append((time.perf_counter_ns() - t) / 1e3)

    med_q, med_c = statistics.median(quiz_us), statistics.median(catsim_us)
    ratio = med_c / med_q
    ok = ratio >= TARGET_RATIO and not mismatches
    rows = [
        ("catsim 0.21.0 MaxInfoSelector (baseline)", f"{med_c:.1f}", f"{_pct(catsim_us, 99):.1f}", "1.0x", "", ""),
        (
            "quiz next_item (randomesque=1)",
            f"{med_q:.1f}",
            f"{_pct(quiz_us, 99):.1f}",
            f"{ratio:.1f}x faster",
            f">= {TARGET_RATIO:.0f}x",
            "PASS" if ok else "MISS",
        ),
        (
            "quiz next_item (randomesque=5, content balance) [info]",
            f"{statistics.median(balanced_us):.1f}",
            f"{_pct(balanced_us, 99):.1f}",
            f"{med_c / statistics.median(balanced_us):.1f}x faster",
            "",
            "",
        ),
    ]
    print(f"\nnext-item selection, {n:,} items, {len(cases):,} cases (same θ and administered set on both sides)")
    print(f"{'side':58} {'median µs':>10} {'p99 µs':>10} {'ratio':>14} {'target':>8} {'':>5}")
    for row in rows:
        print(f"{row[0]:58} {row[1]:>10} {row[2]:>10} {row[3]:>14} {row[4]:>8} {row[5]:>5}")
    print(
        f"same choice as catsim: {len(cases) - len(mismatches)}/{len(cases)}; quiz index build (once per bank): {build_ms:.0f} ms"
    )
    return {
        "benchmark": "quiz_selection",
        "source": source_version(),
        "machine": platform.platform(),
        "items": n,
        "cases": len(cases),
        "seed": args.seed,
        "baseline": "catsim 0.21.0 MaxInfoSelector.select (argsorts the whole bank)",
        "catsim_us": {"median": med_c, "p99": _pct(catsim_us, 99), "mean": statistics.fmean(catsim_us)},
        "quiz_us": {"median": med_q, "p99": _pct(quiz_us, 99), "mean": statistics.fmean(quiz_us)},
        "quiz_balanced_randomesque5_us": {"median": statistics.median(balanced_us), "p99": _pct(balanced_us, 99)},
        "ratio_of_medians": ratio,
        "ratio_of_means": statistics.fmean(catsim_us) / statistics.fmean(quiz_us),
        "target_ratio": TARGET_RATIO,
        "same_choice": len(cases) - len(mismatches),
        "mismatches": mismatches[:10],
        "index_build_ms": build_ms,
        "verdict": "PASS" if ok else "MISS",
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--cases", type=int, default=2_000)
    parser.add_argument("--round-size", type=int, default=100)
    parser.add_argument("--seed", type=int, default=20261123)
    parser.add_argument("--quick", action="store_true", help="200 cases; writes quiz_selection.quick.json")
    args = parser.parse_args(argv)
    if args.quick:
        args.cases = 200
    result = run(args)
    out = write_result(result, "quiz_selection", quick=args.quick)
    if result["mismatches"]:
        sys.exit("quiz and catsim chose different items: see mismatches in " + str(out))


if __name__ == "__main__":
    main()
