"""The files a problem comes in, read the same way however it comes (the page's upload, the terminal's `--problem`
folder): a statement in PDF read to text (pypdf), an Excel workbook's sheets read as CSV tables (openpyxl), each
refused with a `ProblemError` (one line in the person's language, `modeling.problem.<reason>`) when it cannot be.

The files are untrusted input. A PDF may be at most `MAX_PDF_BYTES` (`too_big`) and `MAX_PDF_PAGES` pages
(`pdf_too_long`), its text at most `MAX_STATEMENT_BYTES` (`pdf_too_much_text`), read in at most `MAX_PDF_SECONDS`
(`pdf_too_slow`); one that does not parse is `pdf_unreadable`, one that needs a password to open is `pdf_encrypted`
(one only its owner's password protects, which any viewer opens, is read), one without text (a scan) is
`pdf_no_text`. A workbook is a zip archive bounded before openpyxl unpacks it (`MAX_WORKBOOK_MEMBERS`,
`MAX_WORKBOOK_UNPACKED`: `workbook_too_big`), read in openpyxl's read-only mode with the values Excel last saved
(formulas are never evaluated: a formula cell no program computed and saved reads empty), at most `MAX_SHEETS` sheets
(`too_many_sheets`), `MAX_ROWS` rows (`sheet_too_long`) and `MAX_COLUMNS` columns (`sheet_too_wide`) a sheet,
`MAX_CELLS` cells in all (`too_many_cells`), `MAX_DATA_BYTES` a table (`sheet_too_big`), read in at most
`MAX_WORKBOOK_SECONDS` (`workbook_too_slow`); each sheet with a header
row and a data row becomes the table `<workbook's stem>.<sheet>.csv` (`table_names`; empty rows dropped, rows padded
to the widest; a problem whose other data file is read under that name is refused as a whole, `table_clash`:
`_problem.distinct_tables`), and a workbook with none is `workbook_empty`; one that is not an .xlsx workbook is
`not_workbook`.

What was read of a file is kept for the file as it is (its device, inode, size and modification time), so showing a
problem on the page again does not read its PDF again."""

from __future__ import annotations

import csv
import io
import logging
import re
import threading
import warnings
import zipfile
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, time
from pathlib import Path
from time import monotonic
from typing import Any, TypeVar

from ...i18n import t
from ...runtime import ConfigError
from .._uploads import zip_unpacked

__all__ = [
    "DATA_SUFFIXES",
    "MAX_CELLS",
    "MAX_COLUMNS",
    "MAX_DATA_BYTES",
    "MAX_PDF_BYTES",
    "MAX_PDF_PAGES",
    "MAX_PDF_SECONDS",
    "MAX_ROWS",
    "MAX_SHEETS",
    "MAX_WORKBOOK_SECONDS",
    "MAX_STATEMENT_BYTES",
    "PDF_SUFFIX",
    "TABLE_SUFFIX",
    "WORKBOOK_SUFFIX",
    "ProblemError",
    "Table",
    "pdf_statement",
    "size_text",
    "table_names",
    "workbook_tables",
]

MAX_DATA_BYTES = 50 * 1024 * 1024
"""The largest data file a problem may hold (a CSV, a workbook, and each table read from a workbook)."""
MAX_STATEMENT_BYTES = 1024 * 1024
"""The largest problem.md or problem.json, and the most text (UTF-8) a PDF statement may hold."""
MAX_PDF_BYTES = 20 * 1024 * 1024
MAX_PDF_PAGES = 60
MAX_PDF_SECONDS = 30
"""How long reading a PDF's pages may take (checked after each page)."""
_clock = monotonic
MAX_WORKBOOK_MEMBERS = 10_000
MAX_WORKBOOK_UNPACKED = 4 * MAX_DATA_BYTES
MAX_SHEETS = 20
MAX_ROWS = 200_000
MAX_COLUMNS = 500
MAX_CELLS = 3_000_000
MAX_WORKBOOK_SECONDS = 90
"""How long reading a workbook's sheets may take (checked every `_ROWS_A_LOOK` rows; 500,000 cells took 12 s here)."""
_ROWS_A_LOOK = 1000
TABLE_SUFFIX = ".csv"
WORKBOOK_SUFFIX = ".xlsx"
PDF_SUFFIX = ".pdf"
DATA_SUFFIXES = (TABLE_SUFFIX, WORKBOOK_SUFFIX)
"""The data files a problem takes: CSV tables, and Excel workbooks (each sheet a table)."""


