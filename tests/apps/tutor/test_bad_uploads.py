"""Every file a student can upload wrongly (the corpus in `bad_uploads/`, and what git cannot hold: a file over the
limit, a zip bomb of a workbook) is refused with one readable line in their language, naming the file and what to
do — through every way in (the web's multipart upload, MCP's upload_dataset, the desktop's and the terminal's copy)
— and nothing is written to the upload folder, not even a partial file."""

from __future__ import annotations

import asyncio
import io
import re
import zipfile
from collections.abc import Callable, Iterator
from importlib import resources
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from fastapi.testclient import TestClient

from apps.tutor._folders import session_uploads
from consulta.apps.tutor import MAX_UPLOAD_BYTES
from consulta.apps.tutor._datasets import not_a_table, open_dataset, say_issue
from consulta.apps.tutor._uploads import MAX_UNPACKED_BYTES, UploadRefused, copy_upload, save_upload
from consulta.frontends.web import create_app
from consulta.runtime import ToolError
from frontends._terminal import run_consulta
from frontends.web.conftest import new_session, settings_for

CORPUS = Path(__file__).parent / "bad_uploads"
ODD_CORPUS = Path(__file__).parent / "odd_uploads"
SCRIPT = resources.files("consulta.apps.tutor").joinpath("data", "scripts", "unsuitable_upload.yaml")
CJK = re.compile(r"[\u4e00-\u9fff]")

# The corpus, file by file: the refusal's code.
EXPECTED: dict[str, str] = {
    ".hidden.csv": "path_outside_uploads",
    "blank_lines.csv": "no_rows",
    "data.json": "unsupported_file_type",
    "empty.csv": "empty_file",
    "gbk.csv": "invalid_encoding",
    "header_only.csv": "no_rows",
    "latin1.csv": "invalid_encoding",
    "no_extension": "unsupported_file_type",
    "png_named.csv": "not_text",
    "text_named.xls": "not_a_workbook",
    "text_named.xlsx": "not_a_workbook",
    "utf16.csv": "invalid_encoding",
    "word_document.xlsx": "not_a_workbook",
    "workbook_named.csv": "not_text",
}
STATUS = {"file_too_large": 413, "unsupported_file_type": 415}


def _too_large(folder: Path) -> Path:
    path = folder / "big.csv"
    with path.open("wb") as handle:
        handle.truncate(MAX_UPLOAD_BYTES + 1)  # sparse: refused on its size, before it is read
    return path


