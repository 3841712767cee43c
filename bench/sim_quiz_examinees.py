"""Simulated examinees take quiz's adaptive test through the real HTTP API of `consulta serve quiz`.

Each examinee has a true ability θ and answers each item right with the 2PL probability of the item's own
parameters (the a and b the test chose it with, read from the test's record): right means the key for multiple choice
and true/false, and for a short answer all of the item's expected keywords in one sentence; wrong means another choice,
the other truth value, or a short answer that names none of them. The server runs with the model given (`--model
local`: short answers graded by the embedded model, through tool 6), on a fresh data folder.

Reported per examinee: θ̂ ± SE at the end, items used, the stop reason; over all: bias and RMSE of θ̂, short answers
that named every keyword yet were marked wrong, answers not graded in time (the fallback), median seconds per short
answer.

    flock /work/model.lock .venv/bin/python bench/sim_quiz_examinees.py --theta 1 --theta 0 --theta -1 --per-theta 1
"""

from __future__ import annotations

import argparse
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from sqlalchemy import create_engine, text

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import source_version  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
PROFILE = {
    "self_level": "intermediate",
    "years_experience": 3,
    "job_role": "Analyst",
    "duty": "Reports",
    "interests": ["SQL", "Finance"],
}
WRONG_SHORT = {"en": "I think it is mostly about luck.", "zh-CN": "我觉得主要靠运气。"}


