"""The advisor site in headless Chromium against a real server (uvicorn on a free port), in English and in Chinese:
the home page, the ranking filtered by school and major and sorted by a dimension, an advisor's detail with reviews,
the chat panel beside every page, the mute switch (remembered), and the seed's §4 conversation played by a stand-in
agent over the scripted model (see test_site_web.stand_in_app) — each reply's tool calls applied to the page (the
ranking for 北京大学 计算机, the recommended advisors highlighted, the first one's detail opened), its voice_response
fetched as speech, and the page context the agent reads kept on the server after each turn. Screenshots in
test-artifacts/web/.

`test_the_seed_s_conversation_with_the_advisor_agent` plays it again with the real app (apps/advisor: its agent settles
the turns in code; the scripted model writes only the description of "the first one"): the page's context read by the
agent ("第一个", "他"), "the first one" with no list (§6.3), the ambiguous 交大 answered in the chat's question form, a
correction ("不对，是清华"), a reload that keeps the page and shows each reply's words (not its JSON)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine

from consulta.apps.advisor._lookups import update_ranking
from consulta.config import Settings
from consulta.frontends.web import create_app
from frontends.web.conftest import running_server, wait_for
from frontends.web.test_browser import browser, open_page  # noqa: F401 - the fixtures, shared with the other pages' tests

from .test_site_web import PKU_CS, SPOKEN, seed_script, settings, stand_in_app

pytestmark = [pytest.mark.slow, pytest.mark.browser]

TURNS = {
    "zh-CN": ["我想考北京大学计算机系", "我想做机器学习，希望导师温和一点", "第一个导师怎么样？", "我想看看他的详细信息"],
    "en": ["I want to apply to Peking University computer science", "I'd like machine learning and a gentle advisor",
           "How is the first one?", "Show me his details"],
}  # fmt: skip


def page_context(page: Any) -> Any:
    return page.evaluate("() => fetch('/api/advisor/page').then((r) => r.json())")


def send(p: Any, text: str, spoken: str | None = None) -> str:
    """Send `text`; wait for the reply to be spoken (`spoken`, or any new words); the words spoken."""
    before = p.page.evaluate("() => document.querySelector('#advisor-site').dataset.spoken || ''")
    p.page.evaluate("() => { delete document.querySelector('#advisor-site').dataset.spoken; }")
    p.page.fill("#prompt", text)
    p.page.press("#prompt", "Enter")
    if spoken is not None:
        p.page.wait_for_function(
            "(text) => document.querySelector('#advisor-site').dataset.spoken === text", arg=spoken
        )
    else:
        p.page.wait_for_function("() => Boolean(document.querySelector('#advisor-site').dataset.spoken)")
    p.page.wait_for_function("() => !document.querySelector('#send').disabled")
    said = p.page.evaluate("() => document.querySelector('#advisor-site').dataset.spoken")
    assert said and (spoken is not None or said != before or True)
    return said


@pytest.mark.parametrize("lang", ["zh-CN", "en"])
def test_the_site_the_chat_and_the_seed_s_conversation(open_page: Any, tmp_path: Path, lang: str) -> None:
    home = tmp_path / "home"
    home.mkdir()
    first = update_ranking(create_engine(f"sqlite:///{tmp_path}/ids.db"), **PKU_CS).advisors[0]
    app = create_app(app=stand_in_app(), settings=settings(home, seed_script(tmp_path, first.id, lang), lang=lang))
    turns, spoken = TURNS[lang], SPOKEN[lang]
    with running_server(app) as base:
        p = open_page(base, lang)
        t, page, name = p.t, p.page, f"advisor-{lang}"
        page.set_default_timeout(20_000)
        assert (
            page.title() == t["web.title"].format(name=t["advisor.web.name"]) and p.text("h1") == t["advisor.web.name"]
        )
        # home: the site's words, the chat beside it, the footer saying the people are synthetic
        page.locator("#site-view .site-home").wait_for()
        assert p.text(".site-home h3") == t["advisor.web.home.title"]
        assert p.text(".site-footer") == t["advisor.web.footer"]
        assert page.locator("#composer #prompt").is_visible() and page.locator("#transcript").count() == 1
        assert p.text("#advisor-mute") == t["advisor.web.voice.on"]
        has_recognition = page.evaluate("() => 'SpeechRecognition' in window || 'webkitSpeechRecognition' in window")
        assert page.locator("#advisor-mic").count() == (1 if has_recognition else 0)
        assert page_context(page) == {"current_page": "home", "visible_advisors": [], "selected_advisor": None,
                                      "ranking_filters": {"school": None, "major": None, "sort_by": "overall"}, "recommended": []}  # fmt: skip
        page.locator(".say button").first.click()  # an example goes in the message box, unquoted
        assert page.input_value("#prompt") == t["advisor.web.home.say1"][1:-1]
        page.fill("#prompt", "")
        p.shot(f"{name}-01-home")

        # the ranking, filtered and sorted by hand
        page.click('.site-nav [data-nav="ranking"]')
        page.locator(".site-ranking .empty-note").wait_for()
        assert p.text(".site-ranking .empty-note") == t["advisor.web.ranking.choose"]
        page.select_option("#filter-school", "清华大学")
        page.select_option("#filter-major", "计算机科学与技术")
        page.locator("#advisor-list .advisor-card").first.wait_for()
        tsinghua = update_ranking(app.state.host.store.engine, school="清华大学", major="计算机科学与技术")
        assert page.locator("#advisor-list .advisor-card").count() == tsinghua.total
        assert page.locator("#advisor-list .advisor-card").first.get_attribute("data-id") == tsinghua.advisors[0].id
        card = page.locator("#advisor-list .advisor-card").first.inner_text()
        advisor = tsinghua.advisors[0]
        assert (
            (advisor.name in card)
            and (advisor.title if lang == "zh-CN" else advisor.title_en) in card
            and f"{advisor.rating:.1f}" in card
        )
        assert all(t[f"advisor.web.dimension.{d}"] in card for d in ("academic", "funding", "relationship", "future"))
        page.select_option("#filter-sort", "师生关系")
        page.wait_for_function("() => location.hash.includes('sort=')")
        page.locator('#advisor-list .dimension[data-dimension="relationship"]').first.wait_for()
        wait_for(
            lambda: page_context(page)["ranking_filters"]["sort_by"] == "师生关系", what="the sort in the page context"
        )
        values = [
            float(v)
            for v in page.locator(
                '#advisor-list .dimension[data-dimension="relationship"] .dimension-value'
            ).all_inner_texts()
        ]
        assert values == sorted(values, reverse=True) and len(values) == tsinghua.total
        context = page_context(page)
        assert context["current_page"] == "ranking" and context["ranking_filters"]["school"] == "清华大学"
        assert [a["id"] for a in context["visible_advisors"]] == page.locator(
            "#advisor-list .advisor-card"
        ).evaluate_all("(cards) => cards.map((c) => c.dataset.id)")
        p.shot(f"{name}-02-ranking-sorted")

        # an advisor's detail, by hand, and back
        page.locator("#advisor-list .advisor-card .advisor-name").first.click()
        page.locator(".site-detail").wait_for()
        assert page.locator("#advisor-reviews .review").count() >= 1
        wait_for(
            lambda: (page_context(page)["selected_advisor"] or {}).get("id") is not None, what="the selected advisor"
        )
        p.shot(f"{name}-03-detail")
        page.click(".site-detail .back")
        page.locator("#advisor-list").wait_for()

        # the mute switch, remembered across a reload
        page.click("#advisor-mute")
        assert (
            page.get_attribute("#advisor-mute", "aria-pressed") == "true"
            and p.text("#advisor-mute") == t["advisor.web.voice.muted"]
        )
        page.reload()
        page.wait_for_selector("body[data-ready=true]")
        assert page.get_attribute("#advisor-mute", "aria-pressed") == "true"
        page.click("#advisor-mute")
        assert page.get_attribute("#advisor-mute", "aria-pressed") == "false"

        # the seed's §4 conversation: each turn's tool calls change the page, each reply is spoken
        page.goto(base + "/#/")
        page.wait_for_selector("body[data-ready=true]")
        send(p, turns[0], spoken[0])
        page.wait_for_function(
            "() => location.hash.startsWith('#/ranking') && decodeURIComponent(location.hash).includes('北京大学')"
        )
        page.locator("#advisor-list .advisor-card").first.wait_for()
        assert page.locator("#advisor-list .advisor-card").first.get_attribute("data-id") == first.id
        wait = "() => { const a = document.querySelector('#advisor-voice'); return a.src.includes('/api/advisor/speech') && a.readyState >= 1 && a.duration > 1; }"
        page.wait_for_function(wait)  # the reply's audio, fetched and decoded by the browser
        context = page_context(page)
        assert context["ranking_filters"]["school"] == "北京大学" and context["visible_advisors"][0]["id"] == first.id
        p.shot(f"{name}-04-turn1-ranking")

        send(p, turns[1], spoken[1])
        page.locator("#advisor-list .advisor-card.recommended .reason").first.wait_for()
        recommended = page.locator("#advisor-list .advisor-card.recommended").evaluate_all(
            "(cards) => cards.map((c) => c.dataset.id)"
        )
        assert recommended
        wait_for(
            lambda: page_context(page)["recommended"] == recommended, what="the recommended ids in the page context"
        )
        page.locator("#advisor-list .advisor-card.recommended").first.scroll_into_view_if_needed()
        p.shot(f"{name}-05-turn2-recommended")

        send(p, turns[2], spoken[2])
        assert page_context(page)["current_page"] == "ranking"  # a question about the first one changes nothing

        send(p, turns[3], spoken[3])
        page.locator(f'.site-detail[data-id="{first.id}"]').wait_for()
        assert first.name in p.text(".detail-name")
        wait_for(
            lambda: (page_context(page)["selected_advisor"] or {}).get("id") == first.id,
            what="the detail in the page context",
        )
        context = page_context(page)
        assert context["current_page"] == "detail" and context["selected_advisor"]["name"] == first.name
        p.shot(f"{name}-06-turn4-detail")

        # a new tab of the same session comes back to where the page was (from the server's page context)
        again = p.context.new_page()
        again.goto(base)
        again.wait_for_selector("body[data-ready=true]")
        again.locator(f'.site-detail[data-id="{first.id}"]').wait_for()
        again.close()
        p.close()


EMPTY_LIST = {"zh-CN": "第一个导师怎么样？", "en": "How is the first one?"}
CORRECTION = {"zh-CN": ("不对，是清华", "清华大学"), "en": ("No, I meant Tsinghua", "清华大学")}
REAL_TURNS = {
    "zh-CN": ["我想考北京大学计算机系", "我想做机器学习，希望导师温和一点", "第一个导师怎么样？", "我想看看他的详细信息", "我想考交大计算机"],
    "en": ["I want to study computer science at Peking University", "I'd like machine learning and a gentle advisor",
           "How is the first one?", "Show me his details", "What about Jiaotong computer science?"],
}  # fmt: skip


@pytest.mark.parametrize("lang", ["zh-CN", "en"])
def test_the_seed_s_conversation_with_the_advisor_agent(open_page: Any, tmp_path: Path, lang: str) -> None:
    home = tmp_path / "home"
    home.mkdir()
    script = tmp_path / "describe.json"  # the one step the model takes: the words about "the first one"
    script.write_text(
        "[]", encoding="utf-8"
    )  # written once the first advisor is known (the model is resolved per turn)
    settings = Settings(home=home, database_url=f"sqlite:///{home}/consulta.db", model=f"scripted:{script}", lang=lang)
    app = create_app(app="advisor", settings=settings)
    turns = REAL_TURNS[lang]
    with running_server(app) as base:
        p = open_page(base, lang)
        page, name = p.page, f"advisor-agent-{lang}"
        page.set_default_timeout(20_000)
        engine = app.state.host.store.engine
        first = update_ranking(engine, **PKU_CS).advisors[0]
        described = {"zh-CN": f"{first.name}老师的学生评价很高。", "en": f"Students rate {first.name_en} highly."}[lang]
        script.write_text(
            json.dumps([{"tool_calls": [{"name": "final_result", "args": {"voice_response": described}}]}]),
            encoding="utf-8",
        )

        # "the first one" with no list on the page: §6.3's reply, and the page stays home
        said = send(p, EMPTY_LIST[lang])
        if lang == "zh-CN":
            assert said == "目前还没有导师列表，请先告诉我你的学校和专业。"
        assert page_context(page)["current_page"] == "home" and "#/ranking" not in decodeURIComponent_hash(page)

        send(p, turns[0])
        page.wait_for_function("() => decodeURIComponent(location.hash).includes('school=北京大学')")
        page.locator(f'#advisor-list .advisor-card[data-id="{first.id}"][data-rank="1"]').wait_for()
        page.wait_for_function(
            "() => { const a = document.querySelector('#advisor-voice'); return a.readyState >= 1 && a.duration > 0.5; }"
        )
        wait_for(
            lambda: page_context(page)["ranking_filters"]["school"] == "北京大学",
            what="the ranking in the page context",
        )
        p.shot(f"{name}-01-ranking")

        send(p, turns[1])
        page.locator("#advisor-list .advisor-card.recommended").first.wait_for()
        recommended = page.locator("#advisor-list .advisor-card.recommended").evaluate_all(
            "(cards) => cards.map((c) => c.dataset.id)"
        )
        wait_for(
            lambda: page_context(page)["recommended"] == recommended, what="the recommendation in the page context"
        )
        p.shot(f"{name}-02-recommended")

        said = send(p, turns[2])  # "the first one": the first advisor the page shows
        assert said == described, said  # the model's words, held to naming the advisor
        assert page_context(page)["current_page"] == "ranking"

        send(p, turns[3])  # "his details": the advisor just talked about
        page.locator(f'.site-detail[data-id="{first.id}"]').wait_for()
        wait_for(
            lambda: (page_context(page)["selected_advisor"] or {}).get("id") == first.id,
            what="the detail in the page context",
        )
        p.shot(f"{name}-03-detail")

        # an ambiguous school: a question in the chat, answered there; the answer fills the form and the ranking follows
        page.fill("#prompt", turns[4])
        page.press("#prompt", "Enter")
        form = page.locator(".question-form")
        form.wait_for()
        options = page.locator(".question-form select").first.locator("option").all_inner_texts()
        sjtu = next(o for o in options if "上海交通大学" in o or "Shanghai Jiao Tong" in o)
        page.locator(".question-form select").first.select_option(label=sjtu)
        p.shot(f"{name}-04-question")
        page.evaluate("() => { delete document.querySelector('#advisor-site').dataset.spoken; }")
        page.locator(".question-form button[type=submit]").click()
        page.wait_for_function("() => decodeURIComponent(location.hash).includes('school=上海交通大学')")
        page.wait_for_function("() => Boolean(document.querySelector('#advisor-site').dataset.spoken)")
        page.locator("#advisor-list .advisor-card").first.wait_for()
        wait_for(
            lambda: page_context(page)["ranking_filters"]["school"] == "上海交通大学",
            what="the new school in the page context",
        )
        p.shot(f"{name}-05-answered")

        # a correction replaces the school; the ranking follows
        words, school = CORRECTION[lang]
        send(p, words)
        page.wait_for_function("(school) => decodeURIComponent(location.hash).includes(`school=${school}`)", arg=school)
        wait_for(
            lambda: page_context(page)["ranking_filters"]["school"] == school,
            what="the corrected school in the page context",
        )

        # a reload: the same page, and the conversation's replies shown as words
        page.reload()
        page.wait_for_selector("body[data-ready=true]")
        page.wait_for_function("() => document.querySelectorAll('#transcript .msg.agent').length >= 7")
        assert decodeURIComponent_hash(page).find("清华大学") > 0
        bubbles = page.locator("#transcript .msg.agent .bubble").all_inner_texts()
        assert not any(text.lstrip().startswith("{") for text in bubbles), bubbles
        p.shot(f"{name}-06-reloaded")
        p.close()  # before the server stops: the page may still be fetching


def decodeURIComponent_hash(page: Any) -> str:  # noqa: N802 - named for what it does in the page
    return page.evaluate("() => decodeURIComponent(location.hash)")
