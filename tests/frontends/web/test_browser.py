"""The ln2 page in headless Chromium against a real server (uvicorn on a free port) with the scripted model: the
ambiguous request in Chinese and in English, the cancel path, a question that times out. Each step is
screenshotted to test-artifacts/web/."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from consulta.frontends.web import create_app
from consulta.i18n import catalog
from consulta.runtime import Store

from .conftest import AMBIGUOUS, inventory_path, running_server, settings_for, wait_for

pytestmark = [pytest.mark.slow, pytest.mark.browser]

ARTIFACTS = Path(__file__).resolve().parents[3] / "test-artifacts" / "web"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
STEP_MS = 15_000  # the longest any one step may take


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    playwright_api = pytest.importorskip("playwright.sync_api")
    with playwright_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


class Page:
    """A browser tab on the page, failing the test on any script error, screenshotting each step."""

    def __init__(self, browser: Any, base: str, lang: str) -> None:
        self.context = browser.new_context(viewport={"width": 1440, "height": 900}, locale=lang)
        self.page = self.context.new_page()
        self.page.set_default_timeout(STEP_MS)
        self.errors: list[str] = []
        self.closed = False
        self.page.on("pageerror", lambda error: self.errors.append(str(error)))
        self.page.on("console", lambda message: message.type == "error" and self.errors.append(message.text))
        self.base = base
        self.t = catalog(lang)
        ARTIFACTS.mkdir(parents=True, exist_ok=True)

    def open(self) -> None:
        self.page.goto(self.base)
        self.page.wait_for_selector("body[data-ready=true]")

    def shot(self, name: str) -> None:
        self.page.screenshot(path=str(ARTIFACTS / f"{name}.png"))

    def text(self, selector: str) -> str:
        return self.page.locator(selector).first.inner_text()

    def ask_ambiguous(self, words: str = AMBIGUOUS) -> Any:
        """Send the ambiguous request with Enter; the question form it brings. A question must be in the person's
        language (the runtime refuses an English one asked of a person writing Chinese)."""
        self.page.fill("#prompt", words)
        self.page.press("#prompt", "Enter")
        form = self.page.locator(".question-form")
        form.wait_for()
        return form

    def cell(self, box: int, position: int) -> Any:
        return self.page.locator(f'.cell[data-box="{box}"][data-pos="{position}"]')

    def show_box(self, box: int) -> None:
        self.page.click(f'.tab[data-box="{box}"]')

    def close(self) -> None:
        """Close the page (once) and check it logged no error. Call it before the server stops when the page may
        still be loading (after a reload): a request cut by the server's shutdown is logged as an error."""
        if self.closed:
            return
        self.closed = True
        self.context.close()
        assert self.errors == []


@pytest.fixture
def open_page(browser: Any) -> Iterator[Any]:
    pages: list[Page] = []

    def make(base: str, lang: str) -> Page:
        page = Page(browser, base, lang)
        pages.append(page)
        page.open()
        return page

    yield make
    for page in pages:
        page.close()


