"""A contest problem as it comes — a PDF statement and an .xlsx workbook of data — read by the one reader every way in
uses (`_inputs`): the PDF's text with its tasks whole, each sheet a CSV table named `<stem>.<sheet>.csv`; a
`--problem` folder holding statement.pdf and data.xlsx is a problem whose run's workspace holds the text and tables
(and the originals); and each file that cannot be read is refused with one line in the person's language."""

from __future__ import annotations

import csv
import io
import zipfile
from datetime import datetime
from pathlib import Path

import pytest

from consulta.apps.modeling import ProblemError, _inputs, load_problem, prepare_workspace
from consulta.apps.modeling._inputs import pdf_statement, table_names, workbook_tables
from consulta.apps.modeling._tasks import statement_tasks

from .contest_files import ELEPHANTS, XIANG, pdf_bytes, xlsx_bytes

COUNTS = {
    "Female counts": [["age", "count", "surveyed"], [0, 310, datetime(2023, 5, 1)], [1, 288.5, datetime(2023, 5, 1)]],
    "Males": [["age", "count"], [0, 305], [1, 270], [None, None], [2, "=B2+B3"]],
    "notes": [],
}


def write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def rows(content: bytes) -> list[list[str]]:
    return list(csv.reader(io.StringIO(content.decode("utf-8"))))


def test_a_pdf_statement_reads_as_text_with_its_tasks_whole(tmp_path: Path) -> None:
    text = pdf_statement(write(tmp_path / "problem.pdf", pdf_bytes(ELEPHANTS)))
    assert text.startswith("2024 Problem A: Elephants of the park\n")
    tasks = statement_tasks(text)
    assert [(task.number, task.text) for task in tasks] == [
        (1, "Estimate the survival rate of each age class from the two tables of counts, and say how sure the "
            "estimate is."),
        (2, "How many elephants should be moved out of the park each year to keep the herd at 11000?"),
        (3, "Rank the three management policies below by the herd size they give after 20 years."),
    ]  # fmt: skip
    chinese = pdf_statement(write(tmp_path / "象群.pdf", pdf_bytes(XIANG)))
    assert [(task.number, task.text) for task in statement_tasks(chinese)] == [
        (1, "根据两张表中的数据，估计各年龄段大象的存活率，并说明估计的可靠程度和可能的误差来源。"),
        (2, "为了使象群规模保持在 11000 头左右，保护区每年应迁出多少头大象？"),
    ]
    assert "保护区希望通过每年迁出一定数量的大象来控制象群规模。" in chinese  # a wrapped paragraph is one line again
    # one only its owner's password protects opens as in any viewer
    owned = write(tmp_path / "owned.pdf", pdf_bytes(ELEPHANTS[:1], owner_password="chair"))
    assert "Task 1: Estimate the survival rate" in pdf_statement(owned)


def test_a_workbook_reads_as_one_table_a_sheet(tmp_path: Path) -> None:
    path = write(tmp_path / "herd 2024.xlsx", xlsx_bytes(COUNTS))
    tables = workbook_tables(path)
    assert [(t.name, t.sheet, t.rows) for t in tables] == [
        ("herd 2024.Female_counts.csv", "Female counts", 2),
        ("herd 2024.Males.csv", "Males", 3),
    ]  # the empty sheet is no table
    assert rows(tables[0].content) == [
        ["age", "count", "surveyed"],
        ["0", "310", "2023-05-01"],
        ["1", "288.5", "2023-05-01"],
    ]
    # the empty row dropped; the formula not evaluated (no value was saved with it): empty
    assert rows(tables[1].content) == [["age", "count"], ["0", "305"], ["1", "270"], ["2", ""]]
    assert table_names(path) == [t.name for t in tables]
    assert table_names(path, name="other.xlsx") == ["other.Female_counts.csv", "other.Males.csv"]


def test_a_problem_folder_with_a_pdf_and_a_workbook_is_a_problem(tmp_path: Path) -> None:
    """The terminal's `--problem` (and the MCP server's, the same option): statement.pdf + data.xlsx."""
    folder = tmp_path / "elephants"
    folder.mkdir()
    write(folder / "statement.pdf", pdf_bytes(ELEPHANTS))
    write(folder / "data.xlsx", xlsx_bytes(COUNTS))
    loaded = load_problem(folder)
    assert loaded.data_files == ["data.Female_counts.csv", "data.Males.csv"] and loaded.title == "elephants"
    assert len(statement_tasks(loaded.statement)) == 3
    workspace = prepare_workspace(tmp_path / "ws", folder)
    problem = tmp_path / "ws" / "problem"
    assert sorted(p.name for p in problem.iterdir()) == [
        "data.Female_counts.csv",
        "data.Males.csv",
        "original",
        "problem.md",
    ]
    assert sorted(p.name for p in (problem / "original").iterdir()) == ["data.xlsx", "statement.pdf"]
    assert (problem / "problem.md").read_text(encoding="utf-8") == loaded.statement
    assert workspace.statement == loaded.statement and workspace.data_files == loaded.data_files
    assert rows((problem / "data.Males.csv").read_bytes())[1] == ["0", "305"]
    # a resumed run sees what it started with, though the folder changed since
    write(folder / "data.xlsx", xlsx_bytes({"Males": [["age", "count"], [0, 1]]}))
    assert prepare_workspace(tmp_path / "ws", folder).data_files == loaded.data_files


