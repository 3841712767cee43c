"""The REAL modeling app in headless Chromium: the web front end with `get_app("modeling")`, its real Director running
the real team over a real problem (a copy of the electricity_demand sample with one month dropped, so code's data
check rejects the data three times and the Director escalates), the scripted model the only double (the team's
answers, one consultation modeler → researcher). In English and in Chinese, the request is typed in the page and the
timeline followed: the consultation card opens to its markdown record, the data_ready gate's REJECTED verdicts show
their reasons, the escalation is the page's ask form; answered "accept", the run goes on in the same page to the
end (four phases, the paper's PDF served as application/pdf, results/*.csv and figures/*.png listed); answered
"stop" after a reload of the page (the form, the phase and the waiting line come back), the page shows the run
finished with the stopped message and no PDF. After the answer the timeline never
says it still waits for the person. No script error on the page. Screenshots in test-artifacts/web/. (And, without
a browser, the phase states of a retry the pages do not reach.)"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from consulta.apps import get_app
from consulta.apps.modeling import AGENTS
from consulta.apps.modeling._gates import Verdict
from consulta.apps.modeling._web import _phases
from consulta.frontends.web import create_app
from frontends.web.conftest import running_server, settings_for
from frontends.web.test_browser import browser, open_page  # noqa: F401 - the fixtures, shared with the ln2 page's tests

from .team_script import SAMPLES, write_script

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.timeout(600)]

RUN_MS = 180_000  # the longest the team may take between two things the page shows (a script run, Typst)
REQUEST = {"en": "Solve the problem and write the paper.", "zh-CN": "请解决这个问题并写出论文。"}


def _problem(tmp_path: Path) -> Path:
    """A copy of the sample with one month dropped: no cleaning can prove it, so the data gate rejects it."""
    problem = tmp_path / "problem"
    shutil.copytree(SAMPLES / "electricity_demand", problem)
    frame = pd.read_csv(problem / "demand_monthly.csv")
    frame.drop(index=30).to_csv(problem / "demand_monthly.csv", index=False)
    return problem


def _serve(tmp_path: Path, lang: str) -> Any:
    """The real web front end over the real modeling app: a temp home, the team's script (modeler consults the
    researcher once), a problem whose data the data gate rejects."""
    home = tmp_path / "home"
    home.mkdir()
    script = write_script(tmp_path / "team.json", consults={"modeler": "researcher"})
    app = create_app(
        app=get_app("modeling"),
        settings=settings_for(home, script, lang=lang),
        options={"problem": str(_problem(tmp_path))},
    )
    return running_server(app)


def _escalated(p: Any, lang: str, name: str) -> Any:
    """From the request typed in the page to the escalation in its ask form (checked on the way: the consultation
    card and its record, the data gate's three REJECTED verdicts with their reasons); the form."""
    t, page = p.t, p.page
    assert p.text("#mt-cards") == t["modeling.web.timeline.empty"]
    page.fill("#prompt", REQUEST[lang])
    page.press("#prompt", "Enter")

    consultation = page.locator("#mt-cards .mt-card.consultation")
    consultation.wait_for(timeout=RUN_MS)
    assert (
        t["modeling.web.card.consultation_title"].format(**{"from": "modeler", "to": "researcher", "i": 1})
        in consultation.inner_text()
    )
    form = page.locator(".question-form")
    form.wait_for(timeout=RUN_MS)
    page.locator("#mt-state.waiting").wait_for()
    page.locator('#mt-phases .mt-phase.escalated[data-gate="data_ready"]').wait_for()
    assert page.locator("#mt-now").inner_text() == t["modeling.web.now.waiting"]
    phases = page.locator("#mt-phases .mt-phase")
    assert phases.count() == 4 and t["modeling.web.phase.escalated"] in phases.nth(0).inner_text()
    assert [phases.nth(i).get_attribute("class").split()[-1] for i in range(1, 4)] == ["pending"] * 3

    # the escalation: the gate, its reasons and the three decisions, in the person's language
    question = form.inner_text()
    assert (
        t["modeling.escalation.header"].format(gate="data_ready") in question
        and "[sequence_gaps]" in question
        and "2017-07" in question
    )
    options = form.locator("select option").all_inner_texts()
    assert [t[f"modeling.escalation.{d}"] for d in ("accept", "retry", "stop")] == [o.strip() for o in options[:3]]

    # the data gate rejected the data three times, by code's checks, with the reasons
    verdicts = page.locator("#mt-cards .mt-card.verdict.rejected")
    assert verdicts.count() == 3
    for i in range(3):
        summary = verdicts.nth(i).locator("summary").inner_text()
        assert (
            t["modeling.web.card.verdict_title"].format(gate=t["modeling.web.gate.data_ready"], attempt=i + 1)
            in summary
        )
        assert t["modeling.web.gate.status.REJECTED"] in summary and t["modeling.web.card.decided_by.code"] in summary
    verdicts.first.locator("summary").click()
    reasons = verdicts.first.locator(".mt-reasons").inner_text()
    assert "[sequence_gaps]" in reasons and "2017-07" in reasons

    # the consultation card opens to its markdown record
    consultation.locator("summary").click()
    record = consultation.locator("pre.mt-markdown")
    record.wait_for()
    text = record.inner_text()
    assert (
        text.startswith("# 咨询记录: modeler → researcher #1")
        and "modeler 想确认：这样理解对吗？" in text
        and "researcher 的回答：可以这样做。" in text
    )
    assert t["modeling.web.card.reply"] in consultation.inner_text()
    p.shot(f"{name}-01-escalation")
    return form


def _answer(p: Any, form: Any, decision: str) -> None:
    """Answer the escalation in the page's ask form with the words of `decision`; from then on, every line the
    timeline shows of who is working is noted (`window.said`)."""
    p.page.select_option(".question-form select", p.t[f"modeling.escalation.{decision}"])
    form.locator("button[type=submit]").click()
    p.page.locator(".card.question.closed").wait_for()
    assert p.t[f"modeling.escalation.{decision}"] in p.text(".card.question.closed")
    p.page.evaluate(
        """() => {
            window.said = [];
            const node = document.querySelector("#mt-now");
            new MutationObserver(() => node.hidden || window.said.push(node.innerText))
                .observe(node, { attributes: true, childList: true, subtree: true, characterData: true });
        }"""
    )


def _said_after_the_answer(p: Any) -> list[str]:
    """What the timeline said of who works after the answer: never that it waits for the person (it was answered),
    only who of the team works or the run's last words."""
    said = p.page.evaluate("window.said")
    assert p.t["modeling.web.now.waiting"] not in said
    team = {p.t["modeling.web.now.working"].format(agent=agent) for agent in AGENTS}
    assert all(
        line in team or line.startswith(("The paper is ready", "论文已完成", "The run was stopped", "按你的决定停止"))
        for line in said
    ), said
    return said


# Each of the two runs in one language (a few seconds of the README pass's budget each): both languages are covered,
# the finished run in Chinese (the longer text), the stopped one in English.
@pytest.mark.parametrize("lang", ["zh-CN"])
def test_the_real_team_escalates_and_goes_on_when_the_work_is_accepted(
    open_page: Any, tmp_path: Path, lang: str
) -> None:
    with _serve(tmp_path, lang) as base:
        p = open_page(base, lang)
        t, page, name = p.t, p.page, f"modeling-live-{lang}"
        _answer(p, _escalated(p, lang, name), "accept")

        # the run goes on in the same page to the end
        page.locator("#mt-state.finished").wait_for(timeout=RUN_MS)
        pdf = page.locator("#mt-paper a")
        pdf.wait_for()
        assert page.locator("#mt-now").is_hidden()
        states = [
            (
                page.locator("#mt-phases .mt-phase").nth(i).get_attribute("data-gate"),
                page.locator("#mt-phases .mt-phase").nth(i).get_attribute("class").split()[-1],
            )
            for i in range(4)
        ]
        assert states == [
            ("data_ready", "accepted"),
            ("code_runs", "approved"),
            ("results_trained", "approved"),
            ("paper_written", "approved"),
        ]
        assert t["modeling.web.phase.accepted"] in p.text('#mt-phases .mt-phase[data-gate="data_ready"]')
        approved = page.locator("#mt-cards .mt-card.verdict.approved")
        assert approved.count() == 3 and page.locator("#mt-cards .mt-card.verdict.rejected").count() == 3
        assert (
            page.locator("#mt-cards .mt-card.script").count() >= 4
            and page.locator("#mt-cards .mt-card.script.failed").count() == 0
        )
        assert page.locator(
            "#mt-cards .mt-card.consultation pre.mt-markdown"
        ).is_visible()  # the open record stayed open
        last = page.locator(".msg.agent").last
        last.wait_for()
        reply = last.inner_text()
        assert reply.startswith(t["modeling.done.paper"].split("{pdf}")[0]) and "paper.pdf" in reply
        _said_after_the_answer(p)
        p.shot(f"{name}-02-finished")

        assert pdf.inner_text() == t["modeling.web.paper.open"]
        response = page.request.get(base + pdf.get_attribute("href"))
        assert (
            response.status == 200
            and response.headers["content-type"] == "application/pdf"
            and response.body().startswith(b"%PDF")
        )
        files = p.text("#mt-file-list")
        assert (
            t["modeling.web.folder.results"] in files
            and t["modeling.web.folder.figures"] in files
            and "director.json" not in files
        )
        csvs = page.locator('#mt-file-list a[href*="/results/"][href*=".csv"]')
        pngs = page.locator('#mt-file-list a[href*="/figures/"][href*=".png"]')
        assert csvs.count() >= 1 and pngs.count() >= 1
        assert "forecast.csv" in csvs.all_inner_texts()
        assert page.request.get(base + csvs.first.get_attribute("href")).headers["content-type"].startswith("text/csv")
        assert page.request.get(base + pngs.first.get_attribute("href")).headers["content-type"] == "image/png"
        page.locator("#modeling-files").scroll_into_view_if_needed()
        p.shot(f"{name}-03-files")
        assert p.errors == []
        p.close()  # before the server stops


@pytest.mark.parametrize("lang", ["en"])
def test_the_real_team_stops_when_the_person_says_stop(open_page: Any, tmp_path: Path, lang: str) -> None:
    with _serve(tmp_path, lang) as base:
        p = open_page(base, lang)
        t, page, name = p.t, p.page, f"modeling-live-stop-{lang}"
        _escalated(p, lang, name)
        page.reload()  # the escalation waits for the person across a reload of the page
        page.wait_for_selector("body[data-ready=true]")
        form = page.locator(".question-form")
        form.wait_for()
        page.locator('#mt-phases .mt-phase.escalated[data-gate="data_ready"]').wait_for()
        page.locator("#mt-state.waiting").wait_for()
        assert page.locator("#mt-now").inner_text() == t["modeling.web.now.waiting"]
        assert (
            page.locator("#mt-cards .mt-card.verdict.rejected").count() == 3
            and page.locator("#mt-cards .mt-card.consultation").count() == 1
        )
        _answer(p, form, "stop")

        page.locator("#mt-state.finished").wait_for(timeout=RUN_MS)
        page.locator('#mt-phases .mt-phase.stopped[data-gate="data_ready"]').wait_for()
        assert t["modeling.web.phase.stopped"] in p.text('#mt-phases .mt-phase[data-gate="data_ready"]')
        assert [
            page.locator("#mt-phases .mt-phase").nth(i).get_attribute("class").split()[-1] for i in range(1, 4)
        ] == ["pending"] * 3
        reply = page.locator(".msg.agent").last
        reply.wait_for()
        assert reply.inner_text().startswith(t["modeling.done.stopped"].split("{workspace}")[0])
        assert page.locator("#mt-paper").is_hidden() and page.locator("#mt-paper a").count() == 0
        assert page.locator("#mt-now").is_hidden() and page.locator("#mt-cards .mt-card.verdict.approved").count() == 0
        assert page.locator('#mt-file-list a[href*="/paper/"]').count() == 0
        _said_after_the_answer(p)
        p.shot(f"{name}-02-stopped")
        assert p.errors == []
        p.close()  # before the server stops


def test_a_gate_s_phase_says_what_the_person_decided() -> None:
    """The phases' states the pages above do not reach: a retry goes back to rework, its second escalation waits."""
    rejected = [
        Verdict(gate="data_ready", status="REJECTED", attempt=i, reasons=["[sequence_gaps] 2017-07"])
        for i in range(1, 7)
    ]
    approved = Verdict(gate="code_runs", status="APPROVED", attempt=1, reasons=[])

    def states(verdicts: list[Verdict], decisions: dict[str, str]) -> list[str]:
        return [phase.state for phase in _phases(verdicts, decisions)]

    assert states(rejected[:3], {}) == ["escalated", "pending", "pending", "pending"]
    assert states(rejected[:3], {"data_ready#1": "retry"}) == ["rejected", "pending", "pending", "pending"]
    assert states(rejected[:4], {"data_ready#1": "retry"}) == ["rejected", "pending", "pending", "pending"]
    assert states(rejected, {"data_ready#1": "retry"}) == ["escalated", "pending", "pending", "pending"]
    assert states(rejected, {"data_ready#1": "retry", "data_ready#2": "accept"}) == [
        "accepted",
        "current",
        "pending",
        "pending",
    ]
    assert states([*rejected[:3], approved], {"data_ready#1": "accept"}) == [
        "accepted",
        "approved",
        "current",
        "pending",
    ]
    assert states(rejected[:3], {"data_ready#1": "stop"}) == ["stopped", "pending", "pending", "pending"]
