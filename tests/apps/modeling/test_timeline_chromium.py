"""The modeling timeline in headless Chromium against a real server (uvicorn on a free port, scripted model), in
English and in Chinese, over a workspace made by the real parts (see test_timeline_web.build_workspace): the run
starts, the team's step writes more records while the page watches, and the timeline follows from the events —
who is working, the phases, the Director's escalation answered in the page's ask form, a consultation card opened
to its markdown record, a verdict with its reasons, a script run, the files and the paper's PDF. Screenshots in test-artifacts/web/."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from consulta.apps import AppDef, AppEnv
from consulta.apps.modeling._gates import Verdict, write_validation_record
from consulta.asks import question_tool
from consulta.frontends.web import create_app
from consulta.runtime import Agent, ModelText, ToolDef, current_tool_call
from frontends.web.conftest import running_server, settings_for
from frontends.web.test_browser import browser, open_page  # noqa: F401 - the fixtures, shared with the ln2 page's tests

from .test_timeline_web import SAMPLE, TEST_APP, WORKSPACE, build_workspace

pytestmark = [pytest.mark.slow, pytest.mark.browser]

# A question is asked in the person's language (the runtime refuses an English one asked of a person writing Chinese)
ESCALATION = {
    "en": {
        "header": "Gate",
        "question": "The paper gate rejected the work three times. Accept it as it is?",
        "options": ["Accept the work", "Stop the team"],
    },
    "zh-CN": {
        "header": "关卡",
        "question": "论文关卡已三次驳回这份工作。按现状接受吗？",
        "options": ["接受这份工作", "停止团队"],
    },
}
REPLY = {"en": "The team goes on with your decision.", "zh-CN": "团队按你的决定继续。"}


def _script(lang: str) -> list[dict[str, Any]]:
    return [
        {"tool_calls": [{"name": "advance_team", "args": {}}]},
        {"tool_calls": [{"name": "question", "args": {"questions": [ESCALATION[lang]]}}]},
        {"text": REPLY[lang]},
    ]


WORKING = {"en": "model_trainer is training the model…", "zh-CN": "model_trainer 正在训练模型……"}


def _app(made: Path, runs: Path, lang: str) -> AppDef:
    """The fixture app, whose Director's one tool plays the team's next step: it puts the made workspace in place as
    the run's own (`runs/<problem>/<run>`), says who works, waits, and writes the results gate's verdict into it."""

    async def advance_team() -> dict[str, Any]:
        call = current_tool_call()
        assert call is not None and call.log is not None
        workspace = runs / call.run_id
        if not workspace.exists():
            shutil.copytree(made, workspace)
        call.log.emit(ModelText(run_id=call.run_id, text=WORKING[lang]))
        await asyncio.sleep(1.5)
        write_validation_record(
            workspace,
            Verdict(gate="results_trained", status="APPROVED", attempt=1, reasons=["Results match the code's output."]),
        )
        return {"ok": True, "message": "The results gate approved the work."}

    def director(options: Any, env: AppEnv) -> Agent:
        tool = ToolDef(name="advance_team", function=advance_team, description="Run the team's next step.")
        return Agent(
            app="modeling",
            name="director",
            instructions="[director] test",
            tools=(tool, question_tool()),
            options=options.model_dump(mode="json"),
        )

    return AppDef(
        name="modeling",
        description=TEST_APP.description,
        agents={"director": director},
        main_agent="director",
        options=TEST_APP.options,
        data_path=TEST_APP.data_path,
        web=TEST_APP.web,
    )


@pytest.mark.parametrize("lang", ["en", "zh-CN"])
def test_the_timeline_follows_the_run(open_page: Any, tmp_path: Path, lang: str) -> None:
    home = tmp_path / "home"
    home.mkdir()
    made = build_workspace(tmp_path / "made" / WORKSPACE)
    app = _app(made, home / "apps" / "modeling" / "runs" / WORKSPACE, lang)
    script = tmp_path / "script.yaml"
    script.write_text(json.dumps(_script(lang)), encoding="utf-8")
    settings = settings_for(home, script, lang=lang)
    with running_server(create_app(app=app, settings=settings, options={"problem": str(SAMPLE)})) as base:
        p = open_page(base, lang)
        t, page, name = p.t, p.page, f"modeling-{lang}"
        assert p.text("h1") == t["modeling.web.name"] and page.title() == t["web.title"].format(
            name=t["modeling.web.name"]
        )
        assert p.text("#mt-title") == t["modeling.web.timeline.title"]
        assert p.text("#mt-cards") == t["modeling.web.timeline.empty"]
        assert p.text("#mt-file-list") == t["modeling.web.files.empty"]
        p.shot(f"{name}-01-empty")

        page.fill("#prompt", "Solve the problem." if lang == "en" else "请解决这个问题。")
        page.press("#prompt", "Enter")
        now = page.locator("#mt-now")
        now.wait_for(state="visible")
        assert now.inner_text() == WORKING[lang]
        page.locator("#mt-cards .mt-card.consultation").wait_for()
        phases = page.locator("#mt-phases .mt-phase")
        assert phases.count() == 4
        assert (
            "approved" in (phases.nth(0).get_attribute("class") or "")
            and t["modeling.web.gate.data_ready"] in phases.nth(0).inner_text()
        )
        p.shot(f"{name}-02-working")

        page.locator(
            '#mt-phases .mt-phase.approved[data-gate="results_trained"]'
        ).wait_for()  # written while the page watched

        # the escalation: a question of the Director's run, answered in the page's own ask form
        form = page.locator(".question-form")
        form.wait_for()
        page.locator("#mt-state.waiting, #mt-state.running").wait_for()
        assert now.inner_text() == t["modeling.web.now.waiting"]
        p.shot(f"{name}-03-escalation")
        page.select_option(".question-form select", ESCALATION[lang]["options"][0])
        form.locator("button[type=submit]").click()
        page.locator(".card.question.closed").wait_for()
        page.locator("#mt-state.finished").wait_for()
        assert now.is_hidden()
        cards = page.locator("#mt-cards .mt-card")
        assert cards.count() == 6
        verdicts = page.locator(".mt-card.verdict")
        assert t["modeling.web.gate.status.REJECTED"] in verdicts.first.inner_text()

        consultation = page.locator(".mt-card.consultation")
        consultation.locator("summary").click()
        consultation.locator("pre.mt-markdown").wait_for()
        record = consultation.locator("pre.mt-markdown").inner_text()
        assert record.startswith("# 咨询记录: modeler → data_engineer #1") and "FROM @data_engineer:" in record
        assert t["modeling.web.card.reply"] in consultation.inner_text()
        rejected = verdicts.first
        rejected.locator("summary").click()
        assert "[duplicate_rows]" in rejected.locator(".mt-reasons").inner_text()
        page.locator(".mt-card.script summary").click()
        assert "results/metrics.csv" in page.locator(".mt-card.script .mt-outputs").inner_text()
        p.shot(f"{name}-04-cards")

        pdf = page.locator("#mt-paper a")
        assert pdf.inner_text() == t["modeling.web.paper.open"]
        response = page.request.get(base + pdf.get_attribute("href"))
        assert (
            response.status == 200
            and response.headers["content-type"] == "application/pdf"
            and response.body().startswith(b"%PDF")
        )
        files = p.text("#mt-file-list")
        assert t["modeling.web.folder.results"] in files and "yearly_total.csv" in files and "memo.json" not in files
        figure = page.locator('#mt-file-list a[href*="figures/yearly_total.png"]')
        assert page.request.get(base + figure.get_attribute("href")).headers["content-type"] == "image/png"
        page.locator("#modeling-files").scroll_into_view_if_needed()
        p.shot(f"{name}-05-files")
        assert p.errors == []