def test_several_pdfs_and_no_statement_named_are_refused(tmp_path: Path) -> None:
    write(tmp_path / "a.pdf", pdf_bytes(ELEPHANTS))
    write(tmp_path / "b.pdf", pdf_bytes(ELEPHANTS))
    write(tmp_path / "data.csv", b"a,b\n1,2\n")
    with pytest.raises(ProblemError) as refused:
        load_problem(tmp_path)
    assert refused.value.reason == "several_pdfs" and "a.pdf, b.pdf" in str(refused.value)
    write(tmp_path / "problem.pdf", pdf_bytes(ELEPHANTS))  # the statement named: the others are not read
    assert load_problem(tmp_path).data_files == ["data.csv"]


def _zip_without_a_workbook() -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("word/document.xml", "<w/>")
    return out.getvalue()


REFUSED = [
    ("encrypted.pdf", lambda: pdf_bytes(ELEPHANTS, user_password="s3cret", owner_password="chair"), "pdf_encrypted"),
    ("scanned.pdf", lambda: pdf_bytes([[], []]), "pdf_no_text"),
    ("garbage.pdf", lambda: b"%PDF-1.7\n\x00\x01garbage that is no PDF at all", "pdf_unreadable"),
    ("word.pdf", lambda: b"PK\x03\x04 a zip, named .pdf", "pdf_unreadable"),
    ("garbage.xlsx", lambda: b"age,count\n0,310\n", "not_workbook"),
    ("document.xlsx", _zip_without_a_workbook, "not_workbook"),
    ("empty.xlsx", lambda: xlsx_bytes({"Sheet1": [], "Sheet2": [["only a header"]]}), "workbook_empty"),
    ("long.xlsx", lambda: xlsx_bytes({"counts": [["age"]] + [[n] for n in range(8)]}), "sheet_too_long"),
    ("wide.xlsx", lambda: xlsx_bytes({"counts": [list(range(7)), list(range(7))]}), "sheet_too_wide"),
    ("sheets.xlsx", lambda: xlsx_bytes({f"s{n}": [["a"], [n]] for n in range(4)}), "too_many_sheets"),
    ("cells.xlsx", lambda: xlsx_bytes({"a": [[1, 2, 3]] * 5, "b": [[1, 2, 3]] * 5}), "too_many_cells"),
    ("pages.pdf", lambda: pdf_bytes([["Task 1: one."], ["Task 2: two."], ["Task 3: three."]]), "pdf_too_long"),
    ("wordy.pdf", lambda: pdf_bytes([["Task 1: " + "many words " * 20]]), "pdf_too_much_text"),
]


@pytest.mark.parametrize(("name", "make", "reason"), REFUSED, ids=[r[0] for r in REFUSED])
def test_a_file_that_cannot_be_read_is_refused_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, make: object, reason: str
) -> None:
    monkeypatch.setattr(_inputs, "MAX_ROWS", 6)
    monkeypatch.setattr(_inputs, "MAX_COLUMNS", 6)
    monkeypatch.setattr(_inputs, "MAX_PDF_PAGES", 2)
    monkeypatch.setattr(_inputs, "MAX_SHEETS", 3)
    monkeypatch.setattr(_inputs, "MAX_CELLS", 20)
    monkeypatch.setattr(_inputs, "MAX_STATEMENT_BYTES", 100)
    path = write(tmp_path / name, make())  # type: ignore[operator]
    read = pdf_statement if name.endswith(".pdf") else workbook_tables
    with pytest.raises(ProblemError) as refused:
        read(path)
    assert refused.value.reason == reason
    for lang in ("en", "zh-CN"):
        line = refused.value.localized(lang)
        assert name in line and "\n" not in line and "Traceback" not in line


def test_a_pdf_that_takes_too_long_to_read_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(tmp_path / "slow.pdf", pdf_bytes(ELEPHANTS))
    ticks = iter(range(0, 1000, 20))  # a clock where each look takes 20 s
    monkeypatch.setattr(_inputs, "_clock", lambda: next(ticks))
    with pytest.raises(ProblemError) as refused:
        pdf_statement(path)
    assert refused.value.reason == "pdf_too_slow" and "30" in refused.value.localized("zh-CN")


def test_a_workbook_that_takes_too_long_to_read_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(tmp_path / "slow.xlsx", xlsx_bytes({"counts": [["n"]] + [[n] for n in range(25)]}))
    ticks = iter(range(0, 1000, 50))  # a clock where each look takes 50 s
    monkeypatch.setattr(_inputs, "_clock", lambda: next(ticks))
    monkeypatch.setattr(_inputs, "_ROWS_A_LOOK", 10)
    with pytest.raises(ProblemError) as refused:
        workbook_tables(path)
    assert refused.value.reason == "workbook_too_slow" and "90" in refused.value.localized("zh-CN")


def test_a_workbook_that_unpacks_past_its_bound_is_not_unpacked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(tmp_path / "bomb.xlsx", xlsx_bytes(COUNTS))
    monkeypatch.setattr(_inputs, "MAX_WORKBOOK_UNPACKED", 1000)
    monkeypatch.setattr("openpyxl.load_workbook", lambda *a, **k: pytest.fail("unpacked"))
    with pytest.raises(ProblemError) as refused:
        workbook_tables(path)
    assert refused.value.reason == "workbook_too_big"
