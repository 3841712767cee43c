"""A problem brought through the page (the real modeling app's routes, a real web app and store; no run): the
statement and data uploaded into the session's own problem, the tasks code read from the statement shown and
corrected by the person, the corrections what a run's workspace gets; bad input refused with one line in the
person's language, nothing changed; another session sees none of it; the server's `--problem` as before."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from consulta.apps import AppEnv, get_app
from consulta.apps.modeling import load_problem, prepare_workspace
from consulta.apps.modeling._upload import problem_source, runs_folder
from consulta.frontends.web import create_app
from consulta.i18n import t
from frontends.web.conftest import new_session, settings_for

from .contest_files import ELEPHANTS, pdf_bytes, xlsx_bytes
from .team_script import SAMPLES

SAMPLE = SAMPLES / "electricity_demand"
STATEMENT = (SAMPLE / "problem.md").read_bytes()
DATA = (SAMPLE / "demand_monthly.csv").read_bytes()


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("home")
    (home / "script.yaml").write_text("- text: The team has started.\n", encoding="utf-8")
    return home


@pytest.fixture(scope="module")
def client(home: Path) -> Iterator[TestClient]:
    with TestClient(create_app(app=get_app("modeling"), settings=settings_for(home, home / "script.yaml"))) as test:
        yield test


def upload(client: TestClient, who: dict[str, str], kind: str, name: str, data: bytes, lang: str = "en") -> Any:
    return client.post(
        f"/api/modeling/problem/{kind}", files={"file": (name, data)}, headers={**who, "Accept-Language": lang}
    )


def assert_one_line(message: str, lang: str) -> None:
    """A person's line: one line, no traceback, in their language (Chinese words for zh-CN, none for en)."""
    assert message and "\n" not in message and "Traceback" not in message, message
    assert bool(re.search(r"[\u4e00-\u9fff]", message)) == (lang == "zh-CN"), message


def view(client: TestClient, who: dict[str, str]) -> dict[str, Any]:
    response = client.get("/api/modeling/problem", headers=who)
    assert response.status_code == 200, response.text
    return response.json()


def test_a_problem_is_uploaded_its_tasks_shown_and_corrected(client: TestClient, home: Path) -> None:
    alice, bob = new_session(client), new_session(client)
    assert view(client, alice)["source"] is None
    first = upload(client, alice, "statement", "用电需求.md", STATEMENT)
    assert first.status_code == 201, first.text
    body = first.json()
    assert body["source"] == "upload" and body["statement_name"] == "用电需求.md" and not body["ready"]
    assert body["problem"] == t("modeling.upload.needs_data", "en")
    assert [(task["number"], task["asks"]) for task in body["tasks"]] == [
        (1, "explanation"),
        (2, "forecast"),
        (3, "forecast"),
        (4, "estimate"),
    ]
    body = upload(client, alice, "data", "demand_monthly.csv", DATA).json()
    assert body["ready"] and body["title"] == "某省月度用电需求预测" and body["lang"] == "zh-CN"
    assert body["data_files"] == [{"name": "demand_monthly.csv", "size": len(DATA), "tables": ["demand_monthly.csv"]}]
    assert not body["corrected"]

    # corrected: task 1's text and kind changed, task 4 dropped, one added
    edits = [
        {"text": "分析用电量的趋势与季节性。", "asks": "explanation"},
        {"text": body["tasks"][1]["text"], "asks": "forecast"},
        {"text": body["tasks"][2]["text"], "asks": "number"},
        {"text": "Which month has the highest demand?", "asks": "ranking"},
    ]
    fixed = client.put("/api/modeling/problem/tasks", json={"tasks": edits}, headers=alice)
    assert fixed.status_code == 200, fixed.text
    body = fixed.json()
    assert body["corrected"] and body["ready"]
    assert [(task["number"], task["text"], task["asks"]) for task in body["tasks"]] == [
        (i + 1, e["text"], e["asks"]) for i, e in enumerate(edits)
    ]
    assert view(client, alice) == body

    # another session sees none of it; no session, nothing at all
    assert view(client, bob)["source"] is None
    assert client.get("/api/modeling/problem").status_code == 401
    assert upload(client, {}, "data", "x.csv", DATA).status_code == 401