class ProblemError(ConfigError):
    """A problem, or a file of it, that cannot be worked on: `reason` (`missing`, `not_folder`, `unreadable`,
    `no_statement`, `several_pdfs`, `bad_json`, `no_data`, `not_utf8`, `not_table`, `too_big`, `bad_tasks`,
    `table_clash`, and the file readers' reasons the module names) and the values its message names; its words are
    the catalog's `modeling.problem.<reason>` in the person's language."""

    def __init__(self, reason: str, **values: Any) -> None:
        self.reason = reason
        self.values = {k: str(v) for k, v in values.items()}
        super().__init__(self.localized("en"))

    def localized(self, lang: str) -> str:
        return t(f"modeling.problem.{self.reason}", lang, **self.values)


def size_text(n: int) -> str:
    return f"{n / 1024**2:.1f} MB" if n >= 1024**2 else f"{max(n // 1024, 1)} kB"


# ---- what was read, kept per file version ----------------------------------------------------------------------------

_T = TypeVar("_T")
_READ: OrderedDict[tuple[object, ...], object] = OrderedDict()
_READ_LOCK = threading.Lock()
_KEPT = 32


def _kept(kind: str, path: Path, read: Callable[[], _T]) -> _T:
    """`read()`, or what it returned for this version of the file (a rename keeps it: an upload checked as its
    temporary file is not read again once in place) read as `kind`. Refusals are not kept."""
    stat = path.stat()
    key = (kind, stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns)
    with _READ_LOCK:
        if key in _READ:
            _READ.move_to_end(key)
            return _READ[key]  # type: ignore[return-value]
    value = read()
    with _READ_LOCK:
        _READ[key] = value
        while len(_READ) > _KEPT:
            _READ.popitem(last=False)
    return value


# ---- a statement in PDF ----------------------------------------------------------------------------------------------

_ITEM_START = re.compile(
    r"^\s*(?:\d+\s*[.)、:：]|[(（]\s*\d+\s*[)）]|[•·▪\-*]\s|(?:task|question|problem|requirement|part)\s*\d"
    r"|问题|任务|要求|第\s*[一二三四五六七八九十\d]+|附件|#)",
    re.I,
)
_ENDS_SENTENCE = re.compile(r"[.:;?!。：；？！)）]\s*$")
_CJK = re.compile(r"[\u3000-\u9fff\uff00-\uffef]")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def pdf_statement(path: Path, *, name: str | None = None) -> str:
    """The text of the PDF statement at `path` (`name`: the file as its refusals name it), its pages in order, the
    lines a paragraph was wrapped into joined again (a task stays one line, as a text statement has it);
    ProblemError (see the module) when it cannot be read."""
    return _kept("pdf", Path(path), lambda: _read_pdf(Path(path), name or Path(path).name))


