"""The team run by the Director with the scripted model double: consultations in the seed's formats and on record,
the Director's refusals, the gates with their reworks and escalation, and the whole flow to a PDF."""

from __future__ import annotations

import asyncio
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest

from consulta.apps.modeling import Director, Escalation, Refusal, TeamConfig, parse_reply, parse_request, request_text
from consulta.apps.modeling._consult import ConsultationRequest
from consulta.apps.modeling._gates import validation_records
from consulta.apps.modeling._web import consultation_card

from .team_script import SAMPLES, scripted, workspace

SEED_TABLE = [
    ("reader", "advisor"), ("researcher", "reader"), ("modeler", "researcher"), ("modeler", "data_engineer"),
    ("data_engineer", "modeler"), ("code_translator", "modeler"), ("model_trainer", "code_translator"),
    ("validator", "writer"), ("writer", "visualizer"), ("writer", "modeler"),
]  # fmt: skip
"""The seed's table of typical consultations (§4); the validator may consult anyone (here: the writer)."""


def director(ws: Path, problem, model, **kwargs) -> Director:  # noqa: ANN001
    return Director(workspace=ws, problem=problem, model=model, **kwargs)


def run(coro):  # noqa: ANN001, ANN201
    return asyncio.run(coro)


@pytest.mark.parametrize(("asker", "colleague"), SEED_TABLE)
def test_a_consultation_in_each_direction_of_the_seeds_table(tmp_path: Path, asker: str, colleague: str) -> None:
    ws, problem = workspace(tmp_path)
    team = director(ws, problem, scripted(consults={asker: colleague}))
    answer = run(team.turn(asker, "work", step=asker, task="做本阶段的工作。", prompt="题目"))
    assert answer.used_reply == f"{asker} 采纳了回复。"  # the asker went on with the reply
    record = ws / "consultation" / f"{asker}_{colleague}_1.md"
    text = record.read_text(encoding="utf-8")
    assert text.startswith(
        f"# 咨询记录: {asker} → {colleague} #1\n\n| 字段 | 值 |\n|------|------|\n| 发起方 | {asker} |\n| 接收方 | {colleague} |\n| 时间 | "
    )
    for section in ("## 问题", "## 背景", "## 回复", "## 结果"):
        assert section in text
    reply = parse_reply(text.split("## 回复", 1)[1])
    assert (
        reply is not None
        and reply.agent == colleague
        and reply.answer == f"{colleague} 的回答：可以这样做。"
        and reply.note == "注意数据的单位。"
    )
    assert text.rstrip().endswith(f"{asker} 收到回复后继续工作。使用方式：{asker} 采纳了回复。")
    card = consultation_card(record, ws)  # the web page's timeline reads it
    assert card is not None and (card.from_agent, card.to_agent, card.index) == (asker, colleague, 1)
    assert (
        card.question == f"{asker} 想确认：这样理解对吗？"
        and card.outcome == f"{asker} 收到回复后继续工作。使用方式：{asker} 采纳了回复。"
    )


def test_the_request_and_reply_texts_are_the_seeds() -> None:
    request = ConsultationRequest(
        from_agent="modeler",
        to_agent="researcher",
        question="有哪些时序预测方法？",
        background="选方法",
        understanding="ARIMA",
    )
    text = request_text(request)
    assert (
        text
        == "Director，我需要咨询 @researcher：\n\n**问题**：有哪些时序预测方法？\n**背景**：选方法\n**我的理解**：ARIMA"
    )
    assert parse_request(text, from_agent="modeler") == request
    assert parse_reply("FROM @researcher:\n\n**回答**：指数平滑\n**补充说明**：看季节性").note == "看季节性"
    assert parse_request("随便说说", from_agent="x") is None and parse_reply("FROM @x:\n\n没有回答") is None


