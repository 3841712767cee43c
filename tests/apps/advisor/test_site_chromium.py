"""The advisor site in headless Chromium against a real server (uvicorn on a free port), in English and in Chinese:
the home page, the ranking filtered by school and major and sorted by a dimension, an advisor's detail with reviews,
the chat panel beside every page, the mute switch (remembered), and the seed's §4 conversation played by a stand-in
agent over the scripted model (see test_site_web.stand_in_app) — each reply's tool calls applied to the page (the
ranking for 北京大学 计算机, the recommended advisors highlighted, the first one's detail opened), its voice_response
fetched as speech, and the page context the agent reads kept on the server after each turn. Screenshots in
test-artifacts/web/.

The seed's conversation with the real agent (form, names, references) needs apps/advisor/_app.py: it is left to the
tests of the agent (tests/apps/advisor/test_conversation.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine

from consulta.apps.advisor._lookups import update_ranking
from consulta.frontends.web import create_app
from frontends.web.conftest import running_server, wait_for
from frontends.web.test_browser import browser, open_page  # noqa: F401 - the fixtures, shared with the other pages' tests

from .test_site_web import PKU_CS, SPOKEN, seed_script, settings, stand_in_app

pytestmark = pytest.mark.slow

TURNS = {
    "zh-CN": ["我想考北京大学计算机系", "我想做机器学习，希望导师温和一点", "第一个导师怎么样？", "我想看看他的详细信息"],
    "en": ["I want to apply to Peking University computer science", "I'd like machine learning and a gentle advisor",
           "How is the first one?", "Show me his details"],
}  # fmt: skip


def page_context(page: Any) -> Any:
    return page.evaluate("() => fetch('/api/advisor/page').then((r) => r.json())")


def send(p: Any, text: str, spoken: str) -> None:
    p.page.fill("#prompt", text)
    p.page.press("#prompt", "Enter")
    p.page.wait_for_function("(text) => document.querySelector('#advisor-site').dataset.spoken === text", arg=spoken)
    p.page.wait_for_function("() => !document.querySelector('#send').disabled")


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
        assert page.title() == t["advisor.web.title"] and p.text("h1") == t["advisor.web.name"]
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
        assert (advisor.name in card) and (advisor.title if lang == "zh-CN" else advisor.title_en) in card and f"{advisor.rating:.1f}" in card
        assert all(t[f"advisor.web.dimension.{d}"] in card for d in ("academic", "funding", "relationship", "future"))
        page.select_option("#filter-sort", "师生关系")
        page.wait_for_function("() => location.hash.includes('sort=')")
        page.locator('#advisor-list .dimension[data-dimension="师生关系"]').first.wait_for()
        wait_for(lambda: page_context(page)["ranking_filters"]["sort_by"] == "师生关系", what="the sort in the page context")
        values = [float(v) for v in page.locator('#advisor-list .dimension[data-dimension="师生关系"] .dimension-value').all_inner_texts()]
        assert values == sorted(values, reverse=True) and len(values) == tsinghua.total
        context = page_context(page)
        assert context["current_page"] == "ranking" and context["ranking_filters"]["school"] == "清华大学"
        assert [a["id"] for a in context["visible_advisors"]] == page.locator("#advisor-list .advisor-card").evaluate_all("(cards) => cards.map((c) => c.dataset.id)")
        p.shot(f"{name}-02-ranking-sorted")

        # an advisor's detail, by hand, and back
        page.locator("#advisor-list .advisor-card .advisor-name").first.click()
        page.locator(".site-detail").wait_for()
        assert page.locator("#advisor-reviews .review").count() >= 1
        wait_for(lambda: (page_context(page)["selected_advisor"] or {}).get("id") is not None, what="the selected advisor")
        p.shot(f"{name}-03-detail")
        page.click(".site-detail .back")
        page.locator("#advisor-list").wait_for()

        # the mute switch, remembered across a reload
        page.click("#advisor-mute")
        assert page.get_attribute("#advisor-mute", "aria-pressed") == "true" and p.text("#advisor-mute") == t["advisor.web.voice.muted"]
        page.reload()
        page.wait_for_selector("body[data-ready=true]")
        assert page.get_attribute("#advisor-mute", "aria-pressed") == "true"
        page.click("#advisor-mute")
        assert page.get_attribute("#advisor-mute", "aria-pressed") == "false"

        # the seed's §4 conversation: each turn's tool calls change the page, each reply is spoken
        page.goto(base + "/#/")
        page.wait_for_selector("body[data-ready=true]")
        send(p, turns[0], spoken[0])
        page.wait_for_function("() => location.hash.startsWith('#/ranking') && decodeURIComponent(location.hash).includes('北京大学')")
        page.locator("#advisor-list .advisor-card").first.wait_for()
        assert page.locator("#advisor-list .advisor-card").first.get_attribute("data-id") == first.id
        wait = "() => { const a = document.querySelector('#advisor-voice'); return a.src.includes('/api/advisor/speech') && a.readyState >= 1 && a.duration > 1; }"
        page.wait_for_function(wait)  # the reply's audio, fetched and decoded by the browser
        context = page_context(page)
        assert context["ranking_filters"]["school"] == "北京大学" and context["visible_advisors"][0]["id"] == first.id
        p.shot(f"{name}-04-turn1-ranking")

        send(p, turns[1], spoken[1])
        page.locator("#advisor-list .advisor-card.recommended .reason").first.wait_for()
        recommended = page.locator("#advisor-list .advisor-card.recommended").evaluate_all("(cards) => cards.map((c) => c.dataset.id)")
        assert recommended
        wait_for(lambda: page_context(page)["recommended"] == recommended, what="the recommended ids in the page context")
        page.locator("#advisor-list .advisor-card.recommended").first.scroll_into_view_if_needed()
        p.shot(f"{name}-05-turn2-recommended")

        send(p, turns[2], spoken[2])
        assert page_context(page)["current_page"] == "ranking"  # a question about the first one changes nothing

        send(p, turns[3], spoken[3])
        page.locator(f'.site-detail[data-id="{first.id}"]').wait_for()
        assert first.name in p.text(".detail-name")
        wait_for(lambda: (page_context(page)["selected_advisor"] or {}).get("id") == first.id, what="the detail in the page context")
        context = page_context(page)
        assert context["current_page"] == "detail" and context["selected_advisor"]["name"] == first.name
        p.shot(f"{name}-06-turn4-detail")

        # a new tab of the same session comes back to where the page was (from the server's page context)
        again = p.context.new_page()
        again.goto(base)
        again.wait_for_selector("body[data-ready=true]")
        again.locator(f'.site-detail[data-id="{first.id}"]').wait_for()
        again.close()
        assert not p.errors, p.errors
