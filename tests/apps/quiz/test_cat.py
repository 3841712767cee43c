"""CAT: the bank, the rules, next-item selection (same choice as catsim's MaxInfoSelector) and stopping."""

from __future__ import annotations

import json
import math
import random

import numpy as np
import pytest

from consulta.apps.quiz._cat import Bank, CatRules, next_item, se_target_of, stop_reason
from consulta.apps.quiz._irt import information


def _bank(n: int, *, seed: int = 0, categories: tuple[str, ...] = ("general",)) -> Bank:
    rng = np.random.default_rng(seed)
    return Bank(
        ids=tuple(f"q{i}" for i in range(n)),
        a=rng.lognormal(0, 0.3, n),
        b=rng.normal(0, 1.3, n),
        categories=tuple(categories[i % len(categories)] for i in range(n)),
    )


@pytest.mark.parametrize("n", [40, 3000])  # under and over the per-cell list kept by the index
def test_max_information_is_exact_and_the_same_choice_as_catsim(n: int) -> None:
    from catsim.item_bank import ItemBank
    from catsim.selection import MaxInfoSelector

    bank = _bank(n, seed=n)
    theirs = ItemBank(np.column_stack([bank.a, bank.b, np.zeros(n), np.ones(n)]))
    selector = MaxInfoSelector()
    rules = CatRules(randomesque=1)
    rng = np.random.default_rng(1)
    thetas = [*rng.normal(0, 1.5, 150), -9.0, -4.0, -3.95, 0.0, 4.0, 7.5]
    for theta in thetas:
        # administered: random items, plus sometimes the best ones (the walk must go past them)
        best = np.argsort(-information(theta, bank.a, bank.b))
        administered = [int(i) for i in rng.choice(n, int(rng.integers(0, 25)), replace=False)]
        if rng.random() < 0.5:
            administered += [int(i) for i in best[: int(rng.integers(1, 30))]]
        mine = next_item(bank, theta=float(theta), administered=administered, rules=rules, rng=rng)
        assert mine == selector.select(item_bank=theirs, administered_items=administered, est_theta=float(theta))
        assert mine == next(int(i) for i in best if int(i) not in administered)


def test_selection_when_nearly_everything_was_given() -> None:
    bank = _bank(600, seed=3)
    rules = CatRules(randomesque=1)
    info = information(0.3, bank.a, bank.b)
    order = [int(i) for i in np.argsort(-info)]
    administered = order[:-2]  # past the kept list: the fallback scans the bank
    assert next_item(bank, theta=0.3, administered=administered, rules=rules, rng=np.random.default_rng()) == order[-2]
    assert next_item(bank, theta=0.3, administered=order, rules=rules, rng=np.random.default_rng()) is None
    assert (
        next_item(
            Bank(ids=(), a=[], b=[], categories=()), theta=0.0, administered=[], rules=rules, rng=random.Random(1)
        )
        is None
    )


def test_randomesque_spreads_exposure_over_the_top_k() -> None:
    bank = _bank(500, seed=4)
    top5 = {int(i) for i in np.argsort(-information(0.0, bank.a, bank.b))[:5]}
    rng = np.random.default_rng(5)
    picks = [next_item(bank, theta=0.0, administered=[], rules=CatRules(randomesque=5), rng=rng) for _ in range(400)]
    assert set(picks) == top5
    assert max(picks.count(i) for i in top5) < 140  # ~80 each
    # random.Random works as well, with the same bounds
    assert next_item(bank, theta=0.0, administered=[], rules=CatRules(randomesque=5), rng=random.Random(2)) in top5


def test_content_balance_serves_the_category_furthest_below_its_target() -> None:
    bank = _bank(900, seed=6, categories=("technical", "business", "general"))
    targets = {"technical": 0.5, "business": 0.25, "general": 0.25}
    rules = CatRules(randomesque=1, content_targets=targets)
    rng = np.random.default_rng(0)
    administered: list[int] = []
    first = next_item(bank, theta=0.0, administered=administered, rules=rules, rng=rng)
    assert first is not None and bank.categories[first] == "technical"  # nothing given: the largest target
    for _ in range(20):
        item = next_item(bank, theta=0.0, administered=administered, rules=rules, rng=rng)
        assert item is not None and item not in administered
        administered.append(item)
    shares = {c: sum(bank.categories[i] == c for i in administered) / 20 for c in targets}
    assert shares == pytest.approx(targets, abs=0.051)
    # within the category served, still the most informative item
    tech = [i for i in range(900) if bank.categories[i] == "technical"]
    best_tech = max(tech, key=lambda i: information(0.0, bank.a[i], bank.b[i]))
    assert first == best_tech