def test_numbering_is_per_pair_and_the_records_are_written_once(tmp_path: Path) -> None:
    ws, problem = workspace(tmp_path)
    team = director(ws, problem, scripted(consults={"modeler": "researcher"}), config=TeamConfig(budget=5))
    run(team.turn("modeler", "work", step="modeler#1", phase="analysis", task="t", prompt="p"))
    run(
        team.turn("modeler", "work", step="modeler#2", phase="analysis", task="t", prompt="p")
    )  # the same question again: refused
    run(team.turn("modeler", "work", step="modeler#3", phase="code", task="t", prompt="p"))
    assert sorted(p.name for p in (ws / "consultation").glob("*.md")) == [
        "modeler_researcher_1.md",
        "modeler_researcher_2.md",
    ]
    assert [c["code"] for c in team.memo["consults"].values() if c["status"] == "refused"] == ["repeated"]
    before = {p.name: p.read_bytes() for p in (ws / "consultation").glob("*.md")}
    again = director(
        ws, problem, scripted(consults={"modeler": "researcher"}), config=TeamConfig(budget=5), steps=team.steps
    )  # a resumed run (the steps it replays: test_resume.py has them on a store)
    run(again.turn("modeler", "work", step="modeler#1", phase="analysis", task="t", prompt="p"))
    assert {p.name: p.read_bytes() for p in (ws / "consultation").glob("*.md")} == before


def test_nesting_to_depth_two_and_depth_three_refused(tmp_path: Path) -> None:
    ws, problem = workspace(tmp_path)
    model = scripted(consults={"modeler": "researcher"}, answers_consult={"researcher": "reader", "reader": "advisor"})
    team = director(ws, problem, model)
    run(team.turn("modeler", "work", step="modeler", task="t", prompt="p"))
    names = sorted(p.name for p in (ws / "consultation").glob("*.md"))
    assert names == ["modeler_researcher_1.md", "researcher_reader_1.md"]  # depth 1 and 2; reader → advisor was depth 3
    (refused,) = [c for c in team.memo["consults"].values() if c["status"] == "refused"]
    assert (refused["from"], refused["to"], refused["code"]) == ("reader", "advisor", "too_deep")
    nested = (ws / "consultation" / "researcher_reader_1.md").read_text(encoding="utf-8")
    assert "**回答**：可以，按你的理解做。" in nested  # reader, refused, answered with what it had
    assert nested.rstrip().endswith("researcher 收到回复后继续工作。使用方式：researcher 参考了同伴的回复。")


def test_a_cycle_is_refused(tmp_path: Path) -> None:
    ws, problem = workspace(tmp_path)
    team = director(
        ws, problem, scripted(consults={"modeler": "researcher"}, answers_consult={"researcher": "modeler"})
    )
    run(team.turn("modeler", "work", step="modeler", task="t", prompt="p"))
    (refused,) = [c for c in team.memo["consults"].values() if c["status"] == "refused"]
    assert refused["code"] == "cycle" and "modeler → researcher → modeler" in refused["reason"]
    assert sorted(p.name for p in (ws / "consultation").glob("*.md")) == ["modeler_researcher_1.md"]


def test_the_budget_per_agent_and_phase_ends_ping_pong(tmp_path: Path) -> None:
    ws, problem = workspace(tmp_path)
    team = director(ws, problem, scripted(consults={"modeler": "researcher"}), config=TeamConfig(budget=1))
    run(team.turn("modeler", "work", step="modeler#1", phase="analysis", task="t", prompt="p"))
    run(team.turn("modeler", "work", step="modeler#2", phase="analysis", task="t", prompt="p"))
    assert [p.name for p in (ws / "consultation").glob("*.md")] == ["modeler_researcher_1.md"]
    (refused,) = [c for c in team.memo["consults"].values() if c["status"] == "refused"]
    assert refused["code"] == "budget_exhausted" and "analysis" in refused["reason"]
    run(
        team.turn("modeler", "work", step="modeler#3", phase="code", task="t", prompt="p")
    )  # another phase: a new budget
    assert (ws / "consultation" / "modeler_researcher_2.md").is_file()


@pytest.mark.parametrize(
    ("request_", "code"),
    [
        ({"to_agent": "statistician", "question": "q"}, "unknown_agent"),
        ({"to_agent": "modeler", "question": "q"}, "self_consultation"),
        ({"to_agent": "researcher", "question": "  "}, "empty_question"),
    ],
)
def test_the_director_refuses_an_unreasonable_consultation_with_the_reason_on_record(
    tmp_path: Path, request_: dict, code: str
) -> None:
    ws, problem = workspace(tmp_path)
    model = scripted(
        work={"modeler": {"consult_agent": request_["to_agent"], "consult_question": request_["question"]}}
    )
    from consulta.runtime import Store

    store = Store(f"sqlite:///{tmp_path}/consulta.db")
    team = director(ws, problem, model, store=store)
    run(team.turn("modeler", "work", step="modeler", task="t", prompt="p"))
    refused = [c for c in team.memo["consults"].values() if c["status"] == "refused"]
    assert refused and {c["code"] for c in refused} == {code}
    ledger = store.list_consultations()  # its answer after the refusal asked again: refused again, up to 3 in a row
    assert len(ledger) == len(refused) == 3
    assert all(
        c.status == "refused" and c.error.startswith(code) and c.expert_id == request_["to_agent"] for c in ledger
    )
    assert list((ws / "consultation").glob("*.md")) == []
    direct = team.refusal(ConsultationRequest(from_agent="modeler", **request_), phase="analysis", depth=1, waiting=())
    assert isinstance(direct, Refusal) and direct.code == code and direct.reason
    store.close()


