"""An M/M/c queue (Erlang C): the arrival and service rates from observed gaps between arrivals and service times,
the mean wait for each number of servers, and the fewest servers that keep the mean wait within the problem's
target."""

import json
import math

CONFIG = json.loads("{}")  # the task's parameters: written here when the team's script is made


def erlang_wait(lam, mu, c):
    """Mean time in the queue for c servers (infinite when the queue grows without end)."""
    a = lam / mu
    if a >= c:
        return math.inf
    tail = a**c / math.factorial(c) * c / (c - a)
    p_wait = tail / (sum(a**k / math.factorial(k) for k in range(c)) + tail)
    return p_wait / (c * mu - lam)


def solve(config, tables):
    frame = tables[config["table"]]
    lam = 1 / float(frame[config["interarrival_column"]].dropna().mean())
    mu = 1 / float(frame[config["service_column"]].dropna().mean())
    target = float(config["max_wait"])
    waits, needed = {}, None
    for c in range(1, 51):
        w = erlang_wait(lam, mu, c)
        if math.isfinite(w):
            waits[str(c)] = w
            if needed is None and w <= target:
                needed = c
                break
    current = int(config.get("servers") or 0)
    return {
        "arrival_rate": lam, "service_rate": mu, "load": lam / mu, "max_wait": target, "servers_needed": needed,
        "wait_with_needed": waits.get(str(needed)) if needed else None, "waits": waits, "servers_now": current,
        "wait_now": erlang_wait(lam, mu, current) if current else None,
        "utilisation_with_needed": lam / (needed * mu) if needed else None,
    }  # fmt: skip


def draw(ax, config, tables, result):
    servers = [int(c) for c in result["waits"]]
    ax.plot(servers, list(result["waits"].values()), "o-")
    ax.axhline(result["max_wait"], ls="--", c="grey")
    ax.set_xlabel("servers")
    ax.set_ylabel("mean wait")


if __name__ == "__main__":
    from family_io import run

    run(CONFIG, solve, draw)
