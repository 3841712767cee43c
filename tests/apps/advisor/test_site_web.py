"""The advisor site's web routes (TestClient over the real front end): the catalog, the ranking (filters, sort, bad
names refused), an advisor's detail and reviews (unknown id: 404), recommendations, the page context kept per session
(validated: names come from the data; an unknown id changes nothing; another session does not see it), and speech.

The site is served here by a stand-in app (`stand_in_app`): the advisor's web part with an agent over the scripted
model whose tools are the site's look-ups — the real agent is built elsewhere (apps/advisor/_app.py)."""

# (No `from __future__ import annotations`: the stand-in's tools are read by pydantic-ai from their annotations.)

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from consulta.apps import AppDef, AppEnv, AppOptions
from consulta.apps.advisor._lookups import update_ranking
from consulta.apps.advisor._web import web_part
from consulta.config import Settings
from consulta.frontends.web import create_app
from consulta.runtime import Agent, ToolDef
from frontends.web.conftest import new_session

STAND_IN = "You are the advisor site's stand-in agent."


def stand_in_app() -> AppDef:
    """An app named advisor serving the site, its agent's tools the site's look-ups (over the store's engine)."""

    def build(options: AppOptions, env: AppEnv) -> Agent:
        from consulta.apps.advisor import _lookups

        engine = env.store.engine

        def update_ranking(school: str, major: str) -> dict[str, Any]:
            """Rank the advisors of a school's major."""
            ranking = _lookups.update_ranking(engine, school=school, major=major, limit=5)
            return {"ok": True, "advisors": [{"id": a.id, "name": a.name, "rank": a.rank} for a in ranking.advisors]}

        def recommend_advisors(school: str, major: str, preferences: dict[str, str]) -> dict[str, Any]:
            """Recommend advisors of a school's major for preferences."""
            found = _lookups.recommend_advisors(engine, school=school, major=major, preferences=preferences)
            return {"ok": True, "advisors": [{"id": a.id, "name": a.name, "reason": a.reason} for a in found.advisors]}

        def get_advisor_detail(advisor_id: str) -> dict[str, Any]:
            """An advisor's detail."""
            detail = _lookups.get_advisor_detail(engine, advisor_id=advisor_id)
            return {"ok": True, "name": detail.name, "rating": detail.rating}

        tools = tuple(
            ToolDef(name=f.__name__, function=f, description=f.__doc__ or "")
            for f in (update_ranking, recommend_advisors, get_advisor_detail)
        )
        return Agent(
            app="advisor", name="advisor", instructions=STAND_IN, tools=tools, options=options.model_dump(mode="json")
        )

    return AppDef(
        name="advisor",
        description="the advisor site (test stand-in agent)",
        agents={"advisor": build},
        main_agent="advisor",
        web=web_part,
    )


def reply(voice: str, *calls: tuple[str, dict[str, Any]]) -> str:
    """The seed's output: {voice_response, tool_calls}."""
    return json.dumps(
        {"voice_response": voice, "tool_calls": [{"tool": tool, "params": params} for tool, params in calls]},
        ensure_ascii=False,
    )


SPOKEN = {
    "zh-CN": ["好的，北京大学计算机系。正在为你筛选导师...", "根据你的需求，我推荐这几位导师。", "第一位导师学生评价很高。", "好的，这是他的详细信息。"],
    "en": ["Okay, Peking University computer science. Finding advisors...", "For what you want, I recommend these advisors.",
           "The first advisor is rated highly by students.", "Sure, here are his details."],
}  # fmt: skip
"""The stand-in's replies in the seed's §4 conversation, by language."""


def seed_script(folder: Path, first_id: str, lang: str = "zh-CN") -> Path:
    """The seed's §4 conversation, scripted: ranking, recommendation, the first one, his detail."""
    said = SPOKEN[lang]
    pku_cs = {"school": "北京大学", "major": "计算机科学与技术"}
    prefs = {"research_direction": "机器学习", "personality": "温和"}
    turns = [
        [{"tool_calls": [{"name": "update_ranking", "args": pku_cs}]},
         {"text": reply(said[0], ("update_form", pku_cs), ("update_ranking", pku_cs))}],
        [{"tool_calls": [{"name": "recommend_advisors", "args": {**pku_cs, "preferences": prefs}}]},
         {"text": reply(said[1], ("update_form", {"preferences": prefs}), ("recommend_advisors", {**pku_cs, "preferences": prefs}))}],
        [{"text": reply(said[2])}],
        [{"tool_calls": [{"name": "get_advisor_detail", "args": {"advisor_id": first_id}}]},
         {"text": reply(said[3], ("get_advisor_detail", {"advisor_id": first_id}))}],
    ]  # fmt: skip
    path = folder / "advisor_site_script.json"
    path.write_text(json.dumps({"turns": turns}, ensure_ascii=False), encoding="utf-8")
    return path


