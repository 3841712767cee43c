"""A Markov chain estimated from an observed sequence of states: the transition matrix (counts of each step), the
steady state (the left eigenvector of eigenvalue 1) and the distribution some steps after the last state."""

import json

import numpy as np

CONFIG = json.loads("{}")  # the task's parameters: written here when the team's script is made


def solve(config, tables):
    sequence = [str(s) for s in tables[config["table"]][config["state_column"]].dropna()]
    states = sorted(set(sequence))
    index = {s: i for i, s in enumerate(states)}
    counts = np.zeros((len(states), len(states)))
    for a, b in zip(sequence[:-1], sequence[1:], strict=True):
        counts[index[a], index[b]] += 1
    rows = counts.sum(axis=1, keepdims=True)
    p = np.divide(counts, rows, out=np.full_like(counts, 1 / len(states)), where=rows > 0)
    values, vectors = np.linalg.eig(p.T)
    pi = np.abs(vectors[:, int(np.argmin(np.abs(values - 1)))].real)
    pi = pi / pi.sum()
    steps = int(config.get("steps") or 1)
    start = np.eye(len(states))[index[sequence[-1]]]
    ahead = start @ np.linalg.matrix_power(p, steps)
    return {
        "states": states, "transitions": {a: {b: float(p[i, j]) for j, b in enumerate(states)} for i, a in enumerate(states)},
        "steady_state": {s: float(pi[i]) for i, s in enumerate(states)}, "last_state": sequence[-1], "steps": steps,
        "ahead": {s: float(ahead[i]) for i, s in enumerate(states)}, "observations": len(sequence),
        "most_likely_steady": states[int(np.argmax(pi))],
    }  # fmt: skip


def draw(ax, config, tables, result):
    states = result["states"]
    ax.bar(states, [result["steady_state"][s] for s in states], alpha=0.7, label="steady state")
    ax.plot(states, [result["ahead"][s] for s in states], "o-", c="red", label=f"after {result['steps']} steps")
    ax.set_ylabel("probability")
    ax.legend()


if __name__ == "__main__":
    from family_io import run

    run(CONFIG, solve, draw)
