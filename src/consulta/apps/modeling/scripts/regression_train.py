"""The model trainer's run: results/*.csv and figures/fit.png."""

import json

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from model import design, fit, predict, terms
from scipy import stats

PLAN = json.loads("{}")  # the plan: written here when the team's script is made from this template

data = pd.read_csv("data/" + PLAN["table"])
target = PLAN["target"]
y = data[target].to_numpy(dtype=float)

# held-out rows: a seeded random sample, the same on every run
held = np.random.default_rng(PLAN["seed"]).permutation(len(data))[: PLAN["holdout"]]
test, train = data.iloc[np.sort(held)], data.drop(index=data.index[held])
beta_train, _ = fit(train)
predicted = predict(beta_train, test)
actual = test[target].to_numpy(dtype=float)
errors = actual - predicted
rmse, mae = float(np.sqrt(np.mean(errors**2))), float(np.mean(np.abs(errors)))
r2_holdout = 1 - float(np.sum(errors**2) / np.sum((actual - actual.mean()) ** 2))
pd.DataFrame(
    {"row": np.sort(held) + 1, "actual": actual.round(2), "predicted": predicted.round(2), "error": errors.round(2)}
).to_csv("results/holdout.csv", index=False)

# the model on all rows: estimates with standard errors, t, p and 95 % intervals
X = design(data)
beta, sigma = fit(data)
dof = max(1, len(y) - X.shape[1])
inverse = np.linalg.pinv(X.T @ X)
se = np.sqrt(np.clip(np.diag(inverse), 0, None)) * sigma
t_values = np.divide(beta, se, out=np.zeros_like(beta), where=se > 0)
p_values = 2 * stats.t.sf(np.abs(t_values), dof)
q = stats.t.ppf(0.975, dof)
pd.DataFrame(
    {
        "term": terms(),
        "estimate": beta.round(4),
        "std_error": se.round(4),
        "t": t_values.round(2),
        "p_value": [float(f"{p:.3g}") for p in p_values],
        "lower_95": (beta - q * se).round(4),
        "upper_95": (beta + q * se).round(4),
    }
).to_csv("results/coefficients.csv", index=False)
residuals = y - X @ beta
r2 = 1 - float(residuals @ residuals / np.sum((y - y.mean()) ** 2))

# importance: the share of the variance only this covariate explains (R² lost when it is left out)
rows = []
for c in PLAN["covariates"]:
    mask = [not (name == c or name.startswith(c + "=")) for name in terms()]
    reduced = X[:, mask]
    br, *_ = np.linalg.lstsq(reduced, y, rcond=None)
    rest = y - reduced @ br
    rows.append((c, r2 - (1 - float(rest @ rest / np.sum((y - y.mean()) ** 2)))))
rows.sort(key=lambda r: -r[1])
pd.DataFrame(
    {
        "covariate": [r[0] for r in rows],
        "rank": list(range(1, len(rows) + 1)),
        "unique_r2": [round(r[1], 4) for r in rows],
    }
).to_csv("results/importance.csv", index=False)

metrics = [
    ("rows", len(data)),
    ("holdout_rows", len(test)),
    ("rmse_holdout", rmse),
    ("mae_holdout", mae),
    ("r2_holdout", r2_holdout),
    ("r2_in_sample", r2),
    ("residual_sd", sigma),
]
if (actual > 0).all():
    metrics.insert(4, ("mape_holdout_pct", float(np.mean(np.abs(errors / actual)) * 100)))
pd.DataFrame(
    {"metric": [m for m, _ in metrics], "value": [v if isinstance(v, int) else round(float(v), 2) for _, v in metrics]},
    dtype=object,
).to_csv("results/metrics.csv", index=False)

# the case the problem asks about: its given values, the other covariates at their median (or commonest value)
if PLAN["scenario"]:
    case, source = {}, {}
    for c in PLAN["covariates"]:
        if c in PLAN["scenario"]:
            case[c], source[c] = PLAN["scenario"][c], "given"
        elif c in PLAN["levels"]:
            case[c], source[c] = data[c].astype(str).mode().iloc[0], "most common"
        else:
            case[c], source[c] = float(data[c].median()), "median"
    frame = pd.DataFrame([case])
    x0 = design(frame)[0]
    value = float(x0 @ beta)
    half = float(q * sigma * np.sqrt(1 + x0 @ inverse @ x0))
    pd.DataFrame(
        {
            "covariate": list(case),
            "value": [case[c] if c in PLAN["levels"] else round(float(case[c]), 2) for c in case],
            "source": [source[c] for c in case],
        }
    ).to_csv("results/scenario.csv", index=False)
    pd.DataFrame(
        {"predicted": [round(value, 2)], "lower_95": [round(value - half, 2)], "upper_95": [round(value + half, 2)]}
    ).to_csv("results/prediction.csv", index=False)

fig, ax = plt.subplots(figsize=(5.5, 5))
ax.scatter(actual, predicted, s=14)
low, high = float(min(actual.min(), predicted.min())), float(max(actual.max(), predicted.max()))
ax.plot([low, high], [low, high], color="grey", linewidth=1)
ax.set_xlabel("actual " + (PLAN["target_label"] or target))
ax.set_ylabel("predicted")
ax.set_title("held-out rows")
fig.tight_layout()
fig.savefig("figures/fit.png", dpi=120)
print("holdout RMSE", round(rmse, 2), "R2", round(r2, 3))