def _broken_problem(tmp_path: Path) -> Path:
    """The electricity problem with data code can prove wrong: a month missing and a total that is not its parts'."""
    folder = tmp_path / "broken"
    shutil.copytree(SAMPLES / "electricity_demand", folder)
    frame = pd.read_csv(folder / "demand_monthly.csv")
    frame.loc[10, "total_gwh"] += 500
    frame.drop(index=30).to_csv(folder / "demand_monthly.csv", index=False)
    return folder


@pytest.mark.slow
@pytest.mark.sandbox  # a whole flow of the team: still run in CI (scripts/test runs slow or not slow)
def test_a_gate_rejects_wrong_data_before_any_model_is_trained_and_escalates_after_three(tmp_path: Path) -> None:
    ws, problem = workspace(tmp_path, problem=_broken_problem(tmp_path))
    team = director(ws, problem, scripted())
    with pytest.raises(Escalation) as raised:
        run(team.run())
    assert raised.value.verdict.gate == "data_ready" and raised.value.verdict.attempt == 3
    verdicts = [v for _, v in validation_records(ws)]
    assert [(v.gate, v.attempt, v.status, v.decided_by) for v in verdicts] == [
        ("data_ready", n, "REJECTED", "code") for n in (1, 2, 3)
    ]
    reasons = " ".join(verdicts[0].reasons)
    assert "[sequence_gaps]" in reasons and "2017-07" in reasons and "[totals_disagree]" in reasons
    assert [p.name for p in (ws / "results").glob("*")] == ["cleaning.csv"] and not (
        ws / "code" / "train.py"
    ).exists()  # nothing trained
    # the person decides: try again — three more attempts, then the person is asked again
    with pytest.raises(Escalation) as again:
        run(director(ws, problem, scripted(), decision="retry").run())
    assert again.value.verdict.attempt == 6 and [v.attempt for _, v in validation_records(ws)] == [1, 2, 3, 4, 5, 6]
    # then: stop
    from consulta.apps.modeling import Stopped

    stopping = director(ws, problem, scripted(), decision="stop")
    with pytest.raises(Stopped):
        run(stopping.run())
    assert [v.attempt for _, v in validation_records(ws)] == [1, 2, 3, 4, 5, 6]  # no record written twice
    # the person's decisions, as the Director outside a run knows them (its own steps; a run's are on the store)
    assert list(stopping.memo["decisions"].values()) == ["stop"]


@pytest.mark.slow
@pytest.mark.sandbox  # > 20 s: three rounds of sandboxed scripts
def test_the_validator_rejects_and_the_work_goes_back_with_the_reasons(tmp_path: Path) -> None:
    ws, problem = workspace(tmp_path)
    model = scripted(
        work={
            "validator": {"status": "REJECTED", "reasons": ["data/demand_monthly.csv 的清洗说明不够具体，请写清楚。"]}
        }
    )
    team = director(ws, problem, model)
    with pytest.raises(Escalation):
        run(team.run())
    verdicts = [v for _, v in validation_records(ws)]
    assert [(v.gate, v.status, v.decided_by) for v in verdicts] == [("data_ready", "REJECTED", "validator")] * 3
    prompts = [k for k in team.memo["answers"] if k.startswith("data_engineer#")]
    assert sorted(prompts) == [
        "data_engineer#1|data_engineer|work|1",
        "data_engineer#2|data_engineer|work|1",
        "data_engineer#3|data_engineer|work|1",
    ]
    # accepted by the person: the run goes on from the records
    team = director(
        ws,
        problem,
        scripted(
            work={
                "validator": {
                    "status": "REJECTED",
                    "reasons": ["data/demand_monthly.csv 的清洗说明不够具体，请写清楚。"],
                }
            }
        ),
        decision="accept",
    )
    with pytest.raises(Escalation) as raised:  # the validator rejects every gate: the next one escalates too
        run(team.run())
    assert raised.value.verdict.gate == "code_runs"


