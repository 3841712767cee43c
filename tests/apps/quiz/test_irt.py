"""2PL maths: probability, information, provisional parameters, EAP."""

from __future__ import annotations

import math

import numpy as np
import pytest

from consulta.apps.quiz._irt import Estimate, ItemParams, eap, information, level_to_b, prob, provisional_params


def test_prob_and_information_match_the_2pl_formulas_vectorised() -> None:
    theta = np.array([[-1.0], [0.0], [2.0]])
    a = np.array([0.5, 1.0, 2.0])
    b = np.array([0.0, 1.0, -1.0])
    p = prob(theta, a, b)
    expected = 1.0 / (1.0 + np.exp(-a * (theta - b)))
    assert p.shape == (3, 3)
    np.testing.assert_allclose(p, expected, rtol=1e-12)
    np.testing.assert_allclose(information(theta, a, b), a**2 * expected * (1 - expected), rtol=1e-12)
    assert information(1.0, 2.0, 1.0) == pytest.approx(1.0)  # a²/4 at θ = b
    assert np.all(np.isfinite(prob(np.array([-1e4, 1e4]), 3.0, 0.0)))  # no overflow


def test_provisional_params_spread_levels_over_the_logit_scale() -> None:
    assert provisional_params(1) == ItemParams(a=1.0, b=-2.25)
    assert provisional_params(10) == ItemParams(a=1.0, b=2.25)
    bs = [level_to_b(level) for level in range(1, 11)]
    assert bs == sorted(bs) and len(set(bs)) == 10
    for bad in (0, 11, -3):
        with pytest.raises(ValueError, match="from 1 to 10"):
            provisional_params(bad)
    for bad in (5.0, "5", True, None):
        with pytest.raises(TypeError, match="int from 1 to 10"):
            provisional_params(bad)  # type: ignore[arg-type]


def test_item_params_refuse_impossible_values() -> None:
    with pytest.raises(ValueError, match="a must be"):
        ItemParams(a=0.0, b=0.0)
    with pytest.raises(ValueError, match="b must be"):
        ItemParams(a=1.0, b=math.nan)


def test_eap_with_no_responses_is_the_prior() -> None:
    assert eap([], [], []) == Estimate(theta=0.0, se=1.0)
    assert eap([], [], [], prior_mean=0.5, prior_sd=2.0) == Estimate(theta=0.5, se=2.0)


def test_eap_matches_direct_numerical_integration() -> None:
    a = np.array([1.2, 0.8, 1.5, 2.0, 1.0])
    b = np.array([-1.0, 0.0, 0.5, 1.0, 2.0])
    u = np.array([1, 1, 1, 0, 0])
    grid = np.linspace(-10, 10, 20001)
    like = np.prod(np.where(u, prob(grid[:, None], a, b), 1 - prob(grid[:, None], a, b)), axis=1)
    post = like * np.exp(-0.5 * grid**2)
    mean = np.sum(grid * post) / np.sum(post)
    sd = math.sqrt(np.sum((grid - mean) ** 2 * post) / np.sum(post))
    est = eap(a, b, u)
    assert est.theta == pytest.approx(mean, abs=1e-4)
    assert est.se == pytest.approx(sd, abs=1e-4)


def test_eap_moves_with_the_answers_and_narrows_with_more_items() -> None:
    a, b = [1.0] * 4, [0.0] * 4
    right, wrong = eap(a, b, [1, 1, 1, 1]), eap(a, b, [0, 0, 0, 0])
    assert right.theta > 0 > wrong.theta
    assert right.theta == pytest.approx(-wrong.theta, abs=1e-9)
    assert eap([1.0] * 20, [0.0] * 20, [1, 0] * 10).se < eap(a, b, [1, 0, 1, 0]).se < 1.0


def test_eap_recovers_simulated_abilities() -> None:
    rng = np.random.default_rng(7)
    a = rng.lognormal(0, 0.25, 60)
    b = rng.normal(0, 1, 60)
    errors = []
    for theta in (-1.5, 0.0, 1.5):
        u = (rng.random(60) < prob(theta, a, b)).astype(int)
        est = eap(a, b, u)
        errors.append(abs(est.theta - theta) / est.se)
    assert max(errors) < 3.5


def test_eap_refuses_bad_input() -> None:
    with pytest.raises(ValueError, match="same length"):
        eap([1.0], [0.0, 1.0], [1])
    with pytest.raises(ValueError, match="0 \\(wrong\\) or 1"):
        eap([1.0], [0.0], [2])
    with pytest.raises(ValueError, match="finite"):
        eap([math.inf], [0.0], [1])
    with pytest.raises(ValueError, match="prior_sd"):
        eap([1.0], [0.0], [1], prior_sd=0.0)
