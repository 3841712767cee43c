"""`--problem` is checked once, by the app (`AppDef.check_options`), for every command that serves modeling —
`chat`, `serve`, `desktop`, `mcp` — before anything starts: a folder that is not a problem is one line in the
person's language and exit status 2, never a traceback, and no server, window or MCP session is started (the
servers are test doubles here that fail the test if they are reached). Run in process through the command's entry
point."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from consulta.apps import get_app
from consulta.apps.modeling import ProblemError, load_problem
from consulta.frontends.cli import main

from .contest_files import xlsx_bytes

SAMPLE = Path(__file__).parents[3] / "src/consulta/apps/modeling/data/samples/electricity_demand"
STATEMENT = "# Demand\n\nTask 1: forecast the demand.\n"
TABLE = "month,demand\n2020-01,5\n2020-02,6\n"


def _missing(folder: Path) -> Path:
    return folder / "nowhere"


def _a_file(folder: Path) -> Path:
    (folder / "problem.md").write_text(STATEMENT, encoding="utf-8")
    return folder / "problem.md"


def _no_statement(folder: Path) -> Path:
    (folder / "demand.csv").write_text(TABLE, encoding="utf-8")
    return folder


def _not_a_pdf(folder: Path) -> Path:
    _no_statement(folder)
    (folder / "problem.pdf").write_bytes(b"%PDF-1.7\n this is no PDF")
    return folder


def _bad_table(folder: Path) -> Path:
    (folder / "problem.md").write_text(STATEMENT, encoding="utf-8")
    (folder / "demand.csv").write_text("month,demand\n2020-01,5,5\n", encoding="utf-8")
    return folder


def _table_clash(folder: Path) -> Path:
    (folder / "problem.md").write_text(STATEMENT, encoding="utf-8")
    (folder / "demand.xlsx").write_bytes(xlsx_bytes({"monthly": [["month", "demand"], ["2020-01", 5]]}))
    (folder / "demand.monthly.csv").write_text(TABLE, encoding="utf-8")  # the sheet's table's name
    return folder


FAULTS: dict[str, tuple[Callable[[Path], Path], str, str]] = {
    "missing": (_missing, "does not exist", "不存在"),
    "a_file": (_a_file, "is a file, not a folder", "是一个文件，不是文件夹"),
    "no_statement": (_no_statement, "no problem statement", "没有问题陈述"),
    "unreadable_pdf": (_not_a_pdf, "could not be read as a PDF", "无法作为 PDF"),
    "bad_table": (_bad_table, "is not a table", "不是表格"),
    "table_clash": (_table_clash, "would both be read as the table demand.monthly.csv", "都会被读作表格"),
}
COMMANDS: dict[str, list[str]] = {
    "chat": ["chat", "modeling", "--model", "scripted:none", "-p", "go"],
    "serve": ["serve", "modeling", "--model", "scripted:none", "--port", "0"],
    "desktop": ["desktop", "modeling", "--model", "scripted:none"],
    "mcp": ["mcp", "modeling"],
}
STARTERS = {"serve": "consulta.frontends.web.serve", "mcp": "consulta.frontends.mcp.run_mcp"}
"""What each command starts once its flags are checked (`desktop`'s, Qt, is imported only after: not patched)."""


def _started_double(started: list[dict[str, Any]]) -> Callable[..., None]:
    def double(**kwargs: Any) -> None:  # a test double of a server: records that it would have started
        started.append(kwargs)

    return double


def _run(command: str, problem: Path, lang: str, home: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[int, list]:
    monkeypatch.setenv("CONSULTA_HOME", str(home))
    monkeypatch.delenv("CONSULTA_DATABASE_URL", raising=False)
    started: list[dict[str, Any]] = []
    if command in STARTERS:
        monkeypatch.setattr(STARTERS[command], _started_double(started))
    argv = ["consulta", *COMMANDS[command], "--lang", lang, "--problem", str(problem)]
    monkeypatch.setattr(sys, "argv", argv)
    with pytest.raises(SystemExit) as ended:
        main()
    return ended.value.code, started


@pytest.mark.parametrize("lang", ["en", "zh-CN"])
@pytest.mark.parametrize("fault", list(FAULTS))
@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_bad_problem_is_one_line_and_exit_2_before_anything_starts(
    command: str,
    fault: str,
    lang: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    make, en, zh = FAULTS[fault]
    folder = tmp_path / "problem"
    folder.mkdir()
    code, started = _run(command, make(folder), lang, tmp_path / "home", monkeypatch)
    out = capsys.readouterr()
    assert code == 2 and started == []
    lines = [line for line in (out.out + out.err).splitlines() if line.strip()]
    assert len(lines) == 1, lines
    assert (en if lang == "en" else zh) in lines[0] and "Traceback" not in lines[0]
    assert lines[0].startswith("Error:" if lang == "en" else "错误")
    if command == "mcp":
        assert out.out == ""  # stdout is the protocol's, over stdio: the person's line is on stderr
    assert not (tmp_path / "home" / "consulta.db").exists()  # no store opened, no run recorded


def test_a_good_problem_starts_the_mcp_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same check lets a problem through: the server (a double here) is started with it."""
    problem = shutil.copytree(SAMPLE, tmp_path / "problem")
    code, started = _run("mcp", problem, "en", tmp_path / "home", monkeypatch)
    assert code == 0 and len(started) == 1 and started[0]["options"].problem == str(problem)


def test_a_folder_the_system_does_not_let_us_read_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A statement the system refuses to read (permissions: faked, as the tests may run as root, whom chmod does not
    stop) is refused with the file named, not a traceback (an OSError would otherwise escape)."""
    folder = shutil.copytree(SAMPLE, tmp_path / "problem")
    statement = folder / "problem.md"
    real = Path.read_bytes

    def refused_read(path: Path) -> bytes:  # a test double of the system refusing the read
        if path == statement:
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(Path, "read_bytes", refused_read)
    with pytest.raises(ProblemError) as refused:
        get_app("modeling").check_options(get_app("modeling").parse_options({"problem": str(folder)}))
    assert refused.value.reason == "unreadable"
    assert str(statement) in refused.value.localized("en") and "Permission denied" in refused.value.localized("en")
    assert "无法读取" in refused.value.localized("zh-CN")
    monkeypatch.setattr(Path, "read_bytes", real)
    assert load_problem(folder).data_files  # the same folder, readable, is a problem


def test_no_problem_is_not_refused() -> None:
    """The page takes a problem per session: the server may start without `--problem`."""
    app = get_app("modeling")
    assert app.check_options is not None
    app.check_options(app.parse_options({}))
