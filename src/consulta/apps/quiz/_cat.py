"""Computerized adaptive testing: the item bank, the rules of a test, next-item selection and stopping.

Selection is maximum information at the current θ, with exposure control (randomesque: a uniform pick among the k
most informative items left) and content balance (the category furthest below its target share goes first).

Speed: catsim's `MaxInfoSelector` computes every item's information and argsorts the whole bank at each step. Here
each bank keeps a precomputed index (`_MaxInfoIndex`): θ is cut into cells 0.1 logit wide over [−4, 4] (plus the
two open ends); for every cell each item has an upper bound of its information anywhere in the cell (a²/4 when its
b lies inside, else the larger of the values at the cell's edges — information is unimodal in θ with its peak at b),
and the items are kept in decreasing order of that bound. A selection walks one cell's list in small chunks,
computing exact information, and stops as soon as the k-th best exact value left exceeds the next bound: it touches a
few dozen items instead of the bank. The choice is exactly the maximum (ties → the lower index), as asserted
against catsim in tests and `bench/bench_quiz_selection.py`. The index is built lazily per bank and per category
and shared by banks with identical ids, parameters and categories (a fingerprint), so new parameters (after a
recalibration) get a new index and old ones are never served.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from ._irt import information

__all__ = ["Bank", "CatRules", "StopReason", "next_item", "se_target_of", "stop_reason"]

StopReason = Literal["se_target", "max_items"]

_GRID = np.linspace(-4.0, 4.0, 81)  # cell edges; cells: (−inf, −4], [−4, −3.9], …, [3.9, 4], [4, inf)
_KEEP = 512  # items kept per cell in bound order; a selection that runs past them scans the bank
_CHUNK = 32
_BOUND_SLACK = 1.0 + 1e-9  # rounding in the bound must never put a better item behind a worse one


@dataclass(frozen=True, kw_only=True)
class CatRules:
    """How a test runs.

    se_target: stop once the ability's standard error is at or below this (and `min_items` are given).
    level_derived_se_target: the target instead when the test has given a level-derived item (parameters from its
      1-10 level, a = 1 assumed, not estimated from responses). Such an item gives at most a²/4 = 0.25 information,
      so with the N(0, 1) prior 20 of them cannot bring the SE below 1/√(1 + 20/4) = 0.41: the seed's 0.30 would
      never be met and every test would run its full length while looking as if it aimed at 0.30. 0.45 can be met
      (from 16 well-targeted items); a test stopped by it says its items are level-derived (`SessionView`).
    min_items / max_items: bounds on the test's length.
    randomesque: exposure control — pick uniformly among this many most informative items left (1: always the best).
    content_targets: the share of items wanted per category, e.g. {"technical": .5, "business": .25, "general": .25}
      (normalised to sum 1); None: no content balance. Items of categories not named are used only when every named
      category has run out.
    """

    se_target: float = 0.30
    level_derived_se_target: float = 0.45
    min_items: int = 5
    max_items: int = 20
    randomesque: int = 5
    content_targets: Mapping[str, float] | None = None

    def __post_init__(self) -> None:
        for name in ("se_target", "level_derived_se_target"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
                raise ValueError(f"{name} must be a number > 0, got {value!r}")
        for name in ("min_items", "max_items", "randomesque"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be an int >= 1, got {value!r}")
        if self.min_items > self.max_items:
            raise ValueError(f"min_items ({self.min_items}) must not exceed max_items ({self.max_items})")
        if self.content_targets is not None:
            targets = dict(self.content_targets)
            if not targets or any(
                not isinstance(k, str) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0
                for k, v in targets.items()
            ):
                raise ValueError(
                    "content_targets must map category names to shares >= 0, e.g. {'technical': 0.5, 'general': 0.5}"
                )
            total = float(sum(targets.values()))
            if total <= 0:
                raise ValueError("content_targets must have at least one share > 0")
            object.__setattr__(self, "content_targets", {k: float(v) / total for k, v in targets.items()})


class _MaxInfoIndex:
    """Exact top-k maximum-information queries over a set of items (see the module's docstring)."""

    def __init__(self, a: np.ndarray, b: np.ndarray, members: np.ndarray) -> None:
        self._a = a[members]
        self._b = b[members]
        self._members = members  # local position → bank position
        n = members.size
        at_edges = information(_GRID[:, None], self._a[None, :], self._b[None, :])  # edges × items
        zeros = np.zeros((1, n))
        lo = np.vstack([zeros, at_edges])  # information at each cell's lower edge (0 at −inf)
        hi = np.vstack([at_edges, zeros])
        lo_edge = np.concatenate([[-np.inf], _GRID])[:, None]
        hi_edge = np.concatenate([_GRID, [np.inf]])[:, None]
        inside = (lo_edge <= self._b[None, :]) & (self._b[None, :] <= hi_edge)
        bound = np.where(inside, (self._a * self._a / 4.0)[None, :], np.maximum(lo, hi)) * _BOUND_SLACK
        keep = min(n, _KEEP)
        if keep < n:
            top = np.argpartition(-bound, keep, axis=1)[:, : keep + 1]
            top_bound = np.take_along_axis(bound, top, axis=1)
            # the (keep+1)-th largest bound: what every item outside the kept list is at most
            rank = np.argsort(-top_bound, axis=1, kind="stable")
            top = np.take_along_axis(top, rank, axis=1)
            top_bound = np.take_along_axis(top_bound, rank, axis=1)
            self._rest = top_bound[:, keep].copy()
            self._order = top[:, :keep].astype(np.int32)
            self._bound = top_bound[:, :keep].copy()
        else:
            self._order = np.argsort(-bound, axis=1, kind="stable").astype(np.int32)
            self._bound = np.take_along_axis(bound, self._order, axis=1)
            self._rest = np.full(len(_GRID) + 1, -np.inf)

    def top(self, theta: float, excluded: frozenset[int], k: int) -> np.ndarray:
        """Bank positions of the (up to) k most informative items at θ not in `excluded`, best first."""
        cell = int(np.searchsorted(_GRID, theta))
        order, bound, rest = self._order[cell], self._bound[cell], self._rest[cell]
        found_pos: list[np.ndarray] = []
        found_info: list[np.ndarray] = []
        n_found = 0
        pos = 0
        while pos < order.size:
            local = order[pos : pos + _CHUNK]
            pos += local.size
            glob = self._members[local]
            # a set look-up per item of a small chunk beats np.isin's sorting
            fresh = (
                np.fromiter((g not in excluded for g in glob.tolist()), dtype=bool, count=glob.size)
                if excluded
                else np.ones(glob.size, dtype=bool)
            )
            if fresh.any():
                found_pos.append(glob[fresh])
                found_info.append(information(theta, self._a[local[fresh]], self._b[local[fresh]]))
                n_found += int(fresh.sum())
            if n_found >= k:
                info = np.concatenate(found_info)
                kth = np.partition(info, info.size - k)[info.size - k]
                next_bound = bound[pos] if pos < order.size else rest
                if kth > next_bound:
                    return _best(np.concatenate(found_pos), info, k)
        if order.size == self._members.size:  # every item was seen
            if not found_pos:
                return np.empty(0, dtype=np.int64)
            return _best(np.concatenate(found_pos), np.concatenate(found_info), k)
        # rare: most of the kept list administered — fall back to every item of the index
        fresh = ~np.isin(self._members, np.fromiter(excluded, dtype=np.int64, count=len(excluded)))
        if not fresh.any():
            return np.empty(0, dtype=np.int64)
        return _best(self._members[fresh], information(theta, self._a[fresh], self._b[fresh]), k)


def _best(positions: np.ndarray, info: np.ndarray, k: int) -> np.ndarray:
    """The k positions of largest information, best first; equal information → the lower position first."""
    order = np.lexsort((positions, -info))[:k]
    return positions[order].astype(np.int64)


_SHARED: OrderedDict[bytes, dict[str | None, _MaxInfoIndex]] = OrderedDict()
_SHARED_MAX = 8
_SHARED_LOCK = threading.Lock()


@dataclass(frozen=True, eq=False)
class Bank:
    """The items a test draws from: ids, 2PL parameters (a, b) and each item's content category, by position.

    Arrays are copied and made read-only: parameters that change make a new `Bank` (and so a new selection index).
    """

    ids: tuple[str, ...]
    a: np.ndarray
    b: np.ndarray
    categories: tuple[str, ...]
    _indexes: dict[str | None, _MaxInfoIndex] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        a = np.array(self.a, dtype=float).ravel()
        b = np.array(self.b, dtype=float).ravel()
        ids = tuple(self.ids)
        categories = tuple(self.categories)
        if not (len(ids) == a.size == b.size == len(categories)):
            raise ValueError(
                f"ids, a, b and categories must have the same length, got {len(ids)}, {a.size}, {b.size} and {len(categories)}"
            )
        if len(set(ids)) != len(ids):
            raise ValueError("item ids must be unique")
        if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b)) and np.all(a > 0)):
            raise ValueError("item parameters must be finite, with every a > 0")
        a.setflags(write=False)
        b.setflags(write=False)
        object.__setattr__(self, "ids", ids)
        object.__setattr__(self, "categories", categories)
        object.__setattr__(self, "a", a)
        object.__setattr__(self, "b", b)
        digest = hashlib.blake2b(digest_size=20)
        digest.update(a.tobytes())
        digest.update(b.tobytes())
        digest.update("\x1f".join(ids).encode())
        digest.update(b"\x1e" + "\x1f".join(categories).encode())
        key = digest.digest()
        with _SHARED_LOCK:
            indexes = _SHARED.get(key)
            if indexes is None:
                indexes = _SHARED[key] = {}
                while len(_SHARED) > _SHARED_MAX:
                    _SHARED.popitem(last=False)
            else:
                _SHARED.move_to_end(key)
        object.__setattr__(self, "_indexes", indexes)

    def __len__(self) -> int:
        return len(self.ids)

    @classmethod
    def from_rows(cls, rows: Iterable[Any]) -> Bank:
        """A bank from database rows or mappings with: `question_id` (or `id`), `a`, `b`, and `category` (a str)
        or `categories` (a list or its JSON text; the first is the item's category for content balance)."""
        ids: list[str] = []
        a: list[float] = []
        b: list[float] = []
        categories: list[str] = []
        for row in rows:
            m = row._mapping if hasattr(row, "_mapping") else row
            ids.append(str(m["question_id"] if "question_id" in m else m["id"]))
            a.append(float(m["a"]))
            b.append(float(m["b"]))
            if "category" in m:
                categories.append(str(m["category"]))
            else:
                cats = m["categories"]
                cats = json.loads(cats) if isinstance(cats, str) else list(cats)
                if not cats:
                    raise ValueError(f"item {ids[-1]} has no category")
                categories.append(str(cats[0]))
        return cls(
            ids=tuple(ids), a=np.asarray(a, dtype=float), b=np.asarray(b, dtype=float), categories=tuple(categories)
        )

    def position(self, item_id: str) -> int:
        """The position of an item id (ValueError if the bank has no such item)."""
        try:
            return self.ids.index(item_id)
        except ValueError:
            raise ValueError(f"the bank has no item {item_id!r}") from None

    def _index(self, category: str | None) -> _MaxInfoIndex:
        index = self._indexes.get(category)
        if index is None:
            members = (
                np.arange(len(self.ids))
                if category is None
                else np.flatnonzero(np.asarray(self.categories, dtype=object) == category)
            )
            index = _MaxInfoIndex(self.a, self.b, members)
            self._indexes[category] = index  # a race builds it twice at worst: same result
        return index


