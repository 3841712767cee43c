"""A modeling run's workspace as the team leaves it part-way (the real records' formats: a consultation record, the
gates' verdicts written by `write_validation_record`, a cleaned table, a script and a figure), and a test-only app
that serves the modeling app's desktop part over it with a scripted Director that may ask (the escalation's
question) and has no team: the workspace is made here.
Used by the desktop tests and by the Xvfb screenshot script."""

from __future__ import annotations

import shutil
import struct
import zlib
from pathlib import Path
from typing import Any

from pydantic import Field

from consulta.apps import AppDef, AppEnv, AppOptions
from consulta.apps.modeling._gates import Verdict, write_validation_record
from consulta.asks import question_tool
from consulta.runtime import Agent

SAMPLE = Path(__file__).resolve().parents[3] / "src/consulta/apps/modeling/data/samples/electricity_demand"
WORKSPACE = "electricity-demand-0123456789"
CONSULTATION = """# 咨询记录: modeler → data_engineer #1

| 字段 | 值 |
|------|------|
| 发起方 | modeler |
| 接收方 | data_engineer |
| 时间 | 2026-11-23T10:00:05+00:00 |

---

## 问题

数据是否支持把制冷度日数作为特征？

## 背景

模型需要解释夏季的用电高峰。

---

## 回复

FROM @data_engineer:

**回答**：支持：cooling_degree_days 覆盖全部 120 个月，没有缺失。

---

## 结果

modeler 把制冷度日数和采暖度日数都作为回归特征。
"""


def png(width: int = 120, height: int = 60) -> bytes:
    """A small valid PNG (a figure the team drew, as far as the files panel is concerned): a blue gradient."""
    row = b"\x00" + b"".join(bytes((x * 255 // width, 90, 200)) for x in range(width))
    rows = row * height

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


def build_workspace(root: Path) -> Path:
    """The problem, cleaned data, a consultation, verdicts (data ready rejected by code, then approved; code runs
    rejected by the validator), a script and a figure."""
    shutil.copytree(SAMPLE, root / "problem")
    (root / "data").mkdir()
    shutil.copyfile(SAMPLE / "demand_monthly.csv", root / "data" / "demand_monthly.csv")
    verdicts = [
        ("data_ready", "REJECTED", 1, "code", ["data/demand_monthly.csv: month 2019-06 appears twice."], "10:00:01"),
        ("data_ready", "APPROVED", 2, "validator", ["No NaN, duplicate or gap; totals agree."], "10:00:03"),
        ("code_runs", "REJECTED", 1, "validator", ["code/fit.py: no holdout check; add one."], "10:00:09"),
    ]
    for gate, status, attempt, by, reasons, time in verdicts:
        write_validation_record(
            root,
            Verdict(gate=gate, status=status, attempt=attempt, reasons=reasons, decided_by=by,
                    decided_at=f"2026-11-23T{time}+00:00"),
        )  # fmt: skip
    (root / "consultation").mkdir()
    (root / "consultation" / "modeler_data_engineer_1.md").write_text(CONSULTATION, encoding="utf-8")
    (root / "code").mkdir()
    (root / "code" / "fit.py").write_text("import pandas as pd\nprint('fit')\n", encoding="utf-8")
    (root / "results").mkdir()
    (root / "results" / "metrics.csv").write_text("metric,value\ncagr,0.0412\n", encoding="utf-8")
    (root / "figures").mkdir()
    (root / "figures" / "yearly_total.png").write_bytes(png())
    return root


class _Options(AppOptions):
    problem: Path | None = Field(None, description="The problem")


def _data_path(options: Any, env: AppEnv) -> Path | None:
    return env.data_dir / "runs" / WORKSPACE if options.problem is not None else None


def _director(options: Any, env: AppEnv) -> Agent:
    return Agent(app="modeling", name="director", instructions="[director] test", tools=(question_tool(),),
                 options=options.model_dump(mode="json"))  # fmt: skip


def _desktop() -> Any:
    from consulta.apps.modeling._app import APP

    assert APP.desktop is not None
    return APP.desktop()


TEST_APP = AppDef(
    name="modeling",
    description="the modeling app's desktop part over a made workspace (test double: no team)",
    agents={"director": _director},
    main_agent="director",
    options=_Options,
    data_path=_data_path,
    desktop=_desktop,
)


def run_folder(home: Path, run_id: str) -> Path:
    """Where the run `run_id` (the first of its conversation) has its workspace."""
    return home / "apps" / "modeling" / "runs" / WORKSPACE / run_id
