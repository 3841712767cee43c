"""The adaptive test on the web API (FastAPI TestClient, the app's lifespan, a store on a temp home): a session sets
up a profile, takes a test one item at a time to the end (θ ± SE, the plot, the review), and comes back to the item
shown after a restart; a test is its session's only; errors are the structured body in the reader's language and
change nothing; the routes are in the OpenAPI document."""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import create_engine

from consulta.apps import AppDef, AppView, TerminalPart
from consulta.apps.quiz._cat import CatRules
from consulta.apps.quiz._cat_sessions import TestSessions
from consulta.apps.quiz._web import web_part
from consulta.config import Settings
from consulta.frontends.web import create_app
from consulta.i18n import t
from consulta.runtime import Agent

from .test_cat_sessions import PROFILE, add_items, keyword_grader, right_answer, wrong_answer

RULES = CatRules(se_target=0.3, min_items=3, max_items=5, randomesque=3)


def sessions(host: AppView) -> TestSessions:
    return TestSessions(host.env.store.engine, rules=RULES, short_answers=keyword_grader)


def _tester(options: Any, env: Any) -> Agent:
    return Agent(
        app="quiz",
        name="tester",
        instructions="You are the quiz tester.",
        tools=(),
        options=options.model_dump(mode="json"),
    )


def quiz_app(*, terminal: TerminalPart | None = None) -> AppDef:
    """quiz as these tests serve it: a minimal AppDef with the take parts (the real one is wired by the coordinator)."""
    app = AppDef(name="quiz", description="adaptive tests", agents={"tester": _tester}, main_agent="tester")
    return dataclasses.replace(app, web=lambda: web_part(sessions=sessions), terminal=terminal or TerminalPart())


def settings(home: Path, lang: str = "en") -> Settings:
    return Settings(home=home, database_url=f"sqlite:///{home}/consulta.db", model="scripted:none", lang=lang)


def with_bank(home: Path) -> None:
    engine = create_engine(f"sqlite:///{home}/consulta.db")
    add_items(engine, "en")
    add_items(engine, "zh-CN")
    engine.dispose()


@pytest.fixture
def home(tmp_path: Path) -> Path:
    with_bank(tmp_path)
    return tmp_path


@pytest.fixture
def http(home: Path) -> Iterator[TestClient]:
    with TestClient(create_app(app=quiz_app(), settings=settings(home))) as client:
        yield client


def session_of(client: TestClient) -> dict[str, str]:
    token = client.post("/api/sessions").json()["token"]
    return {"Authorization": f"Bearer {token}"}


def start(http: TestClient, who: dict[str, str], lang: str = "en", **extra: Any) -> dict[str, Any]:
    response = http.post("/api/quiz/tests", json={"profile": PROFILE, "lang": lang, **extra}, headers=who)
    assert response.status_code == 201, response.text
    return response.json()


def engine_of(home: Path) -> Any:
    return create_engine(f"sqlite:///{home}/consulta.db")


def send(http: TestClient, who: dict[str, str], test: dict[str, Any], answer: str, **changes: Any) -> Any:
    item = test["item"]
    body = {"position": item["position"], "question_id": item["question_id"], "answer": answer, **changes}
    return http.post(f"/api/quiz/tests/{test['id']}/answers", json=body, headers=who)


def test_a_person_takes_a_test_on_the_web(http: TestClient, home: Path) -> None:
    alice = session_of(http)
    assert http.get("/api/quiz/tests/current", headers=alice).json() is None
    assert http.get("/api/quiz/profile", headers=alice).json() == {"profile": None}
    test = start(http, alice, "zh-CN")
    assert test["status"] == "in_progress" and test["item"]["position"] == 1 and "correct_key" not in test["item"]
    assert http.get("/api/quiz/profile", headers=alice).json()["profile"]["interests"] == ["SQL", "statistics"]
    engine = engine_of(home)
    answers = 0
    while test["status"] == "in_progress":
        qid = test["item"]["question_id"]
        answer = right_answer(engine, qid) if answers % 2 == 0 else wrong_answer(engine, qid)
        result = send(http, alice, test, answer)
        assert result.status_code == 200, result.text
        body = result.json()
        assert body["feedback"]["is_correct"] == (answers % 2 == 0) and body["feedback"]["explanation"]
        answers += 1
        test = body["session"]
    assert test["status"] == "finished" and test["answered"] == answers and len(test["review"]) == answers
    assert test["stop_reason"] in ("se_target", "max_items")
    plot = http.get(f"/api/quiz/tests/{test['id']}/plot.svg", headers=alice)
    assert plot.status_code == 200 and plot.headers["content-type"].startswith("image/svg+xml")
    assert t("quiz.take.plot.y", "zh-CN") in plot.text and plot.text.count("<circle") == answers + 1
    assert http.get("/api/quiz/tests/current", headers=alice).json() is None
    assert http.get(f"/api/quiz/tests/{test['id']}", headers=alice).json()["review"] == test["review"]
    engine.dispose()