def test_the_run_works_on_the_sessions_problem_with_the_corrected_tasks(client: TestClient, home: Path) -> None:
    """What `run_team` does with the session's problem: the source, the runs' folder and the workspace's copy."""
    carol = new_session(client)
    upload(client, carol, "statement", "problem.md", STATEMENT)
    upload(client, carol, "data", "demand_monthly.csv", DATA)
    edits = [{"text": "预测 2025 年各月的总用电量。", "asks": "forecast"}]
    assert client.put("/api/modeling/problem/tasks", json={"tasks": edits}, headers=carol).status_code == 200
    sessions = sorted((home / "apps" / "modeling" / "sessions").iterdir(), key=lambda p: p.stat().st_mtime)
    folder = sessions[-1] / "problem"
    env = AppEnv(store=None, resolve_model=lambda s: None, model="", lang="en", data_dir=home / "apps" / "modeling")  # type: ignore[arg-type]
    assert problem_source(None, env) is None  # the terminal without --problem: none
    assert runs_folder(str(SAMPLE), env) == home / "apps" / "modeling" / "runs" / runs_folder(str(SAMPLE), env).name
    loaded = load_problem(folder)
    assert [(t.number, t.text, t.asks) for t in loaded.tasks or []] == [(1, "预测 2025 年各月的总用电量。", "forecast")]
    workspace = prepare_workspace(home / "ws", folder)
    assert workspace.tasks == loaded.tasks and workspace.data_files == ["demand_monthly.csv"]
    assert (home / "ws" / "problem" / "tasks.json").is_file()
    # a new statement: its own tasks again (the corrections were for the other one)
    other = STATEMENT.replace("若 2025 年夏季".encode(), "若 2026 年夏季".encode())
    body = upload(client, carol, "statement", "problem.md", other).json()
    assert not body["corrected"] and len(body["tasks"]) == 4
    assert load_problem(folder).tasks is None


BAD = [
    ("statement", "empty.md", b"   \n\n", "empty_statement", 422),
    ("statement", "nothing.md", b"# A problem\n\nSome background and no question at all.\n", "no_tasks", 422),
    ("statement", "problem.pdf", b"%PDF-1.4\n", "pdf_unreadable", 422),
    ("statement", "problem.docx", b"PK\x03\x04", "unsupported_file_type", 415),
    ("statement", "latin.md", "Task 1: café".encode("latin-1"), "not_utf8", 422),
    ("statement", "zero.md", b"", "empty_file", 422),
    ("data", "../escape.csv", DATA, "path_like_name", 422),
    ("data", ".hidden.csv", DATA, "path_like_name", 422),
    ("statement", "sub/problem.md", STATEMENT, "path_like_name", 422),
    ("data", "ragged.csv", b"a,b\n1,2\n3\n", "not_table", 422),
    ("data", "header_only.csv", b"a,b\n", "not_table", 422),
    ("data", "table.xlsx", b"PK\x03\x04", "not_workbook", 422),
    ("data", "table.xls", b"\xd0\xcf\x11\xe0", "unsupported_file_type", 415),
    ("data", "big.csv", b"a,b\n" + b"1,2\n" * 600, "file_too_large", 413),
]


