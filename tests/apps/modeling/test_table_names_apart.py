"""A workbook's sheet is read as the table `<stem>.<sheet>.csv`: a CSV of that very name beside it (or a table of that
name another way, whatever its case) is not silently taken for it, nor it for the CSV. The problem is refused, one
line naming both files, as a `--problem` folder (for every command: the same load) and as an upload on the page
(refused, nothing changed, whichever of the two comes second); a workbook uploaded again under its own name is the
one it replaces, not a clash."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from consulta.apps import get_app
from consulta.apps.modeling import ProblemError, load_problem, prepare_workspace
from consulta.frontends.web import create_app
from frontends.web.conftest import new_session, settings_for

from .contest_files import xlsx_bytes
from .team_script import SAMPLES

STATEMENT = (SAMPLES / "electricity_demand" / "problem.md").read_bytes()
HERD = {"Males": [["age", "count"], [0, 305], [1, 270]]}
SHEET_AS_CSV = b"age,count\n0,999\n"
"""Another table than the sheet, under the sheet's table's name: neither may stand for the other."""


def _problem(folder: Path, csv_name: str = "herd.Males.csv") -> Path:
    folder.mkdir()
    (folder / "problem.md").write_bytes(STATEMENT)
    (folder / "herd.xlsx").write_bytes(xlsx_bytes(HERD))
    (folder / csv_name).write_bytes(SHEET_AS_CSV)
    return folder


@pytest.mark.parametrize("csv_name", ["herd.Males.csv", "HERD.males.csv"])
def test_a_csv_named_like_a_sheets_table_is_refused_naming_both(tmp_path: Path, csv_name: str) -> None:
    folder = _problem(tmp_path / "problem", csv_name)
    with pytest.raises(ProblemError) as refused:
        load_problem(folder)
    error = refused.value
    assert error.reason == "table_clash" and {error.values["file"], error.values["other"]} == {"herd.xlsx", csv_name}
    for lang in ("en", "zh-CN"):
        line = error.localized(lang)
        assert "herd.xlsx" in line and csv_name in line and "\n" not in line
        assert bool(re.search(r"[\u4e00-\u9fff]", line)) == (lang == "zh-CN")
    with pytest.raises(ProblemError):  # nothing is copied for a run either
        prepare_workspace(tmp_path / "workspace", folder)
    assert not (tmp_path / "workspace" / "problem").exists()


def test_apart_the_same_files_are_a_problem(tmp_path: Path) -> None:
    folder = _problem(tmp_path / "problem", "herd_males.csv")
    assert load_problem(folder).data_files == ["herd.Males.csv", "herd_males.csv"]
    (folder / "herd_males.csv").unlink()
    shutil.copy(folder / "herd.xlsx", folder / "herd_2.xlsx")  # two workbooks: their tables' stems differ
    assert load_problem(folder).data_files == ["herd.Males.csv", "herd_2.Males.csv"]


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    home = tmp_path_factory.mktemp("home")
    (home / "script.yaml").write_text("- text: The team has started.\n", encoding="utf-8")
    settings = settings_for(home, home / "script.yaml")
    with TestClient(create_app(app=get_app("modeling"), settings=settings)) as test:
        yield test


def _upload(client: TestClient, who: dict[str, str], kind: str, name: str, data: bytes, lang: str = "en") -> Any:
    return client.post(
        f"/api/modeling/problem/{kind}", files={"file": (name, data)}, headers={**who, "Accept-Language": lang}
    )


@pytest.mark.parametrize(
    ("first", "second", "lang"),
    [
        (("herd.xlsx", xlsx_bytes(HERD)), ("herd.Males.csv", SHEET_AS_CSV), "en"),
        (("herd.Males.csv", SHEET_AS_CSV), ("herd.xlsx", xlsx_bytes(HERD)), "zh-CN"),
    ],
)
def test_the_page_refuses_the_second_of_the_two_and_keeps_the_first(
    client: TestClient, first: tuple[str, bytes], second: tuple[str, bytes], lang: str
) -> None:
    who = new_session(client)
    assert _upload(client, who, "statement", "problem.md", STATEMENT).status_code == 201
    before = _upload(client, who, "data", *first).json()
    assert before["ready"], before
    refused = _upload(client, who, "data", *second, lang=lang)
    assert refused.status_code == 422, refused.text
    body = refused.json()
    assert body["error_code"] == "table_clash"
    assert second[0] in body["message"] and first[0] in body["message"] and "\n" not in body["message"]
    assert bool(re.search(r"[\u4e00-\u9fff]", body["message"])) == (lang == "zh-CN")
    after = client.get("/api/modeling/problem", headers=who).json()
    assert after == before  # nothing changed: the first file alone, the problem ready


def test_a_workbook_uploaded_again_replaces_itself(client: TestClient) -> None:
    who = new_session(client)
    _upload(client, who, "statement", "problem.md", STATEMENT)
    assert _upload(client, who, "data", "herd.xlsx", xlsx_bytes(HERD)).status_code == 201
    again = _upload(client, who, "data", "herd.xlsx", xlsx_bytes({"Males": [["age", "count"], [0, 1]]}))
    assert again.status_code == 201 and again.json()["ready"], again.text