def _zip_bomb(folder: Path) -> Path:
    """A workbook of a few hundred kB that unpacks past MAX_UNPACKED_BYTES."""
    path = folder / "bomb.xlsx"
    zeros = b"\0" * (1024 * 1024)
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as workbook:
        workbook.writestr("xl/workbook.xml", "<workbook/>")
        with workbook.open("xl/worksheets/sheet1.xml", "w") as sheet:
            for _ in range(MAX_UNPACKED_BYTES // len(zeros) + 1):
                sheet.write(zeros)
    assert path.stat().st_size < MAX_UPLOAD_BYTES
    return path


GENERATED: dict[str, tuple[Callable[[Path], Path], str]] = {
    "over-the-limit": (_too_large, "file_too_large"),
    "zip-bomb": (_zip_bomb, "unpacks_too_large"),
}


def test_the_corpus_is_the_table() -> None:
    assert sorted(p.name for p in CORPUS.iterdir()) == sorted(EXPECTED)


def check_refusal(error: UploadRefused, name: str, code: str) -> None:
    """The code; one line in English and one in Chinese, each naming the file (the tool's message too)."""
    assert error.error_code == code and error.field == "file"
    assert name in error.message and "\n" not in str(error)
    english, chinese = error.localized("en"), error.localized("zh-CN")
    for line in (english, chinese):
        assert "\n" not in line and line.startswith(name)
    assert "was not uploaded" in english and "未上传" in chinese and CJK.search(chinese)


def uploads(folder: Path) -> list[str]:
    """Everything in the folder, hidden files (a partial upload) included."""
    return sorted(p.name for p in folder.iterdir())


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    path = tmp_path / "uploads"
    path.mkdir()
    return path


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_bad_file_is_refused_by_copy_and_by_content_and_nothing_is_written(folder: Path, name: str) -> None:
    source = CORPUS / name
    with pytest.raises(UploadRefused) as copied:  # the desktop's and the terminal's way in
        copy_upload(folder, source)
    check_refusal(copied.value, name, EXPECTED[name])
    with pytest.raises(UploadRefused) as saved:  # MCP's way in: the content itself
        save_upload(folder, name, source.read_bytes())
    assert saved.value.error_code == EXPECTED[name]
    assert uploads(folder) == []


@pytest.mark.parametrize("case", sorted(GENERATED))
def test_what_git_cannot_hold_is_refused_the_same_way(tmp_path: Path, folder: Path, case: str) -> None:
    make, code = GENERATED[case]
    source = make(tmp_path)
    with pytest.raises(UploadRefused) as info:
        copy_upload(folder, source)
    check_refusal(info.value, source.name, code)
    assert uploads(folder) == []


def test_a_file_over_the_limit_is_refused_before_it_is_read(
    tmp_path: Path, folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = _too_large(tmp_path)

    def no_reading(*args: object, **kwargs: object) -> None:
        raise AssertionError("the file was opened")

    monkeypatch.setattr(Path, "open", no_reading)
    with pytest.raises(UploadRefused) as info:
        copy_upload(folder, source)
    assert info.value.error_code == "file_too_large"
    assert info.value.localized("zh-CN") == "big.csv 未上传：文件超过 20 MB 的上限。"


def test_good_files_still_go_in(tmp_path: Path, folder: Path) -> None:
    good = {
        "data.csv": b'name,city\nAda,Paris\n\nBo,"Rome, Italy"\n',
        "bom.csv": b"\xef\xbb\xbfname,city\nAda,Paris\n",
        "data.tsv": "名字\t城市\n张三\t北京\n".encode(),
        "long_value.csv": b"a,b\n" + b"x" * 300_000 + b",1\n",
        # R's write.csv: a header one field short of every row (row names), which pandas reads as the index
        "row_names.csv": b'"weight","feed"\n"1",26.5,NA\n"2",27.6,5.2\n',
    }
    workbook = io.BytesIO()
    with zipfile.ZipFile(workbook, "w") as parts:
        parts.writestr("xl/workbook.xml", "<workbook/>")
    good["book.xlsx"] = workbook.getvalue()
    for name, data in good.items():
        assert save_upload(folder, name, data).size == len(data)
    assert uploads(folder) == sorted(good)
    assert list(pd.read_csv(folder / "row_names.csv").columns) == ["weight", "feed"]


# Files pandas cannot read, or reads oddly, are the student's problem the tutor helps with: they go in, and the data
# inspector's verdict says what pandas made of them (file: what the verdict's blocking issue says, None = it reads).
ODD: dict[str, str | None] = {
    "notes.txt": None,  # a CSV saved as .txt: its separator is sniffed
    "ragged_fewer.tsv": None,  # a row short of the header: pandas fills it with NaN
    "ragged_more.csv": "line 3 has 4 fields, the header has 3",
    "unclosed_quote.csv": "could not be read as a table",
}


def test_the_odd_corpus_is_the_table() -> None:
    assert sorted(p.name for p in ODD_CORPUS.iterdir()) == sorted(ODD)


@pytest.mark.parametrize("name", sorted(ODD))
def test_an_odd_table_goes_in_and_the_inspection_says_what_pandas_made_of_it(folder: Path, name: str) -> None:
    source = ODD_CORPUS / name
    copy_upload(folder, source)
    assert uploads(folder) == [name]
    path = folder / name
    said = ODD[name]
    if said is None:
        assert list(open_dataset(path).columns) == ["name", "city", "score"]
        return
    with pytest.raises(ToolError) as info:
        open_dataset(path)
    verdict = not_a_table(path, info.value.message)
    assert not verdict.is_suitable and len(verdict.blocking_issues) == 1
    issue = verdict.blocking_issues[0]
    assert issue.startswith(name) and said in issue
    chinese = say_issue(issue, "zh-CN")
    assert chinese.startswith(name) and CJK.search(chinese)


# --------------------------------------------------------------------------------------------------------------
# Front ends: the web's status and body, the terminal's line and exit code


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    with (
        resources.as_file(SCRIPT) as script,
        TestClient(create_app(app="tutor", settings=settings_for(tmp_path, Path(script)))) as test_client,
    ):
        yield test_client


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_the_web_refuses_each_with_a_4xx_and_the_error_body(client: TestClient, tmp_path: Path, name: str) -> None:
    headers = new_session(client)
    data = (CORPUS / name).read_bytes()
    response = client.post("/api/tutor/uploads", headers=headers, files={"file": (name, data, "text/csv")})
    code = EXPECTED[name]
    assert response.status_code == STATUS.get(code, 422), response.text
    body = response.json()
    assert body["error_code"] == code and name in body["message"] and body["field"] == "file"
    assert client.get("/api/tutor/uploads", headers=headers).json()["files"] == []
    assert uploads(session_uploads(tmp_path)) == []


@pytest.mark.parametrize("lang", ["en", "zh-CN"])
@pytest.mark.parametrize("name", ["header_only.csv", "gbk.csv", "data.json", "word_document.xlsx"])
def test_the_terminal_refuses_a_file_in_one_line_and_exits_2(
    tmp_path: Path, lang: str, name: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["chat", "tutor", "--file", str(CORPUS / name), "--model", "scripted:none.yaml", "--lang", lang, "-p", "hi"]
    code, printed = run_consulta(argv, tmp_path / "home", monkeypatch, capsys)
    assert code == 2
    lines = [line for line in printed.strip().splitlines() if not line.startswith("Consulta ·")]
    assert len(lines) == 1 and name in lines[0] and "Traceback" not in printed, printed
    assert lines[0].startswith(f"Error: {name} was not uploaded" if lang == "en" else f"错误：{name} 未上传")
    folder = tmp_path / "home" / "apps" / "tutor" / "uploads"
    assert not folder.exists() or uploads(folder) == []


def test_mcp_upload_dataset_refuses_with_the_tool_error(folder: Path) -> None:
    data = (CORPUS / "header_only.csv").read_bytes()
    with pytest.raises(ToolError) as info:
        asyncio.run(_mcp_upload(folder, "header_only.csv", data.decode()))
    assert info.value.to_result()["error_code"] == "no_rows" and uploads(folder) == []


async def _mcp_upload(folder: Path, name: str, content: str) -> Any:
    from consulta.apps.tutor._mcp import tools

    class View:
        data_path = folder

    upload_dataset = next(tool for tool in tools(View()) if tool.name == "upload_dataset")  # type: ignore[arg-type]
    return await upload_dataset.function(name=name, content=content)
