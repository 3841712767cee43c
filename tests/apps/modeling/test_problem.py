"""`consulta chat modeling --problem DIR` with a folder that is not a problem: one line in the person's language
(`--lang en` / `zh-CN`), exit status 2, and no run recorded. Run in process through the command's own entry point."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from consulta.apps.modeling import MAX_DATA_BYTES, load_problem
from consulta.frontends.cli import main
from consulta.runtime import Store

SAMPLE = Path(__file__).parents[3] / "src/consulta/apps/modeling/data/samples/electricity_demand"
STATEMENT = "# Demand\n\nForecast the demand.\n"


def _missing(folder: Path) -> Path:
    return folder / "nowhere"


def _empty(folder: Path) -> Path:
    return folder


def _no_data(folder: Path) -> Path:
    (folder / "problem.md").write_text(STATEMENT, encoding="utf-8")
    (folder / "notes.txt").write_text("not data\n", encoding="utf-8")
    return folder


def _not_a_table(folder: Path) -> Path:
    _no_data(folder)
    (folder / "demand.csv").write_text("month,demand\n2020-01,5\n2020-02,6,7,8\n", encoding="utf-8")
    return folder


def _header_only(folder: Path) -> Path:
    _no_data(folder)
    (folder / "demand.csv").write_text("month,demand\n", encoding="utf-8")
    return folder


def _binary(folder: Path) -> Path:
    _no_data(folder)
    (folder / "demand.csv").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe" * 20)
    return folder


def _not_utf8_statement(folder: Path) -> Path:
    (folder / "problem.md").write_bytes("# 用电需求\n".encode("gb18030"))
    (folder / "demand.csv").write_text("month,demand\n2020-01,5\n", encoding="utf-8")
    return folder


def _too_big(folder: Path) -> Path:
    _no_data(folder)
    with (folder / "demand.csv").open("wb") as f:
        f.write(b"month,demand\n")
        f.truncate(MAX_DATA_BYTES + 1)  # sparse: the size is refused before a byte is read
    return folder


FAULTS: dict[str, tuple[Callable[[Path], Path], str, str]] = {
    "missing": (_missing, "does not exist", "不存在"),
    "empty": (_empty, "no problem statement", "没有问题陈述"),
    "no_data": (_no_data, "no data file", "没有数据文件"),
    "not_a_table": (_not_a_table, "is not a table", "不是表格"),
    "header_only": (_header_only, "is not a table", "不是表格"),
    "binary_csv": (_binary, "is not UTF-8", "不是 UTF-8"),
    "statement_not_utf8": (_not_utf8_statement, "is not UTF-8", "不是 UTF-8"),
    "over_the_size_limit": (_too_big, "over the 50.0 MB", "超过问题文件的上限 50.0 MB"),
}


def _chat(home: Path, problem: Path, lang: str, monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setenv("CONSULTA_HOME", str(home))
    monkeypatch.delenv("CONSULTA_DATABASE_URL", raising=False)
    argv = ["consulta", "chat", "modeling", "--lang", lang, "--model", "scripted:none", "-p", "go"]
    monkeypatch.setattr(sys, "argv", [*argv, "--problem", str(problem)])
    with pytest.raises(SystemExit) as ended:
        main()
    return ended.value.code


@pytest.mark.parametrize("lang", ["en", "zh-CN"])
@pytest.mark.parametrize("fault", list(FAULTS))
def test_a_folder_that_is_not_a_problem_is_one_line_exit_2_and_no_run(
    fault: str, lang: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    make, en, zh = FAULTS[fault]
    folder = tmp_path / "problem"
    folder.mkdir()
    home = tmp_path / "home"
    assert _chat(home, make(folder), lang, monkeypatch) == 2
    out = capsys.readouterr()
    lines = [line for line in (out.out + out.err).splitlines() if line.strip()]
    assert len(lines) == 1, lines
    assert (en if lang == "en" else zh) in lines[0] and "Traceback" not in lines[0]
    assert lines[0].startswith("Error:" if lang == "en" else "错误")
    database = home / "consulta.db"
    if database.exists():
        store = Store(f"sqlite:///{database}")
        try:
            assert store.list_runs() == []
        finally:
            store.close()
    assert not (home / "apps" / "modeling" / "runs").exists() or not any(
        (home / "apps" / "modeling" / "runs").iterdir()
    )


def test_the_samples_and_a_copy_of_one_are_problems(tmp_path: Path) -> None:
    copy = shutil.copytree(SAMPLE, tmp_path / "problem")
    assert load_problem(copy).data_files == ["demand_monthly.csv", "economy_yearly.csv"]