def _ask_and_approve(p: Page, home: Path, *, first: int, keyboard: bool) -> None:
    """The ambiguous request from typing it to rolling the thaw back, one screenshot per step from `first`."""
    t, page = p.t, p.page
    original = inventory_path(home).read_bytes()
    assert p.text("#send") == t["web.chat.send"] and p.text("h1") == t["ln2.web.name"]
    assert page.title() == t["web.title"].format(name=t["ln2.web.name"])
    p.show_box(2)
    assert "occupied" in p.cell(2, 1).get_attribute("class")
    p.shot(f"{first:02d}-page")

    # Note every text the thinking indicator shows while the run goes on (it is gone by the time the question is).
    page.evaluate(
        """() => {
            window.thinking = [];
            const node = document.querySelector("#thinking");
            new MutationObserver(() => node.hidden || window.thinking.push(node.innerText))
                .observe(node, { attributes: true, childList: true, subtree: true, characterData: true });
        }"""
    )
    page.fill("#prompt", AMBIGUOUS)
    page.press("#prompt", "Enter")
    form = page.locator(".question-form")
    form.wait_for()
    thinking = t["web.chat.thinking"].split("{")[0]  # "Thinking… {seconds} s": the clock's words, any second
    assert any(text.startswith(thinking) for text in page.evaluate("window.thinking"))
    assert page.is_hidden("#thinking")
    assert form.locator("h3").inner_text() == t["web.question.title"]
    assert t["web.question.asking"] in p.text(".note.asking")
    assert "Cell Line" in form.locator("label").inner_text() and "K562-dTAG" in form.locator("label").inner_text()
    assert form.locator("button[type=submit]").inner_text() == t["ai.question.confirm"]
    assert form.locator("button[type=button]").inner_text() == t["ai.question.cancel"]
    assert page.evaluate("document.activeElement.tagName") == "SELECT"  # the form has the focus
    p.shot(f"{first + 1:02d}-question")

    page.select_option(".question-form select", "K562-dTAG-BRD4")
    if keyboard:
        page.keyboard.press("Enter")
    else:
        form.locator("button[type=submit]").click()
    page.locator(".card.question.closed").wait_for()
    assert "K562-dTAG-BRD4" in p.text(".card.question.closed")
    plan = page.locator(".card.plan")
    plan.locator("button.primary:not([disabled])").wait_for()
    assert "9" in plan.locator(".previews").inner_text() and "K562-dTAG-BRD4" in plan.locator(".previews").inner_text()
    assert plan.locator("button.primary").inner_text() == t["web.plan.approve"]
    assert inventory_path(home).read_bytes() == original  # staged only
    tool = page.locator(".tool details").first
    # A step reads in the person's words; the tool's name and its data are details, collapsed.
    assert (
        tool.locator("summary").inner_text().startswith(t["ln2.step.query_inventory.detail"].format(cell_line="K562"))
    )
    assert not tool.locator(".tool-name").is_visible() and not tool.locator("pre").first.is_visible()
    tool.locator("summary").click()
    assert '"cell_line": "K562"' in tool.locator("pre").first.inner_text()
    assert '"total"' in tool.locator("pre").nth(1).inner_text()  # and hold their result
    tool.locator("summary").click()
    plan.scroll_into_view_if_needed()
    p.shot(f"{first + 2:02d}-plan")

    plan.locator("button.primary").click()
    page.locator(".plan-status.applied").wait_for()
    page.locator('.cell.empty[data-box="2"][data-pos="1"]').wait_for()  # the grid redrew itself
    assert "changed" in p.cell(2, 1).get_attribute("class")
    assert inventory_path(home).read_bytes() != original
    p.shot(f"{first + 3:02d}-applied")

    p.cell(2, 2).click()
    page.locator("#tube .record").wait_for()
    assert "K562-dTAG-BRD4" in p.text("#tube")
    p.shot(f"{first + 4:02d}-tube")

    entry = page.locator(".audit-entry").first
    entry.wait_for()
    entry.locator("button").click()
    staged = page.locator("#audit-plan .card.plan")  # a person's rollback is staged like any write
    staged.locator("button.primary:enabled").wait_for()
    assert staged.locator("h3").inner_text() == t["web.plan.title"]
    assert inventory_path(home).read_bytes() != original  # nothing written before the approval
    p.shot(f"{first + 5:02d}-staged-rollback")
    page.reload()  # a staged rollback not yet decided is shown again for approval
    staged.locator("button.primary:enabled").wait_for()
    page.locator('.tab[data-box="2"]').click()
    p.cell(2, 2).click()  # the tube whose thaw the rollback undoes, open again after the reload
    page.locator("#tube .thaws li").nth(1).wait_for()
    staged.locator("button.primary").click()
    staged.locator(".plan-status.applied").wait_for()
    page.locator('.cell.occupied[data-box="2"][data-pos="1"]').wait_for()
    wait_for(lambda: page.locator(".audit-entry").count() == 2, what="the rollback in the history")
    page.locator("#tube .thaws li").nth(1).wait_for(state="detached")  # the open tube shows the thaw undone
    assert page.locator("#tube .thaws li").count() == 1
    assert inventory_path(home).read_bytes() == original
    p.shot(f"{first + 6:02d}-rolled-back")


def test_the_ambiguous_request_in_chinese(open_page: Any, tmp_path: Path) -> None:
    app = create_app(app="ln2", settings=settings_for(tmp_path, lang="zh-CN"))
    with running_server(app) as base:
        p = open_page(base, "zh-CN")
        assert p.page.evaluate("document.documentElement.lang") == "zh-CN"
        _ask_and_approve(p, tmp_path, first=1, keyboard=True)
        assert "已执行" in p.text(".plan-status")