@pytest.mark.slow
@pytest.mark.sandbox  # a whole flow of the team: still run in CI (scripts/test runs slow or not slow)
def test_a_paper_number_that_disagrees_with_its_csv_is_rejected(tmp_path: Path) -> None:
    ws, problem = workspace(tmp_path)
    pdf = run(director(ws, problem, scripted()).run())
    assert pdf.is_file()
    from consulta.apps.modeling._gates import code_verdict

    assert code_verdict("paper_written", ws, attempt=9) is None
    metrics = pd.read_csv(ws / "results" / "metrics.csv")
    mape = metrics.loc[metrics["metric"] == "mape_holdout_pct", "value"].iloc[0]
    paper = ws / "paper" / "paper.md"
    paper.write_text(paper.read_text(encoding="utf-8") + f"\n检验期 MAPE 为 {mape + 1.37:.2f}%。\n", encoding="utf-8")
    verdict = code_verdict("paper_written", ws, attempt=9)
    assert (
        verdict is not None
        and verdict.status == "REJECTED"
        and any("[paper_numbers]" in r and f"{mape + 1.37:.2f}" in r for r in verdict.reasons)
    )


@pytest.mark.slow
@pytest.mark.sandbox  # > 20 s: three rounds of sandboxed scripts
def test_an_invented_number_never_reaches_the_paper(tmp_path: Path) -> None:
    """A sentence of the team stating a number no result file, the problem or the data holds is dropped when the
    paper is composed (it used to reach the paper gate and cost a rework); the gate then approves the paper."""
    ws, problem = workspace(tmp_path)
    from .team_script import WORK

    reader = {
        **WORK["reader"],
        "summary": "模型的检验误差只有 0.123%，非常准确。",
    }  # the reader's words are printed as written
    writer = {
        **_writer(),
        "abstract": "本文建立回归模型。检验误差只有 0.456%。",
    }  # the writer's sentence with a digit never is
    run(director(ws, problem, scripted(work={"reader": reader, "writer": writer})).run())
    verdicts = [(v.gate, v.attempt, v.status) for _, v in validation_records(ws) if v.gate == "paper_written"]
    assert verdicts == [("paper_written", 1, "APPROVED")]
    paper = (ws / "paper" / "paper.md").read_text(encoding="utf-8")
    assert "0.123" not in paper and "0.456" not in paper and "本文建立回归模型。" in paper


def _writer() -> dict:
    from .team_script import WORK

    return WORK["writer"]


@pytest.mark.sandbox
@pytest.mark.subprocess  # the whole flow: the team's scripts each in a sandboxed child process (Python, pandas, plots)
def test_the_whole_flow_to_a_pdf_with_consultations_on_record(tmp_path: Path) -> None:
    ws, problem = workspace(tmp_path)
    consults = {"reader": "advisor", "modeler": "researcher", "writer": "visualizer", "validator": "writer"}
    team = director(ws, problem, scripted(consults=consults))
    pdf = run(team.run())
    assert pdf == ws / "paper" / "paper.pdf" and pdf.read_bytes().startswith(b"%PDF")
    verdicts = [(v.gate, v.status) for _, v in validation_records(ws)]
    assert verdicts == [
        ("data_ready", "APPROVED"),
        ("code_runs", "APPROVED"),
        ("results_trained", "APPROVED"),
        ("paper_written", "APPROVED"),
    ]
    names = sorted(p.name for p in (ws / "consultation").glob("*.md"))
    assert names == ["modeler_researcher_1.md", "reader_advisor_1.md", "validator_writer_1.md", "validator_writer_2.md",
                     "validator_writer_3.md", "validator_writer_4.md", "writer_visualizer_1.md"]  # fmt: skip
    paper = (ws / "paper" / "paper.md").read_text(encoding="utf-8")
    forecast = pd.read_csv(ws / "results" / "forecast.csv", dtype=str)
    assert forecast["forecast"].iloc[0] in paper  # numbers copied from the result files
    assert "![" in paper and "../figures/forecast.png" in paper and (ws / "figures" / "forecast.png").is_file()
    assert "template (forecast)" in (ws / "code" / "PROVENANCE.md").read_text(encoding="utf-8")
    counts = team.counts()
    assert counts["consultations"] == 7 and counts["refused"] == 0 and counts["reworks"] == 0
    assert re.search(r"\| mape_holdout_pct \| [\d.]+ \|", paper)


