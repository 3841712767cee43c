"""Two-parameter logistic (2PL) item response theory: item parameters, response probability, information, EAP.

The model: a person of ability θ answers an item of discrimination `a` and difficulty `b` correctly with
probability P(θ) = 1 / (1 + exp(−a(θ − b))); the item's Fisher information there is I(θ) = a² P (1 − P), largest
(a²/4) at θ = b. θ and b share the logit scale on which the calibration sample's abilities are N(0, 1).

Everything here is plain numpy, vectorised over θ and over items; nothing reads the database.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

__all__ = [
    "B_PER_LEVEL",
    "Estimate",
    "ItemParams",
    "eap",
    "information",
    "level_to_b",
    "prob",
    "provisional_params",
]

ArrayLike = float | npt.ArrayLike

# The 1-10 difficulty levels spread evenly over b in [−2.25, 2.25]: level 5.5 (between "5" and "6") is the mean
# ability, each level is half a logit (≈ half a standard deviation of ability) harder than the one below, and the
# extreme levels sit where about 1 person in 80 is still above / below them. A provisional item gets a = 1.0, the
# usual centre of calibrated discriminations.
B_PER_LEVEL = 0.5
_MID_LEVEL = 5.5
_EAP_POINTS = 121  # quadrature nodes over prior_mean ± 6 prior_sd: |error| of θ and SE well below 1e-4


@dataclass(frozen=True, slots=True)
class ItemParams:
    """An item's 2PL parameters: discrimination `a` (> 0) and difficulty `b` (logit scale)."""

    a: float
    b: float

    def __post_init__(self) -> None:
        if not (math.isfinite(self.a) and self.a > 0):
            raise ValueError(f"discrimination a must be a finite number > 0, got {self.a!r}")
        if not math.isfinite(self.b):
            raise ValueError(f"difficulty b must be a finite number, got {self.b!r}")


@dataclass(frozen=True, slots=True)
class Estimate:
    """An ability estimate θ with its standard error (the posterior standard deviation for EAP)."""

    theta: float
    se: float


def level_to_b(level: int) -> float:
    """The difficulty b of a 1-10 level: `(level − 5.5) × 0.5`, so level 1 → −2.25, 5 → −0.25, 10 → 2.25."""
    if isinstance(level, bool) or not isinstance(level, (int, np.integer)):
        raise TypeError(f"level must be an int from 1 to 10, got {type(level).__name__}")
    if not 1 <= level <= 10:
        raise ValueError(f"level must be from 1 to 10, got {level}")
    return (int(level) - _MID_LEVEL) * B_PER_LEVEL


def provisional_params(level: int) -> ItemParams:
    """The parameters an uncalibrated item starts with: a = 1.0 and b from its 1-10 level (see `level_to_b`)."""
    return ItemParams(a=1.0, b=level_to_b(level))


def prob(theta: ArrayLike, a: ArrayLike, b: ArrayLike) -> np.ndarray:
    """P(correct) under 2PL, broadcast over θ, a and b (a θ column against item rows gives a persons × items grid)."""
    z = np.asarray(a, dtype=float) * (np.asarray(theta, dtype=float) - np.asarray(b, dtype=float))
    # 1/(1+exp(-z)) without overflow warnings for large |z|
    return 0.5 * (1.0 + np.tanh(0.5 * z))


def information(theta: ArrayLike, a: ArrayLike, b: ArrayLike) -> np.ndarray:
    """Fisher information a² P (1 − P) of items at θ, broadcast like `prob`."""
    a = np.asarray(a, dtype=float)
    p = prob(theta, a, b)
    return a * a * p * (1.0 - p)


def eap(
    a: Sequence[float] | np.ndarray,
    b: Sequence[float] | np.ndarray,
    u: Sequence[int] | np.ndarray,
    *,
    prior_mean: float = 0.0,
    prior_sd: float = 1.0,
) -> Estimate:
    """Expected a posteriori θ and its posterior SD from responses `u` (1 right, 0 wrong) to items (a, b).

    A normal prior N(prior_mean, prior_sd²) and 121 equally spaced quadrature nodes over prior_mean ± 6·prior_sd;
    the likelihood is summed in log space so long tests do not underflow. No responses → the prior itself.
    Raises ValueError when the three sequences differ in length, a response is not 0/1, or a parameter is not finite.
    """
    a_ = np.asarray(a, dtype=float).ravel()
    b_ = np.asarray(b, dtype=float).ravel()
    u_ = np.asarray(u, dtype=float).ravel()
    if not (a_.size == b_.size == u_.size):
        raise ValueError(f"a, b and u must have the same length, got {a_.size}, {b_.size} and {u_.size}")
    if not (math.isfinite(prior_mean) and math.isfinite(prior_sd) and prior_sd > 0):
        raise ValueError(f"prior_mean must be finite and prior_sd finite and > 0, got {prior_mean!r}, {prior_sd!r}")
    if u_.size == 0:
        return Estimate(theta=float(prior_mean), se=float(prior_sd))
    if not np.all((u_ == 0) | (u_ == 1)):
        raise ValueError("responses u must each be 0 (wrong) or 1 (right)")
    if not (np.all(np.isfinite(a_)) and np.all(np.isfinite(b_)) and np.all(a_ > 0)):
        raise ValueError("item parameters must be finite, with every a > 0")
    nodes = prior_mean + prior_sd * np.linspace(-6.0, 6.0, _EAP_POINTS)
    z = a_[None, :] * (nodes[:, None] - b_[None, :])  # nodes × items
    # log P = −log(1+e^{−z}), log(1−P) = −log(1+e^{z})
    loglik = -(u_ * np.logaddexp(0.0, -z) + (1.0 - u_) * np.logaddexp(0.0, z)).sum(axis=1)
    logpost = loglik - 0.5 * ((nodes - prior_mean) / prior_sd) ** 2
    w = np.exp(logpost - logpost.max())
    w /= w.sum()
    theta = float(w @ nodes)
    se = float(math.sqrt(max(float(w @ (nodes - theta) ** 2), 0.0)))
    return Estimate(theta=theta, se=se)
