"""Stochastic models: a Markov chain, the M/M/c queue, Monte Carlo by resampling."""

from __future__ import annotations

from typing import Any, Literal

import pandas as pd
from pydantic import Field

from ._base import Family, FamilyParams, ProblemData, columns_problem, measures, num, stated, zh

__all__ = ["MarkovChain", "MarkovChainParams", "MonteCarlo", "MonteCarloParams", "Queue", "QueueParams"]


class MarkovChainParams(FamilyParams):
    family: Literal["markov_chain"] = "markov_chain"
    state_column: str = Field("", max_length=60, description="按时间顺序记录的状态列")
    steps: int = Field(1, ge=1, le=1000, description="向后预测的步数")


MATRIX_STATES = 6
"""A chain of at most this many states has its whole transition matrix said; a larger one each state's likeliest
next state."""


class MarkovChain(Family):
    name = "markov_chain"
    horizon = "steps"
    group = "stochastic"
    title = ("Markov chain", "马尔可夫链")
    aliases = ("Markov", "马尔可夫", "马氏链")
    answers = frozenset({"forecast", "estimate", "number", "explanation"})
    Params = MarkovChainParams
    outputs = ("transitions", "steady_state", "ahead")
    cues = (
        "state", "transition", "markov", "moving from", "move from", "switch", "long run", "long-run", "steady",
        "tomorrow", "next day", "sequence", "状态", "转移", "马尔可夫", "马尔科夫", "长期", "稳态", "明天", "次日", "下一",
    )  # fmt: skip

    def table_misfit(self, frame: pd.DataFrame) -> str:
        for column in frame.columns:  # states are names or whole-number codes
            if pd.api.types.is_float_dtype(frame[column]):
                continue
            states = frame[column].dropna().nunique()
            if 2 <= states <= 20 and len(frame) >= max(20, 3 * states):
                return ""
        return "it needs a column of states (2 to 20 values) recorded in order, at least 20 of them"

    def check(self, data: ProblemData, params: Any) -> list[str]:
        p = MarkovChainParams.model_validate(params)
        reasons = columns_problem(data, p.table, [p.state_column], numeric=False, min_rows=20)
        if not reasons:
            states = data.tables[p.table][p.state_column].dropna().nunique()
            if not 2 <= states <= 20:
                reasons.append(f"{p.state_column} takes {states} values: a chain needs 2 to 20 states")
        return reasons

    def sentences(self, result: dict[str, Any], *, lang: str) -> list[str]:
        steady = ", ".join(f"{s} {num(v)}" for s, v in result["steady_state"].items())
        ahead = ", ".join(f"{s} {num(v)}" for s, v in result["ahead"].items())
        rows = result["transitions"]
        if len(rows) <= MATRIX_STATES:  # the matrix itself (what "the probabilities of moving" asks for)
            moves = "; ".join(f"{a} → " + ", ".join(f"{b} {num(p)}" for b, p in row.items()) for a, row in rows.items())
        else:  # too many to read: each state's likeliest next one
            moves = "; ".join(f"{a} → {max(row, key=row.get)} {num(max(row.values()))}" for a, row in rows.items())
        if zh(lang):
            return [f"由 {num(result['observations'])} 个观测估计转移矩阵；稳态分布：{steady}（最可能的状态：{result['most_likely_steady']}）。",
                    f"转移概率（{'当前状态 → 下一状态' if len(rows) <= MATRIX_STATES else '各状态最可能的下一状态'}）：{moves}。",
                    f"从最后的状态 {result['last_state']} 出发，{num(result['steps'])} 步后的分布：{ahead}。"]  # fmt: skip
        return [f"The transition matrix is estimated from {num(result['observations'])} observations; the steady state: {steady} (most likely: {result['most_likely_steady']}).",
                f"Transition probabilities ({'from a state → to the next' if len(rows) <= MATRIX_STATES else 'each state’s likeliest next state'}): {moves}.",
                f"From the last state, {result['last_state']}, the distribution {num(result['steps'])} steps ahead: {ahead}."]  # fmt: skip


class QueueParams(FamilyParams):
    family: Literal["queue"] = "queue"
    interarrival_column: str = Field("", max_length=60, description="相邻到达的间隔时间列")
    service_column: str = Field("", max_length=60, description="服务时间列")
    max_wait: float = Field(0.0, gt=0, description="题目给出的平均等待时间上限（与数据同单位）")
    servers: int = Field(0, ge=0, le=50, description="现有服务台数（0：未知）")


