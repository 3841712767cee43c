"""A person takes the adaptive test on the page in headless Chromium against a real server (uvicorn on a free port),
in Chinese and in English: a bad profile value refused with a readable line, the profile set up, items answered one at
a time with feedback and progress, the page reloaded mid-test (it continues at the item shown), the end screen with
θ ± SE, the plot and every item reviewed — and reloaded again, still there. Screenshots in test-artifacts/web/."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine

from consulta.apps.quiz._cat import CatRules
from consulta.apps.quiz._cat_sessions import TestSessions
from consulta.frontends.web import create_app
from frontends.web.conftest import running_server
from frontends.web.test_browser import ARTIFACTS, browser, open_page  # noqa: F401 - the fixtures, shared with the ln2 page's tests

from . import test_take_web
from .test_cat_sessions import add_items, keyword_grader, right_answer, wrong_answer
from .test_take_web import quiz_app, settings

pytestmark = [pytest.mark.slow, pytest.mark.browser]

ITEMS = 6
PROFILES = {
    "en": {"role": "Data analyst", "duty": "Weekly sales reports", "interests": "SQL, statistics"},
    "zh-CN": {"role": "数据分析师", "duty": "每周的销售报表", "interests": "SQL，统计"},
}


@pytest.fixture
def six_items(monkeypatch: pytest.MonkeyPatch) -> None:
    rules = CatRules(se_target=0.01, min_items=ITEMS, max_items=ITEMS, randomesque=3)
    monkeypatch.setattr(
        test_take_web,
        "sessions",
        lambda host: TestSessions(host.env.store.engine, rules=rules, short_answers=keyword_grader),
    )


def answer_item(page: Any, engine: Any, *, right: bool) -> None:
    """Answer the item shown, right or wrong, and wait for its feedback."""
    qid = page.get_attribute("#quiz-item", "data-question")
    value = right_answer(engine, qid) if right else wrong_answer(engine, qid)
    if page.locator("#quiz-text").count():
        page.fill("#quiz-text", value)
    else:
        page.locator(f'input[name="quiz-choice"][value="{value}"]').check()
    page.click("#quiz-submit")
    page.locator("#quiz-feedback:not([hidden])").wait_for()


@pytest.mark.parametrize("lang", ["zh-CN", "en"])
def test_take_a_test_reload_mid_way_and_see_the_results(
    open_page: Any, six_items: None, tmp_path: Path, lang: str
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    engine = create_engine(f"sqlite:///{home}/consulta.db")
    add_items(engine, "en")
    add_items(engine, "zh-CN")
    name = f"quiz-{lang}"
    with running_server(create_app(app=quiz_app(), settings=settings(home, lang))) as base:
        p = open_page(base, lang)
        t, page = p.t, p.page
        assert p.text("h1") == t["quiz.web.name"] and p.text("#quiz-title") == t["quiz.web.test.title"]
        page.locator("#quiz-profile:not([hidden])").wait_for()

        # a value out of bounds: one readable line in the reader's language, no test started
        page.select_option("#quiz-level", "intermediate")
        page.fill("#quiz-years", "99")
        page.fill("#quiz-role", PROFILES[lang]["role"])
        page.fill("#quiz-duty", PROFILES[lang]["duty"])
        page.fill("#quiz-interests", PROFILES[lang]["interests"])
        page.click("#quiz-start")
        error = page.locator("#quiz-error:not([hidden])")
        error.wait_for()
        expected = t["quiz.take.error.invalid_profile"].format(
            name=t["quiz.take.profile.years_experience"], why=t["quiz.take.profile.bad.range"].format(limit=60)
        )
        assert error.inner_text() == expected
        assert [e for e in p.errors if "422" not in e] == [] and len(p.errors) == 1  # the browser logs the refusal
        p.errors.clear()
        p.shot(f"{name}-01-profile-refused")

        page.fill("#quiz-years", "3")
        page.click("#quiz-start")
        page.locator("#quiz-item:not([hidden])").wait_for()
        assert p.text("#quiz-progress") == t["quiz.web.progress"].format(position=1, max=ITEMS)
        assert page.locator("#quiz-error").is_hidden()
        stem = p.text("#quiz-stem")
        assert any("\u4e00" <= ch <= "\u9fff" for ch in stem) == (lang == "zh-CN")  # the items in the person's language
        p.shot(f"{name}-02-item")

        answer_item(page, engine, right=True)
        assert p.text("#quiz-verdict") == t["quiz.web.feedback.right"] and p.text("#quiz-feedback-stem") == stem
        assert p.text("#quiz-explanation")  # the item's explanation
        p.shot(f"{name}-03-feedback")
        page.click("#quiz-next")
        answer_item(page, engine, right=False)
        facts = p.text("#quiz-feedback-facts")
        assert p.text("#quiz-verdict") == t["quiz.web.feedback.wrong"]
        assert (
            t["quiz.web.feedback.right_answer"] in facts or t["quiz.web.feedback.keywords"] in facts
        )  # a short answer's keywords
        page.click("#quiz-next")
        page.locator("#quiz-item:not([hidden])").wait_for()
        third = page.get_attribute("#quiz-item", "data-question")

        # reload mid-test: the same item, item 3, where it was
        page.reload()
        page.wait_for_selector("body[data-ready=true]")
        page.locator("#quiz-item:not([hidden])").wait_for()
        assert page.get_attribute("#quiz-item", "data-question") == third
        assert p.text("#quiz-progress") == t["quiz.web.progress"].format(position=3, max=ITEMS)
        p.shot(f"{name}-04-reloaded")

        for n in range(3, ITEMS + 1):
            answer_item(page, engine, right=n % 2 == 1)
            page.click("#quiz-next")
        result = page.locator("#quiz-result:not([hidden])")
        result.wait_for()
        assert t["quiz.web.stop.max_items"] in p.text("#quiz-stop")
        assert p.text("#quiz-score").startswith(t["quiz.web.result.theta"].split("θ")[0])
        assert page.locator("#quiz-review li").count() == ITEMS
        # a function, not a bare expression: Playwright polls a bare expression with eval, which the page's CSP refuses
        page.wait_for_function(
            "() => document.querySelector('#quiz-plot').complete && document.querySelector('#quiz-plot').naturalWidth > 0"
        )
        page.evaluate("window.scrollTo(0, 0)")
        page.screenshot(path=str(ARTIFACTS / f"{name}-05-results.png"), full_page=True)

        page.reload()  # the end screen stays after a reload
        page.wait_for_selector("body[data-ready=true]")
        page.locator("#quiz-result:not([hidden])").wait_for()
        assert page.locator("#quiz-review li").count() == ITEMS
        page.click("#quiz-again")
        page.locator("#quiz-profile:not([hidden])").wait_for()
        assert page.input_value("#quiz-role") == PROFILES[lang]["role"] and page.input_value("#quiz-years") == "3"
        p.close()
    engine.dispose()