@pytest.mark.parametrize("lang", ["en", "zh-CN"])
def test_bad_input_gets_one_line_in_the_persons_language_and_changes_nothing(
    client: TestClient, home: Path, lang: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("consulta.apps.modeling._upload.MAX_DATA_BYTES", 2000)
    dave = new_session(client)
    upload(client, dave, "statement", "problem.md", STATEMENT)
    upload(client, dave, "data", "demand_monthly.csv", DATA[:1500])
    before = view(client, dave)
    for kind, name, data, code, status in BAD:
        response = upload(client, dave, kind, name, data, lang)
        assert response.status_code == status and response.json()["error_code"] == code, (name, response.text)
        assert_one_line(response.json()["message"], lang)
        assert view(client, dave) == before, name
    bad_tasks = [
        ([], "bad_task_count"),
        ([{"text": "  ", "asks": "forecast"}], "bad_task_text"),
        ([{"text": "x" * 301, "asks": "forecast"}], "bad_task_text"),
        ([{"text": "Forecast demand.", "asks": "poem"}], "bad_task_kind"),
        ([{"text": "Forecast demand.", "asks": "forecast"}] * 9, "bad_task_count"),
    ]
    for tasks, code in bad_tasks:
        response = client.put(
            "/api/modeling/problem/tasks", json={"tasks": tasks}, headers={**dave, "Accept-Language": lang}
        )
        assert response.status_code == 422 and response.json()["error_code"] == code, response.text
        assert_one_line(response.json()["message"], lang)
        assert view(client, dave) == before
    not_a_form = client.post(
        "/api/modeling/problem/data", json={"file": "a,b"}, headers={**dave, "Accept-Language": lang}
    )
    assert not_a_form.status_code == 415 and not_a_form.json()["error_code"] == "unsupported_media_type"
    assert_one_line(not_a_form.json()["message"], lang)
    nameless = client.post("/api/modeling/problem/data", files={"other": ("x.csv", DATA)}, headers=dave)
    assert nameless.status_code == 422 and nameless.json()["error_code"] == "missing_file"
    gone = client.delete("/api/modeling/problem/data/nope.csv", headers=dave)
    assert gone.status_code == 404 and gone.json()["error_code"] == "no_such_file"
    assert view(client, dave) == before
    # nothing half-written is left in the folder
    leftovers = [p for p in (home / "apps" / "modeling" / "sessions").rglob(".*.part")]
    assert leftovers == []


HERD = {
    "Female counts": [["age", "count"], [0, 310], [1, 288]],
    "Males": [["age", "count"], [0, 305], [1, 270]],
}


def _session_folder(home: Path) -> Path:
    """The problem folder of the session that uploaded last."""
    sessions = sorted((home / "apps" / "modeling" / "sessions").iterdir(), key=lambda p: p.stat().st_mtime)
    return sessions[-1] / "problem"


def test_a_contest_problem_comes_as_a_pdf_and_a_workbook(client: TestClient, home: Path) -> None:
    """The statement a PDF, the data an .xlsx: read by the same reader as a `--problem` folder's; the person sees
    the tasks and the tables, corrects a task; the run's workspace gets the text, the tables and the originals."""
    gina = new_session(client)
    statement = pdf_bytes(ELEPHANTS)
    body = upload(client, gina, "statement", "2024_MCM_A.pdf", statement).json()
    assert body["statement_name"] == "2024_MCM_A.pdf" and not body["ready"]
    assert [task["number"] for task in body["tasks"]] == [1, 2, 3]
    assert body["tasks"][0]["text"].endswith("and say how sure the estimate is.")  # whole, over its two lines
    assert ".pdf" in body["limits"]["statement_types"] and ".xlsx" in body["limits"]["data_types"]
    workbook = xlsx_bytes(HERD)
    body = upload(client, gina, "data", "herd.xlsx", workbook).json()
    assert body["ready"], body
    assert body["data_files"] == [
        {"name": "herd.xlsx", "size": len(workbook), "tables": ["herd.Female_counts.csv", "herd.Males.csv"]}
    ]
    edits = [{"text": task["text"], "asks": task["asks"]} for task in body["tasks"][:2]]
    assert client.put("/api/modeling/problem/tasks", json={"tasks": edits}, headers=gina).json()["corrected"]
    folder = _session_folder(home)
    assert (folder / "problem.pdf").read_bytes() == statement and not (folder / "problem.md").exists()
    loaded = prepare_workspace(home / "ws-gina", folder)
    assert loaded.data_files == ["herd.Female_counts.csv", "herd.Males.csv"] and len(loaded.tasks or []) == 2
    problem = home / "ws-gina" / "problem"
    assert (problem / "original" / "problem.pdf").read_bytes() == statement
    assert (problem / "original" / "herd.xlsx").read_bytes() == workbook
    assert (problem / "herd.Males.csv").read_text(encoding="utf-8") == "age,count\n0,305\n1,270\n"
    assert "Task 2: How many elephants" in (problem / "problem.md").read_text(encoding="utf-8")
    # a text statement replaces the PDF; the workbook is removed like any data file
    upload(client, gina, "statement", "problem.md", STATEMENT)
    assert not (folder / "problem.pdf").exists()
    body = client.delete("/api/modeling/problem/data/herd.xlsx", headers=gina).json()
    assert body["data_files"] == [] and body["statement_name"] == "problem.md"


CONTEST_BAD = [
    ("statement", "locked.pdf", pdf_bytes(ELEPHANTS, user_password="s3cret", owner_password="chair"), "pdf_encrypted"),
    ("statement", "scan.pdf", pdf_bytes([[]]), "pdf_no_text"),
    ("statement", "garbage.pdf", b"%PDF-1.7\n\x00garbage", "pdf_unreadable"),
    ("statement", "no_task.pdf", pdf_bytes([["Elephants: some background, nothing asked."]]), "no_tasks"),
    ("data", "garbage.xlsx", b"age,count\n0,310\n", "not_workbook"),
    ("data", "empty.xlsx", xlsx_bytes({"Sheet1": []}), "workbook_empty"),
    ("data", "long.xlsx", xlsx_bytes({"counts": [["age"]] + [[n] for n in range(12)]}), "sheet_too_long"),
]


@pytest.mark.parametrize("lang", ["en", "zh-CN"])
def test_a_pdf_or_workbook_that_cannot_be_read_is_refused_and_changes_nothing(
    client: TestClient, home: Path, lang: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("consulta.apps.modeling._inputs.MAX_ROWS", 10)
    hank = new_session(client)
    upload(client, hank, "statement", "2024_MCM_A.pdf", pdf_bytes(ELEPHANTS))
    upload(client, hank, "data", "herd.xlsx", xlsx_bytes(HERD))
    before = view(client, hank)
    assert before["ready"]
    for kind, name, data, code in CONTEST_BAD:
        response = upload(client, hank, kind, name, data, lang)
        assert response.status_code == 422 and response.json()["error_code"] == code, (name, response.text)
        assert_one_line(response.json()["message"], lang)
        assert name in response.json()["message"]
        assert view(client, hank) == before, name
    assert [p.name for p in _session_folder(home).iterdir() if p.name.endswith(".part")] == []


def test_the_tasks_need_a_statement_first_and_the_upload_can_be_forgotten(client: TestClient) -> None:
    erin = new_session(client)
    response = client.put(
        "/api/modeling/problem/tasks", json={"tasks": [{"text": "x", "asks": "number"}]}, headers=erin
    )
    assert response.status_code == 409 and response.json()["error_code"] == "no_statement"
    upload(client, erin, "statement", "problem.md", STATEMENT)
    upload(client, erin, "data", "demand_monthly.csv", DATA)
    body = client.delete("/api/modeling/problem/data/demand_monthly.csv", headers=erin).json()
    assert body["data_files"] == [] and not body["ready"]
    assert client.delete("/api/modeling/problem", headers=erin).json()["source"] is None


def test_the_servers_problem_is_shown_until_the_session_uploads_its_own(home: Path, tmp_path: Path) -> None:
    problem = shutil.copytree(SAMPLE, tmp_path / "electricity")
    settings = settings_for(home, home / "script.yaml")
    with TestClient(create_app(app=get_app("modeling"), settings=settings, options={"problem": str(problem)})) as c:
        frank = new_session(c)
        body = view(c, frank)
        assert body["source"] == "server" and body["ready"] and len(body["tasks"]) == 4
        assert body["title"] == "某省月度用电需求预测" and {f["name"] for f in body["data_files"]} == {
            "demand_monthly.csv",
            "economy_yearly.csv",
        }
        statement = b"# Bees\n\nTask 1: Estimate the number of hives a field needs.\n"
        body = upload(c, frank, "statement", "bees.md", statement).json()
        assert body["source"] == "upload" and body["tasks"][0]["asks"] == "estimate"
        assert view(c, new_session(c))["source"] == "server"  # another session still sees the server's


def test_the_servers_problem_may_be_a_pdf_and_a_workbook(home: Path, tmp_path: Path) -> None:
    problem = tmp_path / "elephants"
    problem.mkdir()
    (problem / "statement.pdf").write_bytes(pdf_bytes(ELEPHANTS))
    (problem / "data.xlsx").write_bytes(xlsx_bytes(HERD))
    settings = settings_for(home, home / "script.yaml")
    with TestClient(create_app(app=get_app("modeling"), settings=settings, options={"problem": str(problem)})) as c:
        body = view(c, new_session(c))
    assert body["source"] == "server" and body["ready"] and len(body["tasks"]) == 3
    assert [(f["name"], f["tables"]) for f in body["data_files"]] == [
        ("data.xlsx", ["data.Female_counts.csv", "data.Males.csv"])
    ]


def test_a_problem_folders_own_tasks_json_is_not_taken_for_the_pages_record(tmp_path: Path) -> None:
    """`--problem` folders as before: a tasks.json of their own (not the page's record, or for another statement) is
    left alone; the page's record whose tasks do not read is refused with the problem's one line."""
    from consulta.apps.modeling import ProblemError
    from consulta.apps.modeling._problem import statement_digest

    problem = shutil.copytree(SAMPLE, tmp_path / "electricity")
    for foreign in ("[1, 2, 3]", '{"tasks": ["a"]}', "not json", '{"statement_sha256": "0", "tasks": []}'):
        (problem / "tasks.json").write_text(foreign, encoding="utf-8")
        assert load_problem(problem).tasks is None, foreign
    digest = statement_digest(STATEMENT.decode("utf-8"))
    (problem / "tasks.json").write_text(json.dumps({"statement_sha256": digest, "tasks": [{"n": 1}]}), encoding="utf-8")
    with pytest.raises(ProblemError) as refused:
        load_problem(problem)
    assert refused.value.reason == "bad_tasks" and "\n" not in refused.value.localized("zh-CN")
