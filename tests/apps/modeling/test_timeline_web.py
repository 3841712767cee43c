"""The modeling app's web routes (a real web app and store, scripted model) over a workspace made by the real parts
(the sample problem, a script run in the sandbox, gates decided by code and written as records, the paper rendered
by Typst): the timeline of a run, its files served inert and confined, other sessions' runs not seen."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from pydantic import Field

from consulta.apps import AppDef, AppEnv, AppOptions
from consulta.apps.modeling._gates import GATES, Verdict, code_checks, code_verdict, write_validation_record
from consulta.apps.modeling._paper import render_pdf
from consulta.apps.modeling._sandbox_run import run_script
from consulta.apps.modeling._web import web_part
from consulta.frontends.web import create_app
from consulta.runtime import Agent
from frontends.web.conftest import new_session, run_status, settings_for

SAMPLE = Path(__file__).parents[3] / "src/consulta/apps/modeling/data/samples/electricity_demand"
WORKSPACE = "electricity-demand-0123456789"
FIT = """
import pandas as pd
import matplotlib.pyplot as plt
frame = pd.read_csv("data/demand_monthly.csv")
frame["year"] = frame["month"].str[:4].astype(int)
yearly = frame.groupby("year", as_index=False)["total_gwh"].sum().round(1)
yearly.to_csv("results/yearly_total.csv", index=False)
growth = (yearly.total_gwh.iloc[-1] / yearly.total_gwh.iloc[0]) ** (1 / (len(yearly) - 1)) - 1
pd.DataFrame({"metric": ["cagr"], "value": [round(growth, 4)]}).to_csv("results/metrics.csv", index=False)
fig, ax = plt.subplots(figsize=(6, 3))
ax.plot(yearly.year, yearly.total_gwh, marker="o")
ax.set_title("年用电量 (GWh)")
fig.tight_layout()
fig.savefig("figures/yearly_total.png", dpi=90)
"""
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


def build_workspace(root: Path) -> Path:
    """A run's workspace as the team leaves it after the paper: problem, cleaned data (first with a duplicated month,
    rejected by code, then fixed), a consultation record, a script run, results, a figure, verdicts, the paper PDF."""
    shutil.copytree(SAMPLE, root / "problem")
    (root / "data").mkdir()
    monthly = (SAMPLE / "demand_monthly.csv").read_text(encoding="utf-8")
    (root / "data" / "demand_monthly.csv").write_text(monthly + monthly.splitlines()[5] + "\n", encoding="utf-8")
    rejected = code_verdict("data_ready", root, attempt=1)
    assert rejected is not None
    write_validation_record(root, rejected.model_copy(update={"decided_at": "2026-11-23T10:00:01+00:00"}))
    shutil.copyfile(SAMPLE / "demand_monthly.csv", root / "data" / "demand_monthly.csv")
    assert code_verdict("data_ready", root, attempt=2) is None
    write_validation_record(
        root,
        Verdict(
            gate="data_ready",
            status="APPROVED",
            attempt=2,
            reasons=["No NaN, duplicate or gap; totals agree."],
            decided_by="validator",
            decided_at="2026-11-23T10:00:03+00:00",
        ),
    )
    (root / "consultation").mkdir()
    (root / "consultation" / "modeler_data_engineer_1.md").write_text(CONSULTATION, encoding="utf-8")
    (root / "code").mkdir()
    (root / "code" / "fit.py").write_text(FIT, encoding="utf-8")
    ran = run_script(root, Path("code/fit.py"))
    assert ran.ok, ran
    record = (
        root / "code" / "fit.run.json"
    )  # stamped as run on the fixture's day (cards sort by time, not by today's date)
    record.write_text(
        ran.model_copy(update={"finished_at": "2026-11-23T10:00:06+00:00"}).model_dump_json(indent=2), encoding="utf-8"
    )
    write_validation_record(
        root,
        Verdict(
            gate="code_runs",
            status="CONDITIONAL",
            attempt=1,
            reasons=["Runs; add a holdout check."],
            decided_at="2026-11-23T23:59:00+00:00",
        ),
    )
    cagr = (root / "results" / "metrics.csv").read_text(encoding="utf-8").splitlines()[1].split(",")[1]
    (root / "paper").mkdir()
    (root / "paper" / "paper.md").write_text(
        f"# 某省用电需求\n\n## 结果\n\n年用电量的年均增长率为 {float(cagr) * 100:.2f}%。\n\n![年用电量](../figures/yearly_total.png)\n",
        encoding="utf-8",
    )
    render_pdf(root)
    (root / "state").mkdir()
    (root / "state" / "memo.json").write_text("{}", encoding="utf-8")
    (root / "results" / ".hidden.csv").write_text("a\n1\n", encoding="utf-8")
    return root


class _Options(AppOptions):
    problem: Path | None = Field(None, description="The problem")


def _data_path(options: Any, env: AppEnv) -> Path | None:
    return env.data_dir / "runs" / WORKSPACE if options.problem is not None else None


def _director(options: Any, env: AppEnv) -> Agent:
    return Agent(
        app="modeling",
        name="director",
        instructions="[director] test",
        tools=(),
        options=options.model_dump(mode="json"),
    )


TEST_APP = AppDef(
    name="modeling",
    description="the modeling app's web part over a fixture workspace",
    agents={"director": _director},
    main_agent="director",
    options=_Options,
    data_path=_data_path,
    web=web_part,
)


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_workspace(tmp_path_factory.mktemp("made") / WORKSPACE)


@pytest.fixture
def home(tmp_path: Path, made: Path) -> Path:
    shutil.copytree(made, tmp_path / "made")
    (tmp_path / "script.yaml").write_text("- text: The team has started.\n", encoding="utf-8")
    return tmp_path


@pytest.fixture
def client(home: Path) -> Iterator[TestClient]:
    with TestClient(
        create_app(app=TEST_APP, settings=settings_for(home, home / "script.yaml"), options={"problem": str(SAMPLE)})
    ) as test_client:
        yield test_client


def run_folder(home: Path, run_id: str) -> Path:
    """Where the run `run_id` (the first of its conversation) has its workspace: one folder per run."""
    return home / "apps" / "modeling" / "runs" / WORKSPACE / run_id


def start_run(client: TestClient, headers: dict[str, str], home: Path | None = None) -> str:
    """A finished run of the session; with `home`, its workspace is the made one (as the team would leave it)."""
    response = client.post("/api/runs", json={"prompt": "Solve the problem."}, headers=headers)
    assert response.status_code in (200, 201, 202), response.text
    run_id = response.json()["id"]
    run_status(client, headers, run_id, "finished")
    if home is not None:
        shutil.copytree(home / "made", run_folder(home, run_id))
    return run_id


def test_the_timeline_of_a_run(client: TestClient, home: Path) -> None:
    alice = new_session(client)
    assert client.get("/api/modeling/timeline", headers=alice).json() is None  # no run yet
    run_id = start_run(client, alice, home)
    body = client.get("/api/modeling/timeline", headers=alice).json()
    assert body == client.get("/api/modeling/timeline", params={"run_id": run_id}, headers=alice).json()
    assert (
        body["run_id"] == run_id and body["run_status"] == "finished" and body["workspace"] == f"{WORKSPACE}/{run_id}"
    )
    assert [(p["gate"], p["state"], p["attempts"]) for p in body["phases"]] == [
        ("data_ready", "approved", 2),
        ("code_runs", "conditional", 1),
        ("results_trained", "current", 0),
        ("paper_written", "pending", 0),
    ]
    kinds = [(c["kind"], c.get("gate") or c.get("to_agent") or c.get("script")) for c in body["cards"]]
    assert kinds == [
        ("verdict", "data_ready"),
        ("verdict", "data_ready"),
        ("consultation", "data_engineer"),
        ("script", "code/fit.py"),
        ("verdict", "code_runs"),
    ]
    rejected, approved, consultation, script, _ = body["cards"]
    assert (
        rejected["status"] == "REJECTED"
        and rejected["decided_by"] == "code"
        and rejected["reasons"][0].startswith("[duplicate_rows]")
    )
    assert approved["file"] == "validation/data_ready_2.md"
    assert (
        consultation["from_agent"] == "modeler"
        and consultation["index"] == 1
        and consultation["question"] == "数据是否支持把制冷度日数作为特征？"
    )
    assert consultation["reply"].startswith("FROM @data_engineer:") and consultation["outcome"].startswith("modeler 把")
    assert script["ok"] and script["outputs"] == [
        "figures/yearly_total.png",
        "results/metrics.csv",
        "results/yearly_total.csv",
    ]
    files = [f["path"] for f in body["files"]]
    assert (
        "paper/paper.pdf" in files
        and "code/fit.run.json" in files
        and "consultation/modeler_data_engineer_1.md" in files
    )
    assert not any(f.startswith("state/") or "/." in f for f in files)
    assert body["paper_pdf"] == "paper/paper.pdf"


def test_files_are_served_inert_and_confined_to_the_workspace(client: TestClient, home: Path) -> None:
    alice = new_session(client)
    run_id = start_run(client, alice, home)
    pdf = client.get("/api/modeling/files/paper/paper.pdf", params={"run_id": run_id}, headers=alice)
    assert (
        pdf.status_code == 200 and pdf.headers["content-type"] == "application/pdf" and pdf.content.startswith(b"%PDF")
    )
    assert "sandbox" in pdf.headers["content-security-policy"] and pdf.headers["x-content-type-options"] == "nosniff"
    record = client.get("/api/modeling/files/consultation/modeler_data_engineer_1.md", headers=alice)
    assert (
        record.status_code == 200
        and record.text == CONSULTATION
        and record.headers["content-type"].startswith("text/markdown")
    )
    (home / "secret.md").write_text("secret", encoding="utf-8")
    for path in [
        "state/memo.json",
        "results/.hidden.csv",
        "..%2F..%2F..%2Fsecret.md",
        "paper/../../../../secret.md",
        "paper",
        "nope/x.md",
        "%2Fetc%2Fpasswd",
        "paper/paper.typ%00.pdf",
    ]:
        response = client.get(f"/api/modeling/files/{path}", headers=alice)
        assert response.status_code == 404, (path, response.status_code, response.text[:200])
        assert response.json()["error_code"] == "not_found"


def test_another_sessions_run_is_not_seen(client: TestClient, home: Path) -> None:
    alice, bob = new_session(client), new_session(client)
    run_id = start_run(client, alice, home)
    assert client.get("/api/modeling/timeline", headers=bob).json() is None
    for url in ("/api/modeling/timeline", "/api/modeling/files/paper/paper.pdf"):
        response = client.get(url, params={"run_id": run_id}, headers=bob)
        assert response.status_code == 404 and response.json()["error_code"] == "not_found"
    assert client.get("/api/modeling/timeline").status_code == 401  # no session at all


def test_a_run_without_a_problem_has_no_workspace(home: Path) -> None:
    with TestClient(create_app(app=TEST_APP, settings=settings_for(home, home / "script.yaml"))) as client:
        alice = new_session(client)
        start_run(client, alice)
        response = client.get("/api/modeling/timeline", headers=alice)
        assert response.status_code == 404 and response.json()["error_code"] == "no_workspace"


def test_the_page_carries_the_panels_and_its_words_in_both_languages(client: TestClient) -> None:
    page = client.get("/").text
    assert 'id="modeling-timeline"' in page and "/apps/modeling/static/app.js" in page
    for lang in ("en", "zh-CN"):
        messages = client.get(f"/api/i18n/{lang}").json()["messages"]
        for status in ("running", "waiting", "finished", "failed", "cancelled"):
            assert f"modeling.web.run.{status}" in messages
        for gate in ("data_ready", "code_runs", "results_trained", "paper_written"):
            assert f"modeling.web.gate.{gate}" in messages
    assert client.get("/apps/modeling/static/app.js").status_code == 200


def test_the_made_workspace_passes_every_gate_and_a_wrong_number_does_not(made: Path, tmp_path: Path) -> None:
    workspace = shutil.copytree(made, tmp_path / WORKSPACE)
    assert {gate: code_checks(gate, workspace) for gate in GATES} == dict.fromkeys(GATES, [])
    paper = workspace / "paper" / "paper.md"
    paper.write_text(paper.read_text(encoding="utf-8").replace("年均增长率为 ", "年均增长率为 1"), encoding="utf-8")
    render_pdf(workspace)
    failures = code_checks("paper_written", workspace)
    assert [f.check for f in failures] == ["paper_numbers"] and "line 5" in failures[0].evidence


def test_only_the_runs_own_files_are_served_no_link_out(client: TestClient, home: Path) -> None:
    alice = new_session(client)
    run_id = start_run(client, alice, home)
    workspace = run_folder(home, run_id)
    secret = home / "secret.csv"
    secret.write_text("password,hunter2\n", encoding="utf-8")
    (workspace / "results" / "leak.csv").symlink_to("/etc/shadow")
    (workspace / "results" / "secret.csv").symlink_to(secret)
    os.link(secret, workspace / "results" / "hard.csv")  # a hard link: the same file under a workspace name
    (workspace / "figures" / "state.json").symlink_to(workspace / "state" / "memo.json")
    outside = home / "outside"
    outside.mkdir()
    (outside / "x.csv").write_text("outside\n", encoding="utf-8")
    (workspace / "data" / "linked").symlink_to(outside, target_is_directory=True)
    for path in [
        "results/leak.csv",
        "results/secret.csv",
        "results/hard.csv",
        "figures/state.json",
        "data/linked/x.csv",
    ]:
        response = client.get(f"/api/modeling/files/{path}", params={"run_id": run_id}, headers=alice)
        assert response.status_code == 404 and response.json()["error_code"] == "not_found", (path, response.text)
    listed = {f["path"] for f in client.get("/api/modeling/timeline", headers=alice).json()["files"]}
    assert not {"results/leak.csv", "results/secret.csv", "results/hard.csv", "data/linked/x.csv"} & listed
    assert "results/metrics.csv" in listed  # the run's own files are still served
    ok = client.get("/api/modeling/files/results/metrics.csv", params={"run_id": run_id}, headers=alice)
    assert ok.status_code == 200


def test_two_runs_on_one_problem_never_share_a_workspace(client: TestClient, home: Path) -> None:
    alice, bob = new_session(client), new_session(client)
    alices = start_run(client, alice, home)
    bobs = start_run(client, bob)  # bob's run has a workspace of its own, with only what it made
    bob_workspace = run_folder(home, bobs)
    (bob_workspace / "results").mkdir(parents=True)
    (bob_workspace / "results" / "mine.csv").write_text("bob\n", encoding="utf-8")
    timeline = client.get("/api/modeling/timeline", headers=bob).json()
    assert timeline["run_id"] == bobs and [f["path"] for f in timeline["files"]] == ["results/mine.csv"]
    assert timeline["paper_pdf"] is None  # alice's paper is not bob's
    for path in ("paper/paper.pdf", "results/metrics.csv"):
        own = client.get(f"/api/modeling/files/{path}", params={"run_id": bobs}, headers=bob)
        other = client.get(f"/api/modeling/files/{path}", params={"run_id": alices}, headers=bob)
        assert own.status_code == other.status_code == 404, path
        assert client.get(f"/api/modeling/files/{path}", params={"run_id": alices}, headers=alice).status_code == 200
    assert (
        client.get("/api/modeling/files/results/mine.csv", params={"run_id": alices}, headers=alice).status_code == 404
    )