def settings(home: Path, script: Path | None = None, *, lang: str = "zh-CN") -> Settings:
    script = script or seed_script(home, "10001")
    return Settings(home=home, database_url=f"sqlite:///{home}/consulta.db", model=f"scripted:{script}", lang=lang)


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    with TestClient(create_app(app=stand_in_app(), settings=settings(tmp_path))) as test_client:
        yield test_client


@pytest.fixture
def alice(client: TestClient) -> dict[str, str]:
    return new_session(client)


def refused(response: Any, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body = response.json()
    assert body["error_code"] == code and body["message"], body
    return body


PKU_CS = {"school": "北京大学", "major": "计算机科学与技术"}


def test_the_page_carries_the_site(client: TestClient) -> None:
    page = client.get("/")
    assert page.status_code == 200
    assert (
        'id="advisor-site"' in page.text
        and "/apps/advisor/static/app.js" in page.text
        and "/apps/advisor/static/app.css" in page.text
    )
    assert client.get("/apps/advisor/static/app.js").status_code == 200


def test_every_route_needs_a_session(client: TestClient) -> None:
    for path in (
        "/api/advisor/catalog",
        "/api/advisor/ranking?school=北京大学&major=数学",
        "/api/advisor/page",
        "/api/advisor/speech?text=你好",
    ):
        refused(client.get(path), 401, "no_session")


def test_the_catalog_lists_every_school_with_its_majors(client: TestClient, alice: dict[str, str]) -> None:
    catalog = client.get("/api/advisor/catalog", headers=alice).json()
    assert len(catalog["schools"]) == 34 and len(catalog["majors"]) == 29
    assert catalog["dimensions"] == ["学术水平", "科研经费", "师生关系", "学生前途"]
    assert all("计算机科学与技术" in s["majors"] for s in catalog["schools"])
    assert catalog["advisors"] >= 300 and catalog["reviews"] > catalog["advisors"]


def test_the_ranking_is_filtered_and_sorted(client: TestClient, alice: dict[str, str]) -> None:
    ranking = client.get("/api/advisor/ranking", params={**PKU_CS, "sort_by": "师生关系"}, headers=alice).json()
    assert (
        ranking["school"] == "北京大学"
        and ranking["sort_by"] == "师生关系"
        and ranking["total"] == len(ranking["advisors"]) > 0
    )
    values = [a["ratings"]["师生关系"] for a in ranking["advisors"]]
    assert values == sorted(values, reverse=True)
    assert [a["rank"] for a in ranking["advisors"]] == list(range(1, len(values) + 1))
    assert {a["school"] for a in ranking["advisors"]} == {"北京大学"}
    refused(
        client.get("/api/advisor/ranking", params={**PKU_CS, "school": "北京野鸡大学"}, headers=alice),
        422,
        "unknown_school",
    )
    refused(
        client.get("/api/advisor/ranking", params={**PKU_CS, "major": "炼金术"}, headers=alice), 422, "unknown_major"
    )
    refused(
        client.get("/api/advisor/ranking", params={**PKU_CS, "sort_by": "颜值"}, headers=alice), 422, "invalid_sort_by"
    )
    refused(client.get("/api/advisor/ranking", params={**PKU_CS, "limit": 0}, headers=alice), 422, "invalid_request")


def test_an_advisor_s_detail_and_reviews(client: TestClient, alice: dict[str, str]) -> None:
    first = client.get("/api/advisor/ranking", params=PKU_CS, headers=alice).json()["advisors"][0]
    detail = client.get(f"/api/advisor/advisors/{first['id']}", headers=alice).json()
    assert detail["name"] == first["name"] and detail["reviews"] and len(detail["reviews"]) <= 5
    reviews = client.get(f"/api/advisor/advisors/{first['id']}/reviews", params={"limit": 2}, headers=alice).json()
    assert reviews["total"] == first["review_count"] and len(reviews["reviews"]) == 2
    refused(client.get("/api/advisor/advisors/99999999", headers=alice), 404, "unknown_advisor")
    refused(client.get("/api/advisor/advisors/abc", headers=alice), 422, "invalid_request")
    refused(client.get("/api/advisor/advisors/99999999/reviews", headers=alice), 404, "unknown_advisor")


def test_recommendations_say_why(client: TestClient, alice: dict[str, str]) -> None:
    body = {**PKU_CS, "preferences": {"research_direction": "机器学习", "personality": "温和"}}
    found = client.post("/api/advisor/recommendations", json=body, headers=alice).json()
    assert found["advisors"] and all(a["reason"] and a["reason_en"] for a in found["advisors"])
    assert "personality" in found["advisors"][0]["matched"] or "research_direction" in found["advisors"][0]["matched"]
    refused(
        client.post("/api/advisor/recommendations", json={**body, "preferences": {"颜值": "高"}}, headers=alice),
        422,
        "invalid_request",
    )
    refused(
        client.post("/api/advisor/recommendations", json={**body, "school": "北大"}, headers=alice),
        422,
        "unknown_school",
    )


def test_the_page_context_is_kept_per_session_with_the_data_s_names(client: TestClient, alice: dict[str, str]) -> None:
    assert client.get("/api/advisor/page", headers=alice).json() is None
    first = client.get("/api/advisor/ranking", params=PKU_CS, headers=alice).json()["advisors"][0]
    context = {
        "current_page": "detail",
        "visible_advisors": [{"id": first["id"], "name": "伪造的名字", "title": "教授", "rating": 4.5, "rank": 1}],
        "selected_advisor": {"id": first["id"], "name": "伪造的名字"},
        "ranking_filters": PKU_CS,
    }
    kept = client.post("/api/advisor/page", json=context, headers=alice)
    assert kept.status_code == 200, kept.text
    assert (
        kept.json()["visible_advisors"][0]["name"] == first["name"]
        and kept.json()["selected_advisor"]["name"] == first["name"]
    )
    assert client.get("/api/advisor/page", headers=alice).json() == kept.json()
    bob = new_session(client)
    assert client.get("/api/advisor/page", headers=bob).json() is None
    # Bad contexts change nothing.
    for bad, status, code in (
        ({**context, "selected_advisor": {"id": "424242", "name": "x"}}, 404, "unknown_advisor"),
        ({**context, "selected_advisor": {"id": "no-such-id", "name": "x"}}, 422, "invalid_request"),
        ({**context, "ranking_filters": {"school": "哈佛大学", "major": "数学"}}, 422, "unknown_school"),
        ({**context, "current_page": "settings"}, 422, "invalid_request"),
        ({**context, "visible_advisors": [{"id": "1", "name": "x", "rank": 1}] * 51}, 422, "invalid_request"),
    ):
        refused(client.post("/api/advisor/page", json=bad, headers=alice), status, code)
    assert client.get("/api/advisor/page", headers=alice).json() == kept.json()
    assert client.delete("/api/advisor/page", headers=alice).status_code == 204
    assert client.get("/api/advisor/page", headers=alice).json() is None


def test_speech_is_a_wav(client: TestClient, alice: dict[str, str]) -> None:
    spoken = client.get(
        "/api/advisor/speech", params={"text": "好的，北京大学计算机系。", "lang": "zh-CN"}, headers=alice
    )
    assert spoken.status_code == 200 and spoken.headers["content-type"] == "audio/wav"
    assert spoken.content[:4] == b"RIFF" and spoken.content[8:12] == b"WAVE" and len(spoken.content) > 20_000
    posted = client.post("/api/advisor/speech", json={"text": "Okay.", "lang": "en"}, headers=alice)
    assert posted.status_code == 200 and posted.content[:4] == b"RIFF"
    refused(client.get("/api/advisor/speech", params={"text": "长" * 201}, headers=alice), 422, "invalid_request")
    refused(client.get("/api/advisor/speech", params={"text": "   "}, headers=alice), 422, "invalid_request")


def test_the_stand_in_s_tools_are_the_look_ups(tmp_path: Path) -> None:
    """The script's ids come from the data the site serves (the same deterministic catalog in any store)."""
    with TestClient(create_app(app=stand_in_app(), settings=settings(tmp_path))) as client:
        headers = new_session(client)
        first = client.get("/api/advisor/ranking", params=PKU_CS, headers=headers).json()["advisors"][0]
        engine = client.app.state.host.store.engine  # type: ignore[attr-defined]
        assert update_ranking(engine, **PKU_CS).advisors[0].id == first["id"]


def test_the_schema_names_what_is_valid(client: TestClient) -> None:
    """The API's docs list the schools, majors and sorts a request may name (a schema-valid request is accepted)."""
    schema = client.get("/openapi.json").json()
    ranking = {p["name"]: p["schema"] for p in schema["paths"]["/api/advisor/ranking"]["get"]["parameters"]}
    assert "北京大学" in ranking["school"]["enum"] and len(ranking["school"]["enum"]) == 34
    assert "计算机科学与技术" in ranking["major"]["enum"] and "师生关系" in ranking["sort_by"]["enum"]
    filters = schema["components"]["schemas"]["RankingFilters"]["properties"]
    assert None in filters["school"]["enum"] and "清华大学" in filters["school"]["enum"]


def test_the_page_context_outlives_the_server(tmp_path: Path) -> None:
    """Kept in the store: a restarted server gives the same session its page back (the page reopens there)."""
    context = {"current_page": "ranking", "ranking_filters": {**PKU_CS, "sort_by": "学生前途"}}
    with TestClient(create_app(app=stand_in_app(), settings=settings(tmp_path))) as client:
        token = client.post("/api/sessions").json()["token"]
        headers = {"Authorization": f"Bearer {token}"}
        kept = client.post("/api/advisor/page", json=context, headers=headers)
        assert kept.status_code == 200, kept.text
    with TestClient(create_app(app=stand_in_app(), settings=settings(tmp_path))) as client:
        assert client.get("/api/advisor/page", headers=headers).json() == kept.json()
