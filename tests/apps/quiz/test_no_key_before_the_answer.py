"""An examinee never sees a key before answering (issue 20, item 5). In the session of a test in progress, the two
requests that gave keys away — "score my answer <the item on screen>: x" (the first look called score_answers: the
run's events carried `correct_answer` / `correct_keywords`) and "give me 3 … questions" (the first look listed bank
items with `answer_summary`, the item on screen included) — are played through the web API with a scripted model
(a test double), and every body the test-taker can read (the runs, their events, the asks, the test) is searched
for the key, the expected keywords and the explanation of any bank item not answered in the test: none is there.
Once the item is answered in the test, scoring it is allowed again; another session (no test) is not held back."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from consulta.apps.quiz._cat_sessions import _Pool, test_sessions
from consulta.apps.quiz._db import questions
from consulta.frontends.web import create_app
from frontends.web.conftest import new_session, run_status, settings_for

from .conftest import submit, write_script
from .test_modes import SQL_MC as NEW_ITEM

PROFILE = {
    "self_level": "intermediate",
    "years_experience": 3,
    "job_role": "analyst",
    "duty": "reports",
    "interests": ["SQL"],
}
KEY_FIELDS = {"correct_answer", "correct_key", "correct_keywords", "answer_summary", "answer_schema", "explanation"}


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path


@pytest.fixture
def client(home: Path) -> Iterator[TestClient]:
    script = write_script(
        home / "script.json",
        generator=[submit(NEW_ITEM)],  # each run's first model step (after the refused scoring too)
    )
    with TestClient(create_app(app="quiz", settings=settings_for(home, script))) as test_client:
        yield test_client


def explanations(client: TestClient) -> list[str]:
    """Every bank item's explanation (a sentence only the key's owner writes)."""
    engine = client.app.state.host.store.engine  # type: ignore[attr-defined]
    with engine.connect() as conn:
        rows = conn.execute(select(questions.c.explanation).where(questions.c.source == "bank")).scalars().all()
    return [e for e in rows if e and len(e) >= 20]


def key_of(client: TestClient, question_id: str) -> list[str]:
    """The item's key or expected keywords."""
    engine = client.app.state.host.store.engine  # type: ignore[attr-defined]
    with engine.connect() as conn:
        row = conn.execute(select(questions).where(questions.c.id == question_id)).mappings().one()
    return [row["correct_key"]] if row["correct_key"] else json.loads(row["correct_keywords"] or "[]")


def readable(client: TestClient, who: dict[str, str], run_ids: list[str]) -> list[Any]:
    """What the test-taker can read of these runs: each run, its events, its asks."""
    seen: list[Any] = []
    for run_id in run_ids:
        seen.append(client.get(f"/api/runs/{run_id}", headers=who).json())
        events = client.get(f"/api/runs/{run_id}/events?follow=false", headers=who).text
        seen += [json.loads(line[5:]) for line in events.splitlines() if line.startswith("data:")]
        seen.append(client.get("/api/asks", headers=who, params={"run_id": run_id, "status": "all"}).json())
    return seen


def key_fields(value: Any, found: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
    if isinstance(value, dict):
        for k, v in value.items():
            if k in KEY_FIELDS and v not in (None, "", []):
                found.append((k, v))
            key_fields(v, found)
    elif isinstance(value, list):
        for v in value:
            key_fields(v, found)
    return found


def turn(client: TestClient, who: dict[str, str], prompt: str) -> str:
    run = client.post("/api/runs", headers=who, json={"prompt": prompt}).json()
    run_status(client, who, run["id"], "finished", "failed")
    return run["id"]


def test_no_key_of_an_unanswered_item_reaches_the_test_taker(home: Path, client: TestClient) -> None:
    alice = new_session(client)
    test = client.post("/api/quiz/tests", headers=alice, json={"profile": PROFILE, "lang": "en"}).json()
    shown = test["item"]
    assert not key_fields(test, [])

    scored = turn(client, alice, f"score my answer {shown['question_id']}: x")
    generated = turn(client, alice, "give me 3 technical questions about SQL at level 5")
    seen = readable(client, alice, [scored, generated])
    seen.append(client.get("/api/quiz/tests/current", headers=alice).json())
    text = json.dumps(seen, ensure_ascii=False)

    calls = client.app.state.host.store.list_tool_calls(scored)  # type: ignore[attr-defined]
    refusal = next(c.result for c in calls if c.tool_name == "score_answers")
    assert refusal["ok"] is False and refusal["error_code"] == "in_test", refusal
    assert not any(c.tool_name == "score_and_explain" for c in calls)  # nothing scored, no key handed to tool 6

    # no key field of a bank item anywhere (the generated item's own key is the model's, checked apart)
    leaked = [(k, v) for k, v in key_fields(seen, []) if NEW_ITEM["correct_key"] not in json.dumps(v)]
    leaked = [(k, v) for k, v in leaked if NEW_ITEM["explanation"] not in json.dumps(v)]
    assert leaked == [], leaked[:5]
    assert [e for e in explanations(client) if e in text] == []
    if shown["item_type"] == "short_answer":  # an MC or TF key is among the choices shown; keywords are not
        assert [k for k in key_of(client, shown["question_id"]) if f'"{k}"' in text] == []


def test_after_the_answer_the_item_may_be_scored_and_others_are_not_held(home: Path, client: TestClient) -> None:
    alice, bob = new_session(client), new_session(client)
    test = client.post("/api/quiz/tests", headers=alice, json={"profile": PROFILE, "lang": "en"}).json()
    shown = test["item"]
    answer = (shown["choices"] or ["x"])[0] if shown["item_type"] != "true_false" else "True"
    body = {"position": shown["position"], "question_id": shown["question_id"], "answer": answer}
    assert client.post(f"/api/quiz/tests/{test['id']}/answers", headers=alice, json=body).status_code == 200
    calls = client.app.state.host.store.list_tool_calls(  # type: ignore[attr-defined]
        turn(client, alice, f"score my answer {shown['question_id']}: x")
    )
    assert any(c.tool_name == "score_and_explain" for c in calls)  # answered in the test: its feedback is due
    calls = client.app.state.host.store.list_tool_calls(  # type: ignore[attr-defined]
        turn(client, bob, "give me 3 technical questions about SQL at level 5")
    )
    templates = next(c.result for c in calls if c.tool_name == "search_question_templates")
    assert templates and all("correct_answer" in e for e in templates)  # no test in progress: as the seed says


def test_an_item_generated_during_the_test_is_never_shown_in_it(home: Path, client: TestClient) -> None:
    """Its key was in the reply that saved it: the test's pool leaves it out (the bank's items stay in)."""
    alice = new_session(client)
    test = client.post("/api/quiz/tests", headers=alice, json={"profile": PROFILE, "lang": "en"}).json()
    turn(client, alice, "give me 3 technical questions about SQL at level 5")
    engine = client.app.state.host.store.engine  # type: ignore[attr-defined]
    with engine.connect() as conn:
        (made,) = conn.execute(select(questions.c.id).where(questions.c.stem == NEW_ITEM["stem"])).scalars().all()
        started = conn.execute(select(test_sessions.c.created_at).where(test_sessions.c.id == test["id"])).scalar_one()
        assert made in _Pool.read(conn, "en").index  # a test started now may show it
        during = _Pool.read(conn, "en", started_at=started)
        assert made not in during.index and test["item"]["question_id"] in during.index