def _call(url: str, body: Any = None, headers: dict[str, str] | None = None, timeout: float = 120) -> Any:
    """A JSON request (POST when `body` is given); the JSON reply."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        url,
        data=data,
        method="GET" if body is None else "POST",
        headers={"Content-Type": "application/json", **(headers or {})},
    )
    with urllib.request.urlopen(request, timeout=timeout) as reply:
        return json.loads(reply.read())


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _serve(home: Path, model: str, port: int) -> subprocess.Popen[bytes]:
    env = {**os.environ, "CONSULTA_HOME": str(home), "CONSULTA_DATABASE_URL": f"sqlite:///{home}/consulta.db"}
    exe = Path(sys.executable).parent / "consulta"
    process = subprocess.Popen(
        [str(exe), "serve", "quiz", "--port", str(port), "--model", model],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=open(home / "server.log", "wb"),  # noqa: SIM115 - kept open for the server's life
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            _call(f"http://127.0.0.1:{port}/api/sessions", {}, timeout=2)
            return process
        except (urllib.error.URLError, OSError):
            time.sleep(0.5)
    process.kill()
    raise SystemExit(f"the server did not start within 120 s; see {home / 'server.log'}")


def _item(engine: Any, test_id: str, position: int, question_id: str) -> dict[str, Any]:
    with engine.connect() as conn:
        row = (
            conn.execute(
                text(
                    "select q.item_type, q.choices, q.correct_key, q.correct_keywords, q.lang, t.a, t.b "
                    "from quiz_questions q join quiz_test_items t on t.question_id = q.id "
                    "where t.session_id = :s and t.position = :p and q.id = :q"
                ),
                {"s": test_id, "p": position, "q": question_id},
            )
            .mappings()
            .one()
        )
    return dict(row)


def _answer(item: dict[str, Any], right: bool) -> str:
    kind = item["item_type"]
    if kind == "short_answer":
        keywords = [k.split("|")[0] for k in json.loads(item["correct_keywords"] or "[]")]
        joiner = "、" if item["lang"] == "zh-CN" else ", "
        return (
            ("答案是：" if item["lang"] == "zh-CN" else "It is ") + joiner.join(keywords)
            if right
            else WRONG_SHORT[item["lang"]]
        )
    key = item["correct_key"] or ""
    if kind == "true_false":
        truth = key.strip().casefold() in ("true", "t", "yes", "正确", "对", "是")
        return "true" if truth == right else "false"
    if right:
        return key
    return next(c for c in json.loads(item["choices"] or "[]") if c.strip().casefold() != key.strip().casefold())


def take(base: str, engine: Any, theta: float, rng: random.Random, lang: str) -> dict[str, Any]:
    token = _call(f"{base}/api/sessions", {})["token"]
    who = {"Authorization": f"Bearer {token}"}
    test = _call(f"{base}/api/quiz/tests", {"profile": PROFILE, "lang": lang}, who)
    short: list[dict[str, Any]] = []
    while test["status"] == "in_progress":
        shown = test["item"]
        item = _item(engine, test["id"], shown["position"], shown["question_id"])
        p = 1 / (1 + pow(2.718281828459045, -item["a"] * (theta - item["b"])))
        right = rng.random() < p
        body = {"position": shown["position"], "question_id": shown["question_id"], "answer": _answer(item, right)}
        started = time.perf_counter()
        result = _call(f"{base}/api/quiz/tests/{test['id']}/answers", body, who)
        seconds = time.perf_counter() - started
        feedback, test = result["feedback"], result["session"]
        if item["item_type"] == "short_answer":
            short.append(
                {
                    "right": right,
                    "is_correct": feedback["is_correct"],
                    "score": feedback["score"],
                    "graded_by": feedback["graded_by"],
                    "seconds": round(seconds, 2),
                }
            )
    return {
        "theta": theta,
        "theta_hat": round(test["theta"], 3),
        "se": round(test["se"], 3),
        "items": test["answered"],
        "stop_reason": test["stop_reason"],
        "short_answers": short,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="local")
    parser.add_argument("--theta", type=float, action="append", help="true abilities (default: -1, 0, 1)")
    parser.add_argument("--per-theta", type=int, default=1)
    parser.add_argument("--lang", default="en", choices=("en", "zh-CN"))
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", type=Path, default=RESULTS / "quiz_examinees.json")
    args = parser.parse_args(argv)
    thetas = args.theta or [-1.0, 0.0, 1.0]
    rng = random.Random(args.seed)
    source = source_version()  # the code the server runs: taken once, before a commit made meanwhile can move it
    with tempfile.TemporaryDirectory(prefix="quiz-sim-") as folder:
        home = Path(folder)
        port = _free_port()
        server = _serve(home, args.model, port)
        engine = create_engine(f"sqlite:///{home}/consulta.db")
        try:
            runs: list[dict[str, Any]] = []
            for theta in [t for _ in range(args.per_theta) for t in thetas]:  # round-robin: a cut run stays balanced
                run = take(f"http://127.0.0.1:{port}", engine, theta, rng, args.lang)
                runs.append(run)
                print(
                    f"θ={theta:+.1f}: θ̂={run['theta_hat']:+.2f} ± {run['se']:.2f}, {run['items']} items, "
                    f"stop {run['stop_reason']}; short answers {len(run['short_answers'])}: "
                    + ", ".join(
                        f"{'R' if s['right'] else 'W'}→{s['score']:.0f}/{s['graded_by']}/{s['seconds']}s"
                        for s in run["short_answers"]
                    ),
                    flush=True,
                )
                _write(args, source, runs, complete=False)  # a run stopped by its bound keeps what it did
        finally:
            engine.dispose()
            server.terminate()
            server.wait(timeout=30)
    print(json.dumps(_write(args, source, runs, complete=True)))
    print(f"wrote {args.out}")
    return 0


def _write(args: argparse.Namespace, source: str, runs: list[dict[str, Any]], *, complete: bool) -> dict[str, Any]:
    """The summary of `runs` so far (bias and RMSE of θ̂, the short answers' grades), written to `args.out` with the
    `source` the run started from."""
    errors = [r["theta_hat"] - r["theta"] for r in runs]
    shorts = [s for r in runs for s in r["short_answers"]]
    summary = {
        "examinees": len(runs),
        "complete": complete,
        "bias": round(statistics.mean(errors), 3),
        "rmse": round(statistics.mean(e * e for e in errors) ** 0.5, 3),
        "by_theta": {
            f"{theta:+.1f}": {
                "n": len(errs),
                "bias": round(statistics.mean(errs), 3),
                "rmse": round(statistics.mean(e * e for e in errs) ** 0.5, 3),
            }
            for theta in dict.fromkeys(r["theta"] for r in runs)
            if (errs := [r["theta_hat"] - r["theta"] for r in runs if r["theta"] == theta])
        },
        "items_mean": round(statistics.mean(r["items"] for r in runs), 1),
        "stopped_by_se": sum(r["stop_reason"] == "se_target" for r in runs),
        "short_answers": len(shorts),
        "all_keywords_marked_wrong": sum(s["right"] and not s["is_correct"] for s in shorts),
        "all_keywords": sum(s["right"] for s in shorts),
        "wrong_marked_right": sum((not s["right"]) and s["is_correct"] for s in shorts),
        "not_graded_in_time": sum(s["graded_by"] == "fallback" for s in shorts),
        "short_seconds_median": round(statistics.median(s["seconds"] for s in shorts), 2) if shorts else None,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    record = {"benchmark": "sim_quiz_examinees", "source": source, "model": args.model, "lang": args.lang}
    tmp = args.out.with_name(args.out.name + ".tmp")
    tmp.write_text(json.dumps({**record, "summary": summary, "runs": runs}, indent=1) + "\n", encoding="utf-8")
    tmp.replace(args.out)
    return summary


if __name__ == "__main__":
    raise SystemExit(main())