@pytest.mark.slow
@pytest.mark.sandbox  # a whole flow of the team: still run in CI (scripts/test runs slow or not slow)
def test_the_benchmark_json_problem_runs_an_epidemic_model(tmp_path: Path) -> None:
    ws, problem = workspace(tmp_path, "influenza_outbreak")
    model = scripted(
        work={
            "modeler": {
                "assumptions": ["人口封闭"],
                "model_description": "SIR 模型。",
                "target": "new_cases",
                "population": 1200000,
                "reporting_rate": 0.35,
            }
        }
    )
    run(director(ws, problem, model).run())
    verdicts = [(v.gate, v.status) for _, v in validation_records(ws)]
    assert all(status == "APPROVED" for _, status in verdicts) and len(verdicts) == 4
    params = pd.read_csv(ws / "results" / "parameters.csv").set_index("parameter")["value"]
    assert 1.0 < params["R0"] < 4.0
    assert len(pd.read_csv(ws / "data" / "daily_reports.csv")) == 70  # the duplicated report dropped


def test_a_validator_rejection_without_evidence_is_asked_again_then_conditional(tmp_path: Path) -> None:
    ws, problem = workspace(tmp_path)
    for csv in (ws / "problem").glob("*.csv"):
        shutil.copyfile(csv, ws / "data" / csv.name)
    unfounded = scripted(work={"validator": {"status": "REJECTED", "reasons": ["感觉不太好。"]}})
    verdict = run(director(ws, problem, unfounded).gate("data_ready", "data", 1))
    assert verdict.status == "CONDITIONAL" and verdict.decided_by == "validator" and "无法使用" in verdict.reasons[0]
    founded = scripted(
        work={"validator": {"status": "REJECTED", "reasons": ["data/demand_monthly.csv 缺少单位说明。"]}}
    )
    verdict = run(director(ws, problem, founded).gate("data_ready", "data", 2))
    assert verdict.status == "REJECTED" and verdict.reasons == ["data/demand_monthly.csv 缺少单位说明。"]


@pytest.mark.parametrize("name", ["Director", "@director"])
def test_an_agent_may_ask_the_director_itself_which_answers_from_its_records(tmp_path: Path, name: str) -> None:
    ws, problem = workspace(tmp_path)
    model = scripted(work={"model_trainer": {"consult_agent": name, "consult_question": "用哪个数据文件？"}})
    team = director(ws, problem, model)
    run(team.turn("model_trainer", "work", step="model_trainer#1", task="t", prompt="p"))
    (record,) = (ws / "consultation").glob("*.md")
    assert record.name == "model_trainer_director_1.md"
    text = record.read_text(encoding="utf-8")
    reply = parse_reply(text.split("## 回复", 1)[1])
    assert reply is not None and reply.agent == "director" and "Director 只能根据团队的记录回答" in reply.answer
    assert "# 咨询记录: model_trainer → director #1" in text and "model_trainer 收到回复后继续工作" in text
    refused = {c["code"] for c in team.memo["consults"].values() if c["status"] == "refused"}
    assert "unknown_agent" not in refused  # (the script asks again after the reply: `repeated`, as for a colleague)


def test_an_answer_asking_again_what_was_answered_stands_without_another_turn(tmp_path: Path) -> None:
    """Seen on the embedded model (lynx_ode_en): after the data engineer's reply the modeler asked the same question
    twice more; each refusal was told back and cost a full answer. The refusal is on record, the answer stands."""
    ws, problem = workspace(tmp_path)
    model = scripted(consults={"modeler": "researcher"})
    team = director(ws, problem, model, config=TeamConfig(budget=5))
    run(team.turn("modeler", "work", step="modeler#1", phase="analysis", task="t", prompt="p"))
    asked = len(team.memo["answers"])
    answer = run(team.turn("modeler", "work", step="modeler#2", phase="analysis", task="t", prompt="p"))
    assert [c["code"] for c in team.memo["consults"].values() if c["status"] == "refused"] == ["repeated"]
    assert len(team.memo["answers"]) == asked + 1  # the answer that asked again, and no answer after the refusal
    assert answer.model_dump().get("consult_agent") == "researcher"  # that answer, as it was
