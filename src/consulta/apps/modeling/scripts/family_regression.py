"""Linear regression (statsmodels OLS) of a target on numeric covariates: each effect with its standard error, p value
and 95 % interval, R², and the covariates ranked by the size of their standardised effect."""

import json

import numpy as np

CONFIG = json.loads("{}")  # the task's parameters: written here when the team's script is made


def solve(config, tables):
    from statsmodels.regression.linear_model import OLS

    covariates = list(config["covariates"])
    frame = tables[config["table"]].dropna(subset=[config["target"], *covariates])
    x = frame[covariates].to_numpy(dtype=float)
    y = frame[config["target"]].to_numpy(dtype=float)
    fit = OLS(y, np.c_[np.ones(len(y)), x]).fit()
    low, high = fit.conf_int(0.05).T
    names = ["intercept", *covariates]
    standard = {
        c: abs(float(fit.params[i + 1])) * float(x[:, i].std()) / float(y.std() or 1) for i, c in enumerate(covariates)
    }
    return {
        "effects": {n: float(v) for n, v in zip(names, fit.params, strict=True)},
        "std_errors": {n: float(v) for n, v in zip(names, fit.bse, strict=True)},
        "p_values": {n: float(v) for n, v in zip(names, fit.pvalues, strict=True)},
        "lower_95": dict(zip(names, low.tolist(), strict=True)), "upper_95": dict(zip(names, high.tolist(), strict=True)),
        "r2": float(fit.rsquared), "rows": len(y), "target": config["target"],
        "ranking": sorted(standard, key=lambda c: -standard[c]), "standardised": standard,
    }  # fmt: skip


def draw(ax, config, tables, result):
    ranking = result["ranking"]
    ax.barh(ranking[::-1], [result["standardised"][c] for c in ranking[::-1]])
    ax.set_xlabel("standardised effect (absolute)")


if __name__ == "__main__":
    from family_io import run

    run(CONFIG, solve, draw)
