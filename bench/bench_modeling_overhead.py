"""The Director's cost per consultation (seed 002): what the consultation machinery adds — the request checked,
the number taken and the memo saved, the colleague's answer as a nested run, the record written (and its 结果
filled), the store's ledger row, the events — against calling the same agents directly, with the same scripted
model double (so the model's own time is the same on both sides, and small).

Baseline: the three typed answers a consultation needs (the asker's work, the colleague's answer, the asker's work
after the reply), each a direct `typed_answer` call. Measured: the same three answers through `Director.turn`, with a
store and a parent run (as inside the app). Prints per-consultation times and the ratio; writes
bench/results/modeling_overhead.json.

    PYTHONPATH=src .venv/bin/python bench/bench_modeling_overhead.py [--n 40]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import source_version  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "apps" / "modeling"))
from team_script import SAMPLES, scripted  # noqa: E402

from consulta.apps.modeling import Director, TeamConfig, prepare_workspace, request_text  # noqa: E402
from consulta.apps.modeling._consult import ConsultationRequest  # noqa: E402
from consulta.apps.modeling._team import instructions, output_type  # noqa: E402
from consulta.runtime import RunRecorder, Store, ToolCallContext, typed_answer  # noqa: E402


async def direct(n: int) -> list[float]:
    """The three answers of one consultation, called directly, n times (seconds each time)."""
    model = scripted(consults={"modeler": "researcher"})
    request = ConsultationRequest(
        from_agent="modeler", to_agent="researcher", question="modeler 想确认：这样理解对吗？"
    )
    times = []
    for _ in range(n):
        started = time.perf_counter()
        for agent, mode, prompt in (
            ("modeler", "work", "p"),
            ("researcher", "answer", request_text(request)),
            ("modeler", "work+reply", "p + reply"),
        ):
            await typed_answer(
                model=model,
                instructions=instructions(agent, mode, task="t"),
                prompt=prompt,
                output_type=output_type(agent, mode),
                retries=1,
            )
        times.append(time.perf_counter() - started)
    return times


async def through_director(n: int, root: Path) -> tuple[list[float], int]:
    """The same answers through the Director (with its records, ledger, nested runs and events), n times."""
    problem = root / "problem"
    shutil.copytree(SAMPLES / "electricity_demand", problem)
    workspace = root / "ws"
    loaded = prepare_workspace(workspace, problem)
    store = Store(f"sqlite:///{root}/consulta.db")
    recorder = RunRecorder(store)
    parent = recorder.create(agent="director", app="modeling", prompt="bench", model="scripted", lang="zh-CN")
    call = ToolCallContext(run_id=parent.run.id, tool_call_id="bench", tool_name="run_team", log=parent)
    team = Director(workspace=workspace, problem=loaded, model=scripted(consults={"modeler": "researcher"}), store=store, call=call,
                    config=TeamConfig(budget=1))  # fmt: skip
    times = []
    for i in range(n):
        started = time.perf_counter()
        await team.turn("modeler", "work", step=f"modeler#{i}", phase=f"phase{i}", task="t", prompt="p")
        times.append(time.perf_counter() - started)
    records = len(list((workspace / "consultation").glob("*.md")))
    store.close()
    return times, records


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=40, help="consultations on each side")
    args = parser.parse_args()
    asyncio.run(direct(3))  # warm up imports and the model double
    base = asyncio.run(direct(args.n))
    with tempfile.TemporaryDirectory() as tmp:
        mine, records = asyncio.run(through_director(args.n, Path(tmp)))
    assert records == args.n, f"expected {args.n} consultation records, found {records}"
    b, d = statistics.median(base), statistics.median(mine)
    result = {
        "benchmark": "modeling_overhead",
        "source": source_version(),
        "consultations": args.n,
        "direct_ms_median": round(b * 1000, 2),
        "director_ms_median": round(d * 1000, 2),
        "overhead_ms_per_consultation": round((d - b) * 1000, 2),
        "ratio": round(d / b, 2),
        "baseline": "the same three typed answers (asker, colleague, asker after the reply) called directly with the same scripted model",
    }
    print(f"direct: {result['direct_ms_median']} ms · through the Director: {result['director_ms_median']} ms per consultation "
          f"(+{result['overhead_ms_per_consultation']} ms, ratio {result['ratio']}×)")  # fmt: skip
    out = ROOT / "bench" / "results" / "modeling_overhead.json"
    out.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
