"""Three apps' pages in headless Chromium (one browser for the module; one server per app, shared by its tests):
quiz's chat says what it is for with an example of each mode, a click filling the request in; advisor's ranking marks
the advisor a reply names (a real turn of its agent; the scripted model writes only the words about "the first
one"); ln2's step the runtime refused reads as set aside, in muted words, never as an error. Screenshots in
test-artifacts/web/."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from consulta.apps.advisor._lookups import update_ranking
from consulta.frontends.web import create_app
from consulta.i18n import catalog

from .conftest import running_server, settings_for
from .test_browser import ARTIFACTS, browser  # noqa: F401 - the module's Chromium

pytestmark = [pytest.mark.slow, pytest.mark.browser]

PKU_CS = {"school": "北京大学", "major": "计算机科学与技术"}


def _open(browser: Any, url: str) -> tuple[Any, Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 800}, locale="en-US")
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(url)
    page.wait_for_selector("body[data-ready=true]")
    assert not errors, errors
    return context, page


@pytest.fixture(scope="module")
def quiz(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    home = tmp_path_factory.mktemp("quiz")
    with running_server(create_app(app="quiz", settings=settings_for(home))) as url:
        yield url


@pytest.fixture(scope="module")
def advisor(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Any, Path]]:
    home = tmp_path_factory.mktemp("advisor")
    script = home / "describe.json"
    script.write_text("[]", encoding="utf-8")  # the model is resolved per turn: written once the advisor is known
    app = create_app(app="advisor", settings=settings_for(home, script, lang="zh-CN"))
    with running_server(app) as url:
        yield url, app, script


@pytest.mark.parametrize("lang", ["en", "zh-CN"])
def test_the_quiz_chat_says_what_it_is_for_with_an_example_of_each_mode(browser: Any, quiz: str, lang: str) -> None:
    words = catalog(lang)
    context, page = _open(browser, f"{quiz}/?lang={lang}")
    try:
        assert page.inner_text("#example") == words["quiz.web.example"]
        assert page.inner_text("#example2") == words["quiz.web.example2"]
        page.click("#example2")
        assert page.input_value("#prompt") == words["quiz.web.example2_prompt"]
        page.click("#example")
        assert page.input_value("#prompt") == words["quiz.web.example_prompt"]
        page.screenshot(path=str(ARTIFACTS / f"look-quiz-chat-{lang}.png"))
    finally:
        context.close()


def test_the_advisor_a_reply_names_is_marked_in_the_ranking(browser: Any, advisor: tuple[str, Any, Path]) -> None:
    base, app, script = advisor
    first = update_ranking(app.state.host.store.engine, **PKU_CS).advisors[0]
    said = f"{first.name}老师的学生评价很高。"
    script.write_text(
        json.dumps([{"tool_calls": [{"name": "final_result", "args": {"voice_response": said}}]}], ensure_ascii=False),
        encoding="utf-8",
    )
    context, page = _open(browser, f"{base}/?lang=zh-CN")
    try:
        for words in ("我想考北京大学计算机系", "第一个导师怎么样？"):
            page.fill("#prompt", words)
            page.press("#prompt", "Enter")
            page.locator("#advisor-list .advisor-card").first.wait_for()
            page.wait_for_function("() => !document.querySelector('#stop') || document.querySelector('#stop').hidden")
        page.locator(f'.advisor-card.named[data-id="{first.id}"]').wait_for()
        assert page.locator(".advisor-card.named").count() == 1
        assert page.get_attribute(f'.advisor-card[data-id="{first.id}"]', "aria-current") == "true"
        page.screenshot(path=str(ARTIFACTS / "look-advisor-named.png"))
    finally:
        context.close()


@pytest.fixture(scope="module")
def ln2_refused(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """ln2 whose scripted model (a test double) first makes a write the runtime refuses (no such record), then
    replies."""
    home = tmp_path_factory.mktemp("refused")
    script = home / "refused.json"
    steps = [
        {"tool_calls": [{"name": "record_thaw", "args": {"record_id": 99999, "positions": [1]}}]},
        {"text": "There is no record 99999 in the inventory."},
    ]
    script.write_text(json.dumps(steps), encoding="utf-8")
    with running_server(create_app(app="ln2", settings=settings_for(home, script))) as url:
        yield url


def test_a_refused_step_is_set_aside_in_muted_words_not_an_error(browser: Any, ln2_refused: str) -> None:
    words = catalog("en")
    context, page = _open(browser, ln2_refused)
    try:
        page.fill("#prompt", "Thaw record 99999 position 1")
        page.press("#prompt", "Enter")
        page.locator(".msg.agent:not(.draft)", has_text="no record 99999").wait_for()
        step = page.locator(".tool").first
        assert step.locator(".tool-state.set-aside").count() == 1
        summary = step.locator("summary").inner_text()
        assert words["web.step.set_aside"] in summary and "record_thaw" not in summary
        assert "not_found" not in summary and "error" not in summary.lower()
        assert not step.locator(".tool-name").is_visible()  # the tool's name is a detail, collapsed
        muted = page.evaluate("getComputedStyle(document.querySelector('.step-note')).color")
        danger = page.evaluate(
            "(() => { const p = document.createElement('p'); p.style.color = 'var(--danger)';"
            " document.body.append(p); const c = getComputedStyle(p).color; p.remove(); return c; })()"
        )
        warn = page.evaluate(
            "(() => { const p = document.createElement('p'); p.style.color = 'var(--warn)';"
            " document.body.append(p); const c = getComputedStyle(p).color; p.remove(); return c; })()"
        )
        assert muted not in (danger, warn)
        assert page.locator(".card.error, .msg.error, .toast.error").count() == 0
        page.screenshot(path=str(ARTIFACTS / "look-step-set-aside.png"))
    finally:
        context.close()


CLAIMED = "Done: I took out one tube of HeLa from box 1, position 1, and recorded the thaw in the inventory."
HONEST = "Nothing has been changed yet. Shall I stage taking out one HeLa tube for your approval?"


@pytest.fixture(scope="module")
def ln2_checked(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """ln2 whose scripted model (a test double) first writes, word by word, a reply claiming a write no tool made
    (the runtime's claims check refuses it), then an honest one."""
    home = tmp_path_factory.mktemp("checked")
    script = home / "checked.json"
    script.write_text(json.dumps({"word_delay_s": 0.12, "steps": [{"text": CLAIMED}, {"text": HONEST}]}), "utf-8")
    with running_server(create_app(app="ln2", settings=settings_for(home, script))) as url:
        yield url


def test_a_streamed_reply_the_check_refuses_is_taken_away_before_it_reads_as_final(
    browser: Any, ln2_checked: str
) -> None:
    """The refused words show only as a draft (marked as being written), then leave the page with a note that they
    were withdrawn; the checked reply alone stays."""
    context, page = _open(browser, ln2_checked)
    try:
        page.fill("#prompt", "Take out one HeLa tube")
        page.press("#prompt", "Enter")
        draft = page.locator(".msg.agent.draft", has_text="took out one tube")
        draft.wait_for()
        assert draft.get_attribute("aria-busy") == "true" and page.locator(".msg.agent:not(.draft)").count() == 0
        page.screenshot(path=str(ARTIFACTS / "look-reply-checked-01-draft.png"))
        page.locator(".msg.agent:not(.draft)", has_text="Nothing has been changed yet").wait_for()
        page.wait_for_function("() => document.querySelector('#stop').hidden")
        assert [m.strip() for m in page.locator(".msg.agent").all_inner_texts()] == [HONEST]
        assert "took out one tube" not in page.inner_text("#transcript")
        withdrawn = page.locator(".note.withdrawn")  # said where the draft was, in muted words
        assert withdrawn.count() == 1 and withdrawn.inner_text() == catalog("en")["web.reply.withdrawn"]
        page.screenshot(path=str(ARTIFACTS / "look-reply-checked-02-reply.png"))
    finally:
        context.close()