def test_the_ambiguous_request_in_english_then_switching_to_chinese(open_page: Any, tmp_path: Path) -> None:
    app = create_app(app="ln2", settings=settings_for(tmp_path, lang="en"))
    with running_server(app) as base:
        p = open_page(base, "en")
        _ask_and_approve(p, tmp_path, first=11, keyboard=False)
        assert "Applied" in p.text(".plan-status")

        p.page.select_option("#lang", "zh-CN")
        zh = catalog("zh-CN")
        p.page.locator("html[lang=zh-CN]").wait_for(state="attached")
        # the conversation was drawn again, in Chinese (in the transcript: the audit panel's applied rollback has the
        # same class, and whether it is still drawn when the language changes is a race)
        p.page.locator("#transcript .plan-status.applied").wait_for()
        assert p.text("#send") == zh["web.chat.send"]
        assert zh["web.plan.applied"].split("：")[0] in p.text("#transcript .plan-status")
        assert p.text(".card.question.closed h3") == zh["web.question.title"]
        assert p.page.get_attribute("#prompt", "placeholder") == zh["web.chat.placeholder"]
        assert p.text("#tube h3") == zh["ln2.web.tube.title"] and zh["ln2.web.tube.field.short_name"] in p.text("#tube")
        assert p.text(".tab.active, .tab[aria-selected=true]").startswith(zh["ln2.web.grid.box"].format(box=2))
        p.shot("18-switched-to-chinese")
        p.page.reload()
        p.page.wait_for_selector("body[data-ready=true]")
        assert p.text("#send") == zh["web.chat.send"]  # the choice is remembered


def test_a_reloaded_page_still_has_its_question(open_page: Any, tmp_path: Path) -> None:
    app = create_app(app="ln2", settings=settings_for(tmp_path))
    with running_server(app) as base:
        p = open_page(base, "en")
        p.page.fill("#prompt", AMBIGUOUS)
        p.page.click("#send")
        p.page.locator(".question-form").wait_for()
        p.page.reload()
        p.page.wait_for_selector("body[data-ready=true]")
        form = p.page.locator(".question-form")
        form.wait_for()
        assert p.page.locator(".msg.user").count() == 1 and p.page.locator(".question-form").count() == 1
        p.page.locator(".question-form select:focus").wait_for()  # focus is on the form again
        assert p.page.is_disabled("#send") and p.page.is_visible("#stop")
        p.shot("25-reloaded-question")
        p.page.click("#stop")
        p.page.locator(".card.question.closed").wait_for()
        p.page.locator(".note.muted").wait_for()
        assert p.page.is_enabled("#send")


def test_cancel_tells_the_model_question_cancelled(open_page: Any, tmp_path: Path) -> None:
    script = tmp_path / "cancel.json"
    script.write_text(
        json.dumps(
            {
                "steps": [
                    {
                        "tool_calls": [
                            {
                                "name": "question",
                                "args": {
                                    "questions": [
                                        {
                                            "header": "细胞系",
                                            "question": "取哪一种K562？",
                                            "options": ["K562-WT", "K562-dTAG-BRD4"],
                                        },
                                    ]
                                },
                            }
                        ]
                    },
                    # the person wrote Chinese (the seed's request): the reply is Chinese (the language check)
                    {"text": "好的，我不会取出任何管子。"},
                ]
            }
        ),
        encoding="utf-8",
    )
    app = create_app(app="ln2", settings=settings_for(tmp_path, script))
    with running_server(app) as base:
        p = open_page(base, "en")
        form = p.ask_ambiguous()
        p.shot("21-question-to-cancel")
        form.locator("button[type=button]").click()
        p.page.locator(".card.question.closed").wait_for()
        assert p.text(".card.question.closed .closed-note") == p.t["web.question.cancelled"]
        # the reply streams in as a draft first: wait for the whole of it
        p.page.locator(".msg.agent:not(.draft)", has_text="好的，我不会取出任何管子。").wait_for()
        assert p.text(".msg.agent:not(.draft)") == "好的，我不会取出任何管子。"
        p.shot("22-cancelled")
        store = app.state.host.store
        (ask,) = [a for a in store.list_asks(status=None) if a.kind == "question"]
        assert ask.status == "cancelled" and ask.outcome["error_code"] == "question_cancelled"
        _, conversation = store.load_checkpoint(ask.run_id)
        assert "question_cancelled" in conversation  # what the model was told