def test_content_balance_moves_on_when_a_category_runs_out() -> None:
    bank = Bank(
        ids=("t1", "g1", "g2"), a=[1.0, 1.0, 1.2], b=[0.0, 0.1, -0.1], categories=("technical", "general", "general")
    )
    rules = CatRules(randomesque=1, content_targets={"technical": 0.9, "general": 0.1})
    rng = np.random.default_rng(0)
    assert next_item(bank, theta=0.0, administered=[], rules=rules, rng=rng) == 0
    assert next_item(bank, theta=0.0, administered=[0], rules=rules, rng=rng) == 2
    # categories the targets do not name are used once the named ones are exhausted
    rules_tech = CatRules(randomesque=1, content_targets={"technical": 1.0})
    assert next_item(bank, theta=0.0, administered=[0], rules=rules_tech, rng=rng) == 2


def test_stop_reason() -> None:
    rules = CatRules(se_target=0.3, min_items=5, max_items=20)
    assert stop_reason(se=0.25, n=4, rules=rules) is None  # precise, but too short
    assert stop_reason(se=0.30, n=5, rules=rules) == "se_target"
    assert stop_reason(se=0.45, n=19, rules=rules) is None
    assert stop_reason(se=0.45, n=20, rules=rules) == "max_items"
    assert stop_reason(se=0.20, n=20, rules=rules) == "se_target"


def test_a_test_of_level_derived_items_stops_at_a_target_it_can_meet() -> None:
    rules = CatRules(se_target=0.3, min_items=5, max_items=20)
    # 20 level-derived items (a = 1) give at most 20 x 0.25 of information: SE >= 1/sqrt(1 + 5) = 0.41 > 0.30
    floor = 1 / (1 + 20 * 0.25) ** 0.5
    assert stop_reason(se=floor, n=19, rules=rules) is None
    assert stop_reason(se=0.44, n=16, rules=rules, level_derived=True) == "se_target"
    assert se_target_of(rules, level_derived=True) == 0.45 > floor and se_target_of(rules, level_derived=False) == 0.3
    assert se_target_of(CatRules(se_target=0.5), level_derived=True) == 0.5  # never below the general target
    with pytest.raises(ValueError, match="level_derived_se_target"):
        CatRules(level_derived_se_target=float("nan"))


def test_rules_refuse_bad_values_and_normalise_targets() -> None:
    assert CatRules(content_targets={"technical": 2, "general": 2}).content_targets == {
        "technical": 0.5,
        "general": 0.5,
    }
    for kwargs, match in [
        ({"se_target": 0}, "se_target"),
        ({"min_items": 0}, "min_items"),
        ({"min_items": 6, "max_items": 5}, "must not exceed"),
        ({"randomesque": 0}, "randomesque"),
        ({"content_targets": {}}, "content_targets"),
        ({"content_targets": {"technical": -1}}, "content_targets"),
        ({"content_targets": {"technical": 0}}, "at least one share"),
    ]:
        with pytest.raises(ValueError, match=match):
            CatRules(**kwargs)
    with pytest.raises(TypeError):
        CatRules(0.3)  # type: ignore[misc]  # keyword-only


def test_bank_from_rows_and_bad_banks() -> None:
    rows = [
        {"question_id": "x", "a": 1.1, "b": -0.5, "categories": json.dumps(["business", "general"])},
        {"id": "y", "a": 0.9, "b": 0.5, "category": "technical"},
    ]
    bank = Bank.from_rows(rows)
    assert bank.ids == ("x", "y") and bank.categories == ("business", "technical") and len(bank) == 2
    assert bank.position("y") == 1
    with pytest.raises(ValueError, match="no item"):
        bank.position("z")
    with pytest.raises(ValueError, match="read-only"):
        bank.a[0] = 5.0
    with pytest.raises(ValueError, match="same length"):
        Bank(ids=("a",), a=[1.0, 1.0], b=[0.0], categories=("general",))
    with pytest.raises(ValueError, match="unique"):
        Bank(ids=("a", "a"), a=[1.0, 1.0], b=[0.0, 0.0], categories=("general", "general"))
    with pytest.raises(ValueError, match="a > 0"):
        Bank(ids=("a",), a=[0.0], b=[0.0], categories=("general",))
    with pytest.raises(ValueError, match="no category"):
        Bank.from_rows([{"id": "x", "a": 1.0, "b": 0.0, "categories": "[]"}])


def test_new_parameters_get_a_new_index() -> None:
    bank = Bank(ids=("p", "q"), a=[1.0, 1.0], b=[0.0, 2.0], categories=("general", "general"))
    rules = CatRules(randomesque=1)
    assert next_item(bank, theta=0.0, administered=[], rules=rules, rng=random.Random()) == 0
    moved = Bank(ids=("p", "q"), a=[1.0, 1.0], b=[2.0, 0.0], categories=("general", "general"))
    assert next_item(moved, theta=0.0, administered=[], rules=rules, rng=random.Random()) == 1


@pytest.mark.parametrize("theta", [math.nan, math.inf, "0"])
def test_next_item_refuses_bad_theta_or_positions(theta: object) -> None:
    bank = _bank(10)
    rules = CatRules()
    with pytest.raises(ValueError, match="theta"):
        next_item(bank, theta=theta, administered=[], rules=rules, rng=random.Random())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="from 0 to 9"):
        next_item(bank, theta=0.0, administered=[10], rules=rules, rng=random.Random())