def next_item(
    bank: Bank,
    *,
    theta: float,
    administered: Sequence[int],
    rules: CatRules,
    rng: np.random.Generator | random.Random,
) -> int | None:
    """The bank position of the next item to give at ability estimate `theta`, or None when no item is left.

    `administered`: bank positions already given (repeats allowed). With `rules.content_targets`, the category
    whose share of the administered items is furthest below its target is served first (then the next, if it has run
    out); within it, one of the `rules.randomesque` most informative items left is picked uniformly with `rng`.
    Raises ValueError for a θ that is not finite or an administered position outside the bank.
    """
    if not isinstance(theta, (int, float, np.floating, np.integer)) or not math.isfinite(theta):
        raise ValueError(f"theta must be a finite number, got {theta!r}")
    excluded = frozenset(int(pos) for pos in administered)
    if excluded and (min(excluded) < 0 or max(excluded) >= len(bank)):
        raise ValueError(f"administered positions must be from 0 to {len(bank) - 1}, got {sorted(excluded)}")
    if len(excluded) >= len(bank):
        return None
    for category in _category_order(bank, excluded, rules.content_targets):
        top = bank._index(category).top(float(theta), excluded, rules.randomesque)
        if top.size:
            return int(top[_pick(rng, top.size)])
    return None