def _read_pdf(path: Path, name: str) -> str:
    from pypdf import PasswordType, PdfReader

    logging.getLogger("pypdf").setLevel(logging.ERROR)  # its notes on a broken file: the refusal says it

    size = path.stat().st_size
    if size > MAX_PDF_BYTES:
        raise ProblemError("too_big", file=name, size=size_text(size), limit=size_text(MAX_PDF_BYTES))
    pages: list[str] = []
    try:
        reader = PdfReader(path, strict=False)
        if reader.is_encrypted:
            try:  # the empty password opens a PDF only its owner's password protects
                opened = reader.decrypt("") != PasswordType.NOT_DECRYPTED
            except Exception:  # a cipher it cannot do (pypdf's DependencyError, NotImplementedError)
                opened = False
            if not opened:
                raise ProblemError("pdf_encrypted", file=name)
        count = len(reader.pages)
        if count > MAX_PDF_PAGES:
            raise ProblemError("pdf_too_long", file=name, pages=count, limit=MAX_PDF_PAGES)
        held, started = 0, _clock()
        for page in reader.pages:
            text = _CONTROL.sub("", page.extract_text() or "")
            held += len(text.encode("utf-8"))
            if held > MAX_STATEMENT_BYTES:
                raise ProblemError("pdf_too_much_text", file=name, limit=size_text(MAX_STATEMENT_BYTES))
            if _clock() - started > MAX_PDF_SECONDS:  # a page's drawing can be made costly to read
                raise ProblemError("pdf_too_slow", file=name, seconds=MAX_PDF_SECONDS)
            pages.append(text)
    except ProblemError:
        raise
    except Exception as error:  # whatever a broken file makes the parser raise: the file is refused, not the run
        raise ProblemError("pdf_unreadable", file=name, detail=_detail(error)) from None
    text = "\n\n".join(_reflow(page) for page in pages).strip()
    if not re.search(r"\w", text):
        raise ProblemError("pdf_no_text", file=name)
    return text + "\n"


def _detail(error: Exception) -> str:
    words = " ".join(str(error).split())[:120]
    return f"{type(error).__name__}: {words}" if words else type(error).__name__


def _reflow(page: str) -> str:
    """A page's lines with those a paragraph was wrapped into joined: a line joins the one before when that one runs
    near the page's full width (a wrapped line; a title or the last line of a paragraph is shorter), does not end a
    sentence, and this one does not start an item (a number, a bullet, "Task 2", "问题2")."""
    lines = [" ".join(raw.split()) for raw in page.splitlines()]
    full = max((_width(line) for line in lines), default=0)
    out: list[str] = []
    wrapped = False
    for line in lines:
        if not line:
            out.append("")
            wrapped = False
            continue
        if wrapped and not _ITEM_START.match(line):
            previous = out[-1]
            if previous.endswith("-") and line[:1].islower():
                out[-1] = previous[:-1] + line
            elif _CJK.search(previous[-1:]) or _CJK.match(line):
                out[-1] = previous + line
            else:
                out[-1] = f"{previous} {line}"
        else:
            out.append(line)
        wrapped = _width(line) >= 0.7 * full and not _ENDS_SENTENCE.search(line)
    return re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip()


def _width(line: str) -> int:
    """A line's width in Latin letters (a CJK character is two)."""
    return len(line) + len(_CJK.findall(line))


# ---- an Excel workbook -----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Table:
    """A sheet of a workbook as the table the team reads."""

    name: str
    """`<workbook's stem>.<sheet>.csv` (the sheet's name with what a file name cannot hold as `_`)."""
    sheet: str
    rows: int
    """Its data rows (the header not counted)."""
    content: bytes
    """The CSV (UTF-8, `\\n` line ends)."""


def table_names(path: Path, *, name: str | None = None) -> list[str]:
    """The tables the workbook at `path` is read as (their names, in its sheets' order); ProblemError when it cannot
    be (see the module)."""
    name = name or Path(path).name
    return _kept(f"xlsx:{name}", Path(path), lambda: [table.name for table in workbook_tables(path, name=name)])