class Queue(Family):
    name = "queue"
    stated_only = {"servers": ("server", "window", "counter", "desk", "teller", "till", "窗口", "服务台", "柜台", "收银")}  # fmt: skip
    group = "stochastic"
    title = ("M/M/c queue (Erlang C)", "M/M/c 排队模型（Erlang C）")
    answers = frozenset({"number", "policy", "estimate"})
    Params = QueueParams
    outputs = ("arrival_rate", "service_rate", "servers_needed")
    subject = (
        "queue", "queuing", "arriv", "wait", "server", "service time", "counter", "window", "checkout", "teller",
        "排队", "到达", "等待", "窗口", "服务台", "服务时间", "服务率", "收银",
    )  # fmt: skip

    def table_misfit(self, frame: pd.DataFrame) -> str:
        if len(frame) < 10 or len(measures(frame)) < 2:
            return "it needs at least 10 rows of two measured times (between arrivals, of service)"
        return ""

    def check(self, data: ProblemData, params: Any) -> list[str]:
        p = QueueParams.model_validate(params)
        reasons = columns_problem(data, p.table, [p.interarrival_column, p.service_column], min_rows=10)
        if not reasons and (data.tables[p.table][[p.interarrival_column, p.service_column]] <= 0).any().any():
            reasons.append("times must be positive")
        if not stated(data.statement, p.max_wait):
            reasons.append(f"the wait limit {p.max_wait:g} is not a number the problem states")
        return reasons

    def sentences(self, result: dict[str, Any], *, lang: str) -> list[str]:
        r = result
        needed = r["servers_needed"]
        if zh(lang):
            out = [
                f"到达率 λ = {num(r['arrival_rate'])}，服务率 μ = {num(r['service_rate'])}，负荷 λ/μ = {num(r['load'])}。"
            ]
            out.append(f"平均等待不超过 {num(r['max_wait'])} 至少需要 {num(needed)} 个服务台（平均等待 {num(r['wait_with_needed'])}，利用率 {num(r['utilisation_with_needed'])}）。" if needed else "在所试的服务台数内都达不到等待上限。")  # fmt: skip
            if r.get("wait_now") is not None:
                out.append(f"现有 {num(r['servers_now'])} 个服务台时平均等待 {num(r['wait_now'])}。")
            return out
        out = [
            f"Arrival rate λ = {num(r['arrival_rate'])}, service rate μ = {num(r['service_rate'])}, load λ/μ = {num(r['load'])}."
        ]
        out.append(f"Keeping the mean wait within {num(r['max_wait'])} needs {num(needed)} servers (mean wait {num(r['wait_with_needed'])}, utilisation {num(r['utilisation_with_needed'])})." if needed else "No number of servers tried meets the wait limit.")  # fmt: skip
        if r.get("wait_now") is not None:
            out.append(f"With the {num(r['servers_now'])} servers of today the mean wait is {num(r['wait_now'])}.")
        return out


class MonteCarloParams(FamilyParams):
    family: Literal["monte_carlo"] = "monte_carlo"
    column: str = Field("", max_length=60, description="要重抽样的观测量列（如每日需求）")
    horizon: int = Field(1, ge=1, le=1000, description="累加的期数（如 30 天）")
    capacity: float = Field(0.0, description="题目给出的容量／阈值")
    runs: int = Field(20000, ge=1000, le=200000)
    seed: int = 1


class MonteCarlo(Family):
    name = "monte_carlo"
    horizon = "horizon"
    group = "stochastic"
    title = ("Monte Carlo simulation (resampling)", "蒙特卡洛模拟（重抽样）")
    aliases = ("Monte Carlo", "蒙特卡洛", "蒙特卡罗")
    answers = frozenset({"number", "estimate", "forecast", "policy"})
    Params = MonteCarloParams
    outputs = ("probability_exceed", "mean_total", "p95")
    cues = (
        "simulat", "probabilit", "chance", "random", "risk", "uncertain", "exceed", "shortage", "stock", "inventor",
        "reliab", "likel", "monte carlo", "模拟", "概率", "随机", "风险", "不确定", "超过", "短缺", "库存", "可能性",
        "蒙特卡",
    )  # fmt: skip

    def table_misfit(self, frame: pd.DataFrame) -> str:
        if len(frame) < 10 or not measures(frame):
            return "it needs at least 10 observations of a measured quantity to resample"
        return ""

    def check(self, data: ProblemData, params: Any) -> list[str]:
        p = MonteCarloParams.model_validate(params)
        reasons = columns_problem(data, p.table, [p.column], min_rows=10)
        if not stated(data.statement, p.capacity):
            reasons.append(f"the capacity {p.capacity:g} is not a number the problem states")
        return reasons

    def sentences(self, result: dict[str, Any], *, lang: str) -> list[str]:
        r = result
        if zh(lang):
            return [
                f"{num(r['runs'])} 次模拟（每次 {num(r['horizon'])} 期）中，总量超过 {num(r['capacity'])} 的概率为 {num(r['probability_exceed'])}；总量均值 {num(r['mean_total'])}，{num(r['interval_pct'])}% 区间 {num(r['p05'])} 到 {num(r['p95'])}。",
                *([f"容量不低于 {num(r['p95'])}（总量的上 {num(r['tail_pct'])}% 分位点）时，{num(r['horizon'])} 期的总量超过容量的概率不超过 {num(r['tail_pct'])}%。"] if "tail_pct" in r else []),
            ]  # fmt: skip
        return [
            f"In {num(r['runs'])} simulations of {num(r['horizon'])} periods the total exceeds {num(r['capacity'])} with probability {num(r['probability_exceed'])}; its mean is {num(r['mean_total'])}, its {num(r['interval_pct'])}% range {num(r['p05'])} to {num(r['p95'])}.",
            *([f"A capacity of at least {num(r['p95'])} (the total's upper {num(r['tail_pct'])}% point) is exceeded over {num(r['horizon'])} periods with probability at most {num(r['tail_pct'])}%."] if "tail_pct" in r else []),
        ]  # fmt: skip