def test_a_question_that_times_out_says_so(open_page: Any, tmp_path: Path) -> None:
    app = create_app(app="ln2", settings=settings_for(tmp_path, lang="zh-CN"), options={"question_timeout": 1.0})
    with running_server(app) as base:
        p = open_page(base, "zh-CN")
        p.ask_ambiguous()
        note = p.page.locator(".closed-note.timed_out")
        note.wait_for()
        assert note.inner_text() == p.t["web.question.timeout"] == "未在时限内回答：助手已在没有答复的情况下继续。"
        p.shot("31-question-timed-out")


def test_the_question_form_follows_the_questions_schema(open_page: Any, tmp_path: Path) -> None:
    script = tmp_path / "kinds.json"
    script.write_text(
        json.dumps(
            {
                "steps": [
                    {
                        "tool_calls": [
                            {
                                "name": "question",
                                "args": {
                                    "questions": [
                                        {
                                            "header": "Cell Line",
                                            "question": "Which K562?",
                                            "options": ["K562-WT", "K562-dTAG-BRD4"],
                                        },
                                        {
                                            "header": "Boxes",
                                            "question": "Which boxes may I use?",
                                            "options": ["1", "2", "3"],
                                            "multiple": True,
                                        },
                                        {"header": "Note", "question": "Anything to write in the note?"},
                                    ]
                                },
                            }
                        ]
                    },
                    {"text": "Thanks."},
                ]
            }
        ),
        encoding="utf-8",
    )
    app = create_app(app="ln2", settings=settings_for(tmp_path, script))
    with running_server(app) as base:
        p = open_page(base, "en")
        form = p.ask_ambiguous("Take out one K562 tube")
        assert form.locator("select").count() == 1  # single choice
        assert form.locator("fieldset input[type=checkbox]").count() == 3  # multiple
        labels = form.locator(".field > label[for], legend").all_inner_texts()
        assert labels == [
            "Cell Line: Which K562?",
            "Boxes: Which boxes may I use?",
            "Note: Anything to write in the note?",
        ]
        other = form.locator("input[type=text][id$=-other]")
        assert other.is_hidden()
        form.locator("select").select_option("__other__")  # free text is an answer too
        assert other.is_visible() and p.page.evaluate("document.activeElement.id").endswith("-other")
        other.fill("K562 from Tom's box")
        form.locator("label.check", has_text="1").locator("input").check()
        form.locator("label.check", has_text="3").locator("input").check()
        form.locator("input[type=text]:not([id$=-other])").fill("for the CRISPR screen")
        p.shot("41-question-kinds")
        form.locator("input[type=text]:not([id$=-other])").press("Enter")  # Enter in the form answers it
        p.page.locator(".card.question.closed").wait_for()
        p.page.locator(".msg.agent").wait_for()
        (ask,) = app.state.host.store.list_asks(status=None)
        assert ask.answer == ["K562 from Tom's box", ["1", "3"], "for the CRISPR screen"]
        assert "Boxes: 1, 3" in p.text(".card.question.closed")
        p.shot("42-question-kinds-answered")