def workbook_tables(path: Path, *, name: str | None = None) -> list[Table]:
    """The workbook at `path` read as tables, one a sheet that holds one (see the module); ProblemError when it
    cannot be. `name`: the workbook as its refusals name it and its tables are named after (the file's name)."""
    path = Path(path)
    name = name or path.name
    size = path.stat().st_size
    if size > MAX_DATA_BYTES:
        raise ProblemError("too_big", file=name, size=size_text(size), limit=size_text(MAX_DATA_BYTES))
    try:
        members, unpacked = zip_unpacked(path)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError):
        raise ProblemError("not_workbook", file=name, detail="BadZipFile") from None
    if members > MAX_WORKBOOK_MEMBERS or unpacked > MAX_WORKBOOK_UNPACKED:
        raise ProblemError("workbook_too_big", file=name, limit=size_text(MAX_WORKBOOK_UNPACKED))
    sheets = _sheets(path, name)
    tables, taken = [], set()
    for sheet, rows in sheets:
        if len(rows) < 2:
            continue  # an empty sheet, or a header alone: not a table
        width = max(len(row) for row in rows)
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerows(row + [""] * (width - len(row)) for row in rows)
        content = buffer.getvalue().encode("utf-8")
        if len(content) > MAX_DATA_BYTES:
            raise ProblemError("sheet_too_big", file=name, sheet=sheet, limit=size_text(MAX_DATA_BYTES))
        table = _table_name(Path(name).stem, sheet, taken)
        taken.add(table.lower())
        tables.append(Table(name=table, sheet=sheet, rows=len(rows) - 1, content=content))
    if not tables:
        raise ProblemError("workbook_empty", file=name)
    return tables


def _sheets(path: Path, name: str) -> list[tuple[str, list[list[str]]]]:
    """Each worksheet's non-empty rows, as text, trailing empty cells dropped; ProblemError past a bound."""
    from openpyxl import load_workbook

    sheets: list[tuple[str, list[list[str]]]] = []
    cells, started = 0, _clock()
    try:
        with warnings.catch_warnings(), path.open("rb") as handle:
            warnings.simplefilter("ignore")  # openpyxl warns of the parts it does not read (extensions, styles)
            # an open file, not the path: openpyxl refuses a path by its suffix (an upload is checked as `.<name>.part`)
            book = load_workbook(handle, read_only=True, data_only=True, keep_links=False)
            try:
                worksheets = [ws for ws in book.worksheets if hasattr(ws, "reset_dimensions")]  # not chart sheets
                if len(worksheets) > MAX_SHEETS:
                    raise ProblemError("too_many_sheets", file=name, sheets=len(worksheets), limit=MAX_SHEETS)
                for ws in worksheets:
                    ws.reset_dimensions()  # the size it declares may be wrong: read what it holds
                    rows: list[list[str]] = []
                    for number, values in enumerate(ws.iter_rows(values_only=True), start=1):
                        if number % _ROWS_A_LOOK == 0 and _clock() - started > MAX_WORKBOOK_SECONDS:
                            raise ProblemError("workbook_too_slow", file=name, seconds=MAX_WORKBOOK_SECONDS)
                        if number > MAX_ROWS:
                            raise ProblemError("sheet_too_long", file=name, sheet=ws.title, limit=MAX_ROWS)
                        row = [_cell(value) for value in values]
                        while row and not row[-1].strip():
                            row.pop()
                        if not row:
                            continue
                        if len(row) > MAX_COLUMNS:
                            raise ProblemError("sheet_too_wide", file=name, sheet=ws.title, limit=MAX_COLUMNS)
                        cells += len(row)
                        if cells > MAX_CELLS:
                            raise ProblemError("too_many_cells", file=name, limit=MAX_CELLS)
                        rows.append(row)
                    sheets.append((str(ws.title), rows))
            finally:
                book.close()
    except ProblemError:
        raise
    except Exception as error:  # whatever a broken file makes the parser raise: the file is refused, not the run
        raise ProblemError("not_workbook", file=name, detail=_detail(error)) from None
    return sheets


def _cell(value: object) -> str:
    """A cell's value as a CSV field: numbers as Python writes them, dates in ISO 8601."""
    if value is None:
        return ""
    if isinstance(value, datetime):
        return value.date().isoformat() if value.time() == time(0) else value.isoformat(sep=" ")
    if isinstance(value, date | time):
        return value.isoformat()
    return _CONTROL.sub("", str(value))


def _table_name(stem: str, sheet: str, taken: set[str]) -> str:
    part = re.sub(r"[^\w\-]+", "_", sheet).strip("_")[:60] or "sheet"
    base = f"{stem[:50]}.{part}"
    name, n = f"{base}{TABLE_SUFFIX}", 2
    while name.lower() in taken:
        name, n = f"{base}_{n}{TABLE_SUFFIX}", n + 1
    return name