def test_a_test_is_its_sessions_own(http: TestClient) -> None:
    alice, bob = session_of(http), session_of(http)
    test = start(http, alice)
    for method, path, body in (
        ("GET", f"/api/quiz/tests/{test['id']}", None),
        ("GET", f"/api/quiz/tests/{test['id']}/plot.svg", None),
        ("POST", f"/api/quiz/tests/{test['id']}/abandon", None),
        (
            "POST",
            f"/api/quiz/tests/{test['id']}/answers",
            {"position": 1, "question_id": test["item"]["question_id"], "answer": "x"},
        ),
    ):
        response = http.request(method, path, json=body, headers=bob)
        assert response.status_code == 404 and response.json()["error_code"] == "unknown_test", (path, response.text)
    assert http.get("/api/quiz/tests/current", headers=bob).json() is None
    http.cookies.clear()
    assert http.get("/api/quiz/tests/current").status_code == 401
    assert http.get("/api/quiz/tests/current", headers=alice).json() == test


def test_errors_are_structured_in_the_readers_language_and_change_nothing(http: TestClient, home: Path) -> None:
    alice = session_of(http)
    bad = http.post(
        "/api/quiz/tests?lang=zh-CN", json={"profile": {**PROFILE, "years_experience": 99}, "lang": "en"}, headers=alice
    )
    assert bad.status_code == 422
    assert bad.json() == {"error_code": "invalid_profile", "message": "个人资料的“工作年限”：请填 0 到 60 之间的整数。"}
    assert http.get("/api/quiz/tests/current", headers=alice).json() is None
    test = start(http, alice)
    again = http.post("/api/quiz/tests", json={"profile": PROFILE}, headers=alice)
    assert again.status_code == 409 and again.json()["error_code"] == "test_in_progress"
    engine = engine_of(home)
    key = right_answer(engine, test["item"]["question_id"])
    wrong_item = send(http, alice, test, key, position=2)
    assert wrong_item.status_code == 409 and wrong_item.json()["error_code"] == "not_current_item"
    assert wrong_item.json()["message"] == t("quiz.take.error.not_current_item", "en", position=1)
    empty = send(
        http,
        alice,
        test,
        "  ",
    )
    assert empty.status_code == 422 and empty.json()["error_code"] == "empty_answer"
    malformed = http.post(f"/api/quiz/tests/{test['id']}/answers", json={"position": "first"}, headers=alice)
    assert malformed.status_code == 422 and malformed.json()["error_code"] == "invalid_request"
    assert http.get("/api/quiz/tests/current", headers=alice).json() == test  # nothing changed
    first = send(http, alice, test, key).json()
    repeated = send(http, alice, test, key).json()
    assert repeated["repeated"] and repeated["feedback"] == first["feedback"] and repeated["session"]["answered"] == 1
    other = send(http, alice, test, wrong_answer(engine, test["item"]["question_id"]))
    assert other.status_code == 409 and other.json()["error_code"] == "already_answered"
    replaced = start(http, alice, replace_open=True)
    assert http.get(f"/api/quiz/tests/{test['id']}", headers=alice).json()["status"] == "abandoned"
    assert http.get("/api/quiz/tests/current", headers=alice).json()["id"] == replaced["id"]
    engine.dispose()


def test_the_test_continues_after_the_server_restarts(home: Path) -> None:
    app = quiz_app()
    with TestClient(create_app(app=app, settings=settings(home))) as http:
        alice = session_of(http)
        test = start(http, alice)
        engine = engine_of(home)
        test = send(http, alice, test, right_answer(engine, test["item"]["question_id"])).json()["session"]
    with TestClient(create_app(app=app, settings=settings(home))) as http:  # a new server on the same store
        current = http.get("/api/quiz/tests/current", headers=alice).json()
        assert current == test and current["item"]["position"] == 2 and current["answered"] == 1
        result = send(http, alice, current, right_answer(engine, current["item"]["question_id"]))
        assert result.status_code == 200 and result.json()["session"]["answered"] == 2
    engine.dispose()