def test_a_test_only_app_gets_its_page_and_the_next_agents_reply(open_page: Any, tmp_path: Path) -> None:
    """The probe app (tests/frontends/probe): its panel mounted by its own script over its own route; a request runs
    the planner, and the page follows the host's hand-over into the speaker's run, then after a reload too."""
    from ..probe import PROBE, write_script

    settings = settings_for(tmp_path, write_script(tmp_path))
    with running_server(create_app(app=PROBE, settings=settings, options={"motto": "onwards"})) as base:
        p = open_page(base, "en")
        assert p.text("#probe-motto") == "onwards" and p.text("h1") == "probe" and p.page.title() == "probe · Consulta"
        assert p.page.evaluate("document.body.dataset.probeMounted") == "true"
        p.page.fill("#prompt", "hello")
        p.page.press("#prompt", "Enter")
        # `.first`: while the page follows the hand-over, the reply's stream and the reply may both be on the page for
        # a moment; that it is shown once is asserted when the turn has ended
        p.page.locator(".msg.agent", has_text="Spoken!").first.wait_for()
        wait_for(lambda: not p.page.is_visible("#stop"), what="the turn to end")
        wait_for(lambda: p.page.locator(".msg.agent").count() == 1, what="the reply shown once")
        # The person reads their message and the speaker's reply: not the planner's note, not the speaker's prompt.
        assert [m.strip() for m in p.page.locator(".msg.user").all_inner_texts()] == ["hello"]
        assert [m.strip() for m in p.page.locator(".msg.agent").all_inner_texts()] == ["Spoken!"]
        assert (
            p.page.locator(".tool .tool-name", has_text="note").count() == 1
        )  # the planner's work shows as its tool call
        p.page.fill("#prompt", "again")  # the next turn continues the planner's conversation, not the speaker's
        p.page.press("#prompt", "Enter")
        wait_for(lambda: p.page.locator(".msg.agent", has_text="Spoken!").count() == 2, what="the second turn's reply")
        wait_for(lambda: not p.page.is_visible("#stop"), what="the second turn to end")
        assert [m.strip() for m in p.page.locator(".msg.user").all_inner_texts()] == ["hello", "again"]
        assert [m.strip() for m in p.page.locator(".msg.agent").all_inner_texts()] == ["Spoken!", "Spoken!"]
        store = Store(settings.database_url)
        first, _, second, _ = sorted(store.list_runs(app="probe"), key=lambda r: r.created_at)
        store.close()
        assert (first.prompt, second.prompt, second.parent_run_id) == ("hello", "again", first.id)
        wait_for(lambda: not p.page.is_visible("#stop"), what="the turn to end")
        p.page.reload()
        p.page.wait_for_selector("body[data-ready=true]")
        p.page.locator(".msg.agent", has_text="Spoken!").wait_for()
        shown = p.page.locator(".msg.agent").all_inner_texts()
        if hasattr(
            first, "agent"
        ):  # runs record their agent: the newest turn's thread, each run followed by its hand-over
            wait_for(lambda: p.page.locator(".msg.agent", has_text="Spoken!").count() == 2, what="both turns restored")
            wait_for(
                lambda: all(
                    v for v in p.page.evaluate("[...document.querySelectorAll('.msg')].map((m) => m.innerText)")
                ),
                what="the bubbles",
            )
            assert [m.strip() for m in p.page.locator(".msg.user").all_inner_texts()] == ["hello", "again"]
            assert [m.strip() for m in p.page.locator(".msg.agent").all_inner_texts()] == ["Spoken!", "Spoken!"]
            order = p.page.evaluate("[...document.querySelectorAll('.msg')].map((m) => m.innerText.trim())")
            assert order == ["hello", "Spoken!", "again", "Spoken!"]
        else:  # older records: the newest run's thread alone
            assert [m.strip() for m in shown] == ["Spoken!"]
        assert p.errors == []


LONG_REPLY = (
    "Here is a longer answer that arrives on the page word by word, so that you can read it while it is written."
)


def test_a_reply_streams_onto_the_page_before_the_run_ends(open_page: Any, tmp_path: Path) -> None:
    """The speaker's words appear one by one in a bubble marked as being written, while the run still goes on; the
    reply then takes the bubble's place. The planner's words (its run hands over) never stay on the page."""
    from ..probe import PLANNER, PROBE, SPEAKER

    script = tmp_path / "streaming.json"
    steps = [{"tool_calls": [{"name": "note", "args": {"text": "hello"}}]}, {"text": "planned"}]
    agents = [{"when": PLANNER, "steps": steps}, {"when": SPEAKER, "steps": [{"text": LONG_REPLY}]}]
    script.write_text(json.dumps({"word_delay_s": 0.15, "agents": agents}), encoding="utf-8")
    with running_server(create_app(app=PROBE, settings=settings_for(tmp_path, script))) as base:
        p = open_page(base, "en")
        p.page.fill("#prompt", "hello")
        p.page.press("#prompt", "Enter")
        draft = p.page.locator(".msg.agent.draft", has_text="longer answer")
        draft.wait_for()
        partial = draft.inner_text().strip()
        assert p.page.is_visible("#stop")  # the run is still going: these are its first words, not its reply
        assert LONG_REPLY.startswith(partial) and len(partial) < len(LONG_REPLY)
        p.shot("streaming-01-draft")
        p.page.locator(".msg.agent:not(.draft)", has_text="while it is written.").wait_for()
        wait_for(lambda: not p.page.is_visible("#stop"), what="the turn to end")
        assert [m.strip() for m in p.page.locator(".msg.agent").all_inner_texts()] == [LONG_REPLY]
        assert p.page.locator(".msg.agent.draft").count() == 0
        p.shot("streaming-02-reply")