def _category_order(bank: Bank, excluded: frozenset[int], targets: Mapping[str, float] | None) -> list[str | None]:
    """Categories to try in turn: named ones by decreasing deficit (target share − given share), then any item."""
    if not targets:
        return [None]
    given: dict[str, int] = {}
    for pos in excluded:
        given[bank.categories[pos]] = given.get(bank.categories[pos], 0) + 1
    n = max(len(excluded), 1)
    names = list(targets)
    deficit = {c: targets[c] - given.get(c, 0) / n for c in names}
    ordered: list[str | None] = sorted(names, key=lambda c: (-deficit[c], names.index(c)))
    return [*ordered, None]


def _pick(rng: np.random.Generator | random.Random, n: int) -> int:
    if n == 1:
        return 0
    if isinstance(rng, random.Random):
        return rng.randrange(n)
    return int(rng.integers(n))


def se_target_of(rules: CatRules, *, level_derived: bool) -> float:
    """The SE a test stops at: `se_target`, or the larger `level_derived_se_target` when it gave level-derived
    items (see `CatRules`)."""
    return max(rules.se_target, rules.level_derived_se_target) if level_derived else rules.se_target


def stop_reason(*, se: float, n: int, rules: CatRules, level_derived: bool = False) -> StopReason | None:
    """Why a test of `n` items whose ability estimate has standard error `se` stops now, or None to go on; the SE
    target is `se_target_of(rules, level_derived=...)`.

    "se_target" once at least `rules.min_items` are given and se <= `rules.se_target`; else "max_items" once
    `rules.max_items` are given.
    """
    if n >= rules.min_items and se <= se_target_of(rules, level_derived=level_derived):
        return "se_target"
    if n >= rules.max_items:
        return "max_items"
    return None