def test_the_page_has_the_quiz_panel_and_the_routes_are_documented(http: TestClient) -> None:
    page = http.get("/")
    assert 'id="quiz-profile"' in page.text and 'data-app-script="/apps/quiz/static/app.js"' in page.text
    assert "export function mount" in http.get("/apps/quiz/static/app.js").text
    paths = http.get("/openapi.json").json()["paths"]
    for path in (
        "/api/quiz/profile",
        "/api/quiz/tests",
        "/api/quiz/tests/current",
        "/api/quiz/tests/{test_id}",
        "/api/quiz/tests/{test_id}/answers",
        "/api/quiz/tests/{test_id}/abandon",
        "/api/quiz/tests/{test_id}/plot.svg",
    ):
        assert path in paths, path
    answer_doc = paths["/api/quiz/tests/{test_id}/answers"]["post"]
    assert {"404", "409", "422"} <= set(answer_doc["responses"])


def test_the_quiz_app_with_the_shipped_bank_and_tool_6_grading_short_answers(tmp_path: Path) -> None:
    """quiz's own AppDef with the take parts wired as the coordinator wires them: the shipped bank, in Chinese, and a
    short answer graded through seed tool 6 (`score_and_explain`) on the scripted judge model."""
    from consulta.apps.quiz import APP, bank_items
    from consulta.apps.quiz._take_cli import commands

    from .conftest import write_script

    app = dataclasses.replace(APP, web=web_part, terminal=dataclasses.replace(APP.terminal, commands=commands))
    script = write_script(tmp_path / "judge.json")
    home = tmp_path / "home"
    home.mkdir()
    config = Settings(home=home, database_url=f"sqlite:///{home}/consulta.db", model=f"scripted:{script}", lang="zh-CN")
    shipped = {item.stem: item for item in bank_items() if item.lang == "zh-CN"}
    with TestClient(create_app(app=app, settings=config)) as http:
        alice = session_of(http)
        test = start(http, alice, "zh-CN")
        assert test["max_items"] == 20  # the app's rules; the shipped bank is level-derived, and the test says so:
        assert test["level_derived_items"] == 1 and test["calibrated_items"] == 0 and test["se_target"] == 0.45
        graded_short = False
        while test["status"] == "in_progress":
            item = test["item"]
            bank_item = shipped[item["stem"]]  # every item comes from the shipped bank, in the person's language
            answer = {
                "multiple_choice": bank_item.answer,
                "true_false": "true" if bank_item.answer == "True" else "false",
            }.get(item["item_type"], " ".join(bank_item.keywords or []))
            body = send(http, alice, test, answer).json()
            feedback = body["feedback"]
            if item["item_type"] == "short_answer":
                graded_short = True
                assert feedback["graded_by"] == "model" and len(feedback["grader_explanation"]) >= 500
            else:
                assert feedback["graded_by"] == "code" and feedback["is_correct"]
            test = body["session"]
        assert test["status"] == "finished" and test["theta"] > 1.0
        assert graded_short or all(r["item"]["item_type"] != "short_answer" for r in test["review"])


def test_short_answers_are_graded_by_tool_6_on_the_model(tmp_path: Path) -> None:
    import asyncio

    from consulta.apps.quiz._cat_sessions import model_short_answers
    from consulta.models import resolve_model

    from ._scripts import short_answer
    from .conftest import write_script

    script = write_script(tmp_path / "judge.json")
    grade = model_short_answers(lambda: resolve_model(f"scripted:{script}"))
    request = short_answer(
        session_id="s1",
        user_id=str(uuid.uuid4()),
        question_id=str(uuid.uuid4()),
        answer="An index speeds up look-ups",
        keywords=["index"],
        category="technical",
        stem="What makes a lookup by a column fast?",
        topic="SQL indexes",
    )
    scored = asyncio.run(grade(request))
    assert scored.graded_by == "model" and scored.score >= 80 and scored.is_correct  # the verdict: correct
    assert scored.explanation and len(scored.explanation) >= 500  # tool 6's explanation, with its references
    missed = asyncio.run(grade(dataclasses.replace(request, answer="No idea at all")))
    # the test double's verdict is certain ("correct" with probability 1): code's evidence is reported beside it
    assert missed.graded_by == "model" and missed.explanation and "index" in missed.explanation
