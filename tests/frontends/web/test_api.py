"""The JSON API over Starlette's TestClient with the scripted model: the ambiguous-request flow end to end, every
error status, sessions kept apart, and nothing changed by a request that fails."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from consulta.frontends.web import create_app

from .conftest import (
    AMBIGUOUS,
    inventory_path,
    new_session,
    pending_ask,
    rollback,
    run_status,
    settings_for,
    sha256,
    wait_for,
)

QUESTION_ONLY = {
    "turns": [
        [
            {
                "tool_calls": [
                    {
                        "name": "question",
                        "args": {
                            "questions": [
                                {
                                    "header": "Boxes",
                                    "question": "Which boxes?",
                                    "options": ["1", "2", "3"],
                                    "multiple": True,
                                },
                                {"header": "Note", "question": "Anything to add?"},
                            ]
                        },
                    }
                ]
            },
            {"text": "Noted."},
        ],
        [{"text": "Second turn."}],
    ]
}


def _script(tmp_path: Path, script: dict[str, Any]) -> Path:
    path = tmp_path / "script.json"
    path.write_text(json.dumps(script), encoding="utf-8")
    return path


def _cells(client: TestClient, headers: dict[str, str]) -> dict[tuple[int, int], int | None]:
    grid = client.get("/api/ln2/grid", headers=headers).json()
    return {(b["box"], c["position"]): c["record_id"] for b in grid["boxes"] for c in b["cells"]}


def test_the_ambiguous_request_end_to_end(client: TestClient, alice: dict[str, str], home: Path) -> None:
    inventory = inventory_path(home)
    original = inventory.read_bytes()
    assert _cells(client, alice)[(2, 1)] == 9

    response = client.post("/api/runs", json={"prompt": AMBIGUOUS, "lang": "zh-CN"}, headers=alice)
    assert response.status_code == 201
    run = response.json()
    assert run["status"] in ("running", "waiting") and run["lang"] == "zh-CN"

    question = pending_ask(client, alice, kind="question")
    assert question["run_id"] == run["id"]
    (asked,) = question["payload"]["questions"]
    assert asked["options"] == ["K562-WT", "K562-dTAG-BRD4", "K562-RTCB-KO-c3"]
    assert client.get(f"/api/asks/{question['id']}", headers=alice).json()["status"] == "pending"

    answered = client.post(f"/api/asks/{question['id']}/answer", json={"answers": ["K562-dTAG-BRD4"]}, headers=alice)
    assert answered.status_code == 200
    assert answered.json()["status"] == "answered"
    assert answered.json()["outcome"]["result"]["answers"] == ["Cell Line: K562-dTAG-BRD4"]

    plan = pending_ask(client, alice, kind="plan")
    (item,) = plan["payload"]["items"]
    assert item["op"]["record_id"] == 9 and item["op"]["positions"] == [1]
    assert "记录 9" in item["preview"]  # previews in the run's language
    assert inventory.read_bytes() == original  # staged, not written

    decided = client.post(f"/api/asks/{plan['id']}/answer", json={"decision": "approve"}, headers=alice)
    assert decided.status_code == 200
    finished = run_status(client, alice, run["id"], "finished")
    assert (
        finished["output"].startswith("已完成：") and "记录 9" in finished["output"]
    )  # said by code, from the plan applied
    assert inventory.read_bytes() != original
    assert _cells(client, alice)[(2, 1)] is None
    assert client.get("/api/ln2/boxes/2/positions/1", headers=alice).json()["record"] is None

    (entry,) = client.get("/api/ln2/audit", headers=alice).json()
    assert entry["op"] == "record_thaw" and entry["run_id"] == run["id"] and entry["actor"].startswith("web:")

    staged = client.post(f"/api/ln2/audit/{entry['audit_id']}/rollback", headers=alice)
    assert staged.status_code == 202  # a person's rollback is staged like any write: nothing is written yet
    proposal = staged.json()
    assert inventory.read_bytes() != original and len(client.get("/api/ln2/audit", headers=alice).json()) == 1
    ask = client.get(f"/api/asks/{proposal['ask_id']}", headers=alice).json()
    assert ask["kind"] == "plan" and ask["status"] == "pending" and ask["run_id"] == proposal["run_id"]
    assert ask["payload"]["items"][0]["op"] == {"op": "rollback", "audit_id": entry["audit_id"]}
    assert (
        client.post(f"/api/asks/{proposal['ask_id']}/answer", json={"decision": "approve"}, headers=alice).status_code
        == 200
    )
    rolled = run_status(client, alice, proposal["run_id"], "finished")
    assert rolled["output"] and inventory.read_bytes() == original
    assert _cells(client, alice)[(2, 1)] == 9
    assert client.get("/api/ln2/boxes/2/positions/1", headers=alice).json()["record"]["short_name"] == "K562-dTAG-BRD4"
    newest = client.get("/api/ln2/audit", headers=alice).json()[0]
    assert newest["op"] == "rollback" and newest["actor"] == entry["actor"] and newest["run_id"] == proposal["run_id"]
    assert [r["id"] for r in client.get("/api/runs", headers=alice).json()] == [proposal["run_id"], run["id"]]


def test_a_rejected_plan_changes_nothing(client: TestClient, alice: dict[str, str], home: Path) -> None:
    before = sha256(inventory_path(home))
    run = client.post("/api/runs", json={"prompt": AMBIGUOUS}, headers=alice).json()
    question = pending_ask(client, alice, kind="question")
    client.post(f"/api/asks/{question['id']}/answer", json={"answers": ["K562-dTAG-BRD4"]}, headers=alice)
    plan = pending_ask(client, alice, kind="plan")
    assert client.post(f"/api/asks/{plan['id']}/answer", json={"decision": "reject"}, headers=alice).status_code == 200
    run_status(client, alice, run["id"], "finished")
    assert sha256(inventory_path(home)) == before
    assert client.get("/api/ln2/audit", headers=alice).json() == []


def test_cancelling_a_question_tells_the_model_question_cancelled(tmp_path: Path) -> None:
    script = _script(
        tmp_path,
        {
            "steps": [
                {
                    "tool_calls": [
                        {
                            "name": "question",
                            "args": {
                                "questions": [{"header": "Cell Line", "question": "Which?", "options": ["A", "B"]}]
                            },
                        }
                    ]
                },
                {"text": "OK, nothing taken."},
            ]
        },
    )
    with TestClient(create_app(app="ln2", settings=settings_for(tmp_path, script))) as client:
        headers = new_session(client)
        run = client.post("/api/runs", json={"prompt": "take one K562"}, headers=headers).json()
        question = pending_ask(client, headers, kind="question")
        cancelled = client.post(f"/api/asks/{question['id']}/cancel", headers=headers)
        assert cancelled.status_code == 200
        assert cancelled.json()["status"] == "cancelled"
        assert cancelled.json()["outcome"]["error_code"] == "question_cancelled"
        assert run_status(client, headers, run["id"], "finished")["output"] == "OK, nothing taken."
        _, conversation = client.app.state.host.store.load_checkpoint(run["id"])
        assert "question_cancelled" in conversation  # what the model read
        assert client.post(f"/api/asks/{question['id']}/cancel", headers=headers).status_code == 409


def test_a_question_that_is_not_answered_in_time_times_out(tmp_path: Path) -> None:
    with TestClient(
        create_app(app="ln2", settings=settings_for(tmp_path), options={"question_timeout": 0.3})
    ) as client:
        headers = new_session(client)
        client.post("/api/runs", json={"prompt": AMBIGUOUS}, headers=headers)
        question = pending_ask(client, headers, kind="question")
        closed = wait_for(
            lambda: (
                (a := client.get(f"/api/asks/{question['id']}", headers=headers).json())["status"] != "pending" and a
            )
        )
        assert closed["status"] == "timed_out" and closed["outcome"]["error_code"] == "question_timeout"
        events = client.get(f"/api/runs/{question['run_id']}/events?follow=false", headers=headers).text
        assert '"type":"ask_closed"' in events and '"status":"timed_out"' in events
        assert client.get("/api/app").json()["question_timeout_s"] == 0.3


# ---- errors (no session, a made-up one, another session's: test_isolation.py) -------------------------------------


def test_routes_without_a_session(client: TestClient) -> None:
    assert client.get("/api/app").json()["app"] == "ln2"
    assert client.get("/api/i18n/zh-CN").json()["messages"]["ai.question.confirm"] == "确定"
    assert client.get("/api/i18n/zh").json()["lang"] == "zh-CN"
    en = client.get("/api/i18n/en").json()["messages"]
    assert en["ai.question.timeout"] == "Question timed out, agent will continue" and "web.chat.send" in en
    assert not any(k.startswith(("cli.", "col.")) for k in en)
    unknown = client.get("/api/i18n/fr")
    assert unknown.status_code == 404 and unknown.json()["error_code"] == "unknown_language"
    schema = client.get("/openapi.json").json()
    assert "/api/asks/{ask_id}/answer" in schema["paths"] and "AnswerBody" in schema["components"]["schemas"]
    docs = client.get("/docs")
    assert docs.status_code == 200
    assets = re.findall(r"""(?:src|href)=['"]([^'"]+)['"]""", docs.text)
    assert assets and not [a for a in assets if a.startswith(("http:", "https:", "//"))]  # no CDN: served here
    assert all(client.get(a).status_code == 200 for a in assets)
    missing = client.get("/api/nothing-here")
    assert missing.status_code == 404 and missing.json()["error_code"] == "not_found"


def test_the_page_sets_an_httponly_strict_session_cookie_the_api_accepts(client: TestClient) -> None:
    page = client.get("/")
    assert page.status_code == 200 and 'src="/static/js/main.js"' in page.text
    cookie = page.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Path=/" in cookie
    assert "default-src 'self'" in page.headers["content-security-policy"]
    assert client.get("/api/runs").status_code == 200  # the TestClient sends the cookie back
    assert "set-cookie" not in client.get("/").headers  # a session that has a cookie keeps it
    for asset in ("/static/js/main.js", "/static/css/app.css", "/static/icon.svg"):
        assert client.get(asset).status_code == 200


def test_unknown_ids_are_404(client: TestClient, alice: dict[str, str]) -> None:
    for method, path in [
        ("GET", "/api/runs/run_nope"),
        ("GET", "/api/runs/run_nope/events"),
        ("POST", "/api/runs/run_nope/stop"),
        ("GET", "/api/asks/ask_nope"),
        ("POST", "/api/asks/ask_nope/cancel"),
        ("GET", "/api/ln2/boxes/6/positions/1"),
        ("GET", "/api/ln2/boxes/1/positions/82"),
        ("POST", "/api/ln2/audit/a_999999/rollback"),
    ]:
        response = client.request(method, path, headers=alice)
        assert response.status_code == 404, path
        assert response.json()["error_code"] in ("not_found", "unknown_audit_entry") and response.json()["message"]
    answer = client.post("/api/asks/ask_nope/answer", json={"answers": ["x"]}, headers=alice)
    assert answer.status_code == 404
    assert client.post("/api/runs", json={"prompt": "x", "continue_from": "run_nope"}, headers=alice).status_code == 404
    assert client.get("/api/asks", params={"run_id": "run_nope"}, headers=alice).status_code == 404


def test_closed_asks_are_409(client: TestClient, alice: dict[str, str]) -> None:
    client.post("/api/runs", json={"prompt": AMBIGUOUS}, headers=alice)
    question = pending_ask(client, alice, kind="question")
    assert (
        client.post(f"/api/asks/{question['id']}/answer", json={"answers": ["K562-WT"]}, headers=alice).status_code
        == 200
    )
    for path, body in (("answer", {"answers": ["K562-WT"]}), ("cancel", None)):
        response = client.post(f"/api/asks/{question['id']}/{path}", json=body, headers=alice)
        assert response.status_code == 409
        assert response.json()["error_code"] == "conflict" and "already answered" in response.json()["message"]


def test_continuing_a_run_that_has_not_ended_is_409(tmp_path: Path) -> None:
    with TestClient(create_app(app="ln2", settings=settings_for(tmp_path, _script(tmp_path, QUESTION_ONLY)))) as client:
        headers = new_session(client)
        run = client.post("/api/runs", json={"prompt": "Which tube is the best one?"}, headers=headers).json()
        question = pending_ask(client, headers, kind="question")
        busy = client.post(
            "/api/runs", json={"prompt": "And the second best tube?", "continue_from": run["id"]}, headers=headers
        )
        assert busy.status_code == 409
        client.post(f"/api/asks/{question['id']}/answer", json={"answers": [["1", "3"], "none"]}, headers=headers)
        run_status(client, headers, run["id"], "finished")
        second = client.post(
            "/api/runs", json={"prompt": "And the second best tube?", "continue_from": run["id"]}, headers=headers
        )
        assert second.status_code == 201 and second.json()["parent_run_id"] == run["id"]
        assert second.json()["thread_id"] == run["thread_id"]
        assert run_status(client, headers, second.json()["id"], "finished")["output"] == "Second turn."


MALFORMED_QUESTION_ANSWERS: list[tuple[Any, str, str | None]] = [
    ({"answers": [["1", "4"], "x"]}, "invalid_answer", None),  # 4 is not one of the options
    ({"answers": [["1"]]}, "invalid_answer", None),  # one answer for two questions
    ({"answers": [["1"], ["a", "b"]]}, "invalid_answer", None),  # a list for a free-text question
    ({"answers": [["1"], 3]}, "invalid_request", "answers.1"),
    ({"answers": "1"}, "invalid_request", "answers"),
    ({"decision": "approve"}, "invalid_answer", "answers"),
    ({}, "invalid_request", None),  # neither answers nor decision: the schema asks for exactly one
    ({"answers": [["1"], "x"], "extra": True}, "invalid_request", "extra"),
    (b"{not json", "invalid_json", None),
    (b"[1, 2]", "invalid_request", None),
]


def test_malformed_answers_are_422_and_change_nothing(tmp_path: Path) -> None:
    with TestClient(create_app(app="ln2", settings=settings_for(tmp_path, _script(tmp_path, QUESTION_ONLY)))) as client:
        headers = new_session(client)
        run = client.post("/api/runs", json={"prompt": "Which tube is the best one?"}, headers=headers).json()
        question = pending_ask(client, headers, kind="question")
        path = f"/api/asks/{question['id']}/answer"
        for body, code, field in MALFORMED_QUESTION_ANSWERS:
            if isinstance(body, bytes):
                response = client.post(path, content=body, headers={**headers, "Content-Type": "application/json"})
            else:
                response = client.post(path, json=body, headers=headers)
            assert response.status_code == 422, body
            error = response.json()
            assert error["error_code"] == code, body
            assert error["message"] and error.get("field") == field, body
            assert client.get(path.removesuffix("/answer"), headers=headers).json()["status"] == "pending"
        assert (
            "not one of the options"
            in client.post(path, json={"answers": [["9"], ""]}, headers=headers).json()["message"]
        )
        assert client.get(f"/api/runs/{run['id']}", headers=headers).json()["status"] == "waiting"
        assert client.post(path, json={"answers": [["1", "3"], ""]}, headers=headers).status_code == 200


def test_a_malformed_plan_decision_is_422_and_changes_nothing(
    client: TestClient, alice: dict[str, str], home: Path
) -> None:
    before = sha256(inventory_path(home))
    client.post("/api/runs", json={"prompt": AMBIGUOUS}, headers=alice)
    question = pending_ask(client, alice, kind="question")
    client.post(f"/api/asks/{question['id']}/answer", json={"answers": ["K562-dTAG-BRD4"]}, headers=alice)
    plan = pending_ask(client, alice, kind="plan")
    for body in ({"decision": "maybe"}, {"answers": ["approve"]}, {"decision": "approve", "answers": ["x"]}, {}):
        response = client.post(f"/api/asks/{plan['id']}/answer", json=body, headers=alice)
        assert response.status_code == 422, body
        assert response.json()["message"]
    assert client.get(f"/api/asks/{plan['id']}", headers=alice).json()["status"] == "pending"
    assert sha256(inventory_path(home)) == before
    assert client.get("/api/ln2/audit", headers=alice).json() == []


def _one_change(client: TestClient, headers: dict[str, str]) -> dict[str, Any]:
    client.post("/api/runs", json={"prompt": AMBIGUOUS}, headers=headers)
    question = pending_ask(client, headers, kind="question")
    client.post(f"/api/asks/{question['id']}/answer", json={"answers": ["K562-dTAG-BRD4"]}, headers=headers)
    plan = pending_ask(client, headers, kind="plan")
    client.post(f"/api/asks/{plan['id']}/answer", json={"decision": "approve"}, headers=headers)
    run_status(client, headers, plan["run_id"], "finished")
    (entry,) = client.get("/api/ln2/audit", headers=headers).json()
    return entry


def test_a_rollback_that_cannot_apply_fails_and_changes_nothing(
    client: TestClient, alice: dict[str, str], home: Path
) -> None:
    entry = _one_change(client, alice)
    rollback(client, alice, entry["audit_id"])
    after = sha256(inventory_path(home))
    again = rollback(client, alice, entry["audit_id"])  # already in that state: approved, it fails at the apply
    failed = client.get(f"/api/runs/{again['run_id']}/events?follow=false", headers=alice).text
    assert '"status":"failed"' in failed and "invalid_argument" in failed
    assert client.get(f"/api/runs/{again['run_id']}", headers=alice).json()["output"].startswith("Not applied")
    assert sha256(inventory_path(home)) == after
    assert len(client.get("/api/ln2/audit", headers=alice).json()) == 2
    bad = client.post("/api/ln2/audit/..%2Fetc/rollback", headers=alice)
    assert bad.status_code in (404, 422)


def test_bad_run_requests_are_422(client: TestClient, alice: dict[str, str]) -> None:
    for body in (
        {},
        {"prompt": ""},
        {"prompt": "x" * 4001},
        {"prompt": "x", "lang": "fr"},
        {"prompt": "x", "model": "y"},
    ):
        response = client.post("/api/runs", json=body, headers=alice)
        assert response.status_code == 422, body
        assert response.json()["error_code"] == "invalid_request" and response.json()["field"]
    assert client.get("/api/runs", params={"limit": 0}, headers=alice).status_code == 422
    assert client.get("/api/asks", params={"status": "nope"}, headers=alice).status_code == 422
    assert client.get("/api/runs", headers=alice).json() == []


# ---- sessions -----------------------------------------------------------------------------------------------------


def test_sessions_see_and_answer_only_their_own_runs_and_asks(client: TestClient, alice: dict[str, str]) -> None:
    bob = new_session(client)
    run = client.post("/api/runs", json={"prompt": AMBIGUOUS}, headers=alice).json()
    question = pending_ask(client, alice, kind="question")

    assert client.get("/api/runs", headers=bob).json() == []
    assert client.get("/api/asks", headers=bob).json() == []
    assert client.get("/api/asks", params={"status": "all"}, headers=bob).json() == []
    foreign = [
        client.get(f"/api/runs/{run['id']}", headers=bob),
        client.get(f"/api/runs/{run['id']}/events?follow=false", headers=bob),
        client.post(f"/api/runs/{run['id']}/stop", headers=bob),
        client.get(f"/api/asks/{question['id']}", headers=bob),
        client.post(f"/api/asks/{question['id']}/answer", json={"answers": ["K562-WT"]}, headers=bob),
        client.post(f"/api/asks/{question['id']}/cancel", headers=bob),
        client.get("/api/asks", params={"run_id": run["id"]}, headers=bob),
        client.post("/api/runs", json={"prompt": "x", "continue_from": run["id"]}, headers=bob),
    ]
    assert [r.status_code for r in foreign] == [404] * len(foreign)
    # a foreign id reads exactly like an unknown one
    unknown = client.get("/api/asks/ask_000000000000", headers=bob).json()["message"]
    assert client.get(f"/api/asks/{question['id']}", headers=bob).json()["message"] == unknown.replace(
        "ask_000000000000", question["id"]
    )

    assert client.get(f"/api/asks/{question['id']}", headers=alice).json()["status"] == "pending"
    assert client.get(f"/api/runs/{run['id']}", headers=alice).json()["status"] == "waiting"
    assert [a["id"] for a in client.get("/api/asks", headers=alice).json()] == [question["id"]]


def test_stop_cancels_the_run_and_its_pending_question(client: TestClient, alice: dict[str, str]) -> None:
    run = client.post("/api/runs", json={"prompt": AMBIGUOUS}, headers=alice).json()
    question = pending_ask(client, alice, kind="question")
    stopped = client.post(f"/api/runs/{run['id']}/stop", headers=alice)
    assert stopped.status_code == 200 and stopped.json()["status"] == "cancelled"
    assert client.get(f"/api/asks/{question['id']}", headers=alice).json()["status"] == "cancelled"
    assert client.get("/api/asks", headers=alice).json() == []
    assert client.post(f"/api/runs/{run['id']}/stop", headers=alice).json()["status"] == "cancelled"  # idempotent


# ---- a person's rollback: staged, applied only on approval --------------------------------------------------------


@pytest.mark.parametrize("ending", ["reject", "stop", "time out"])
def test_a_rollback_not_approved_changes_nothing(tmp_path: Path, ending: str) -> None:
    options = {"question_timeout": 0.5 if ending == "time out" else 60}
    with TestClient(create_app(app="ln2", settings=settings_for(tmp_path), options=options)) as client:
        alice = new_session(client)
        entry = _one_change(client, alice)
        before = sha256(inventory_path(tmp_path))
        staged = client.post(
            f"/api/ln2/audit/{entry['audit_id']}/rollback", headers=alice, params={"lang": "zh-CN"}
        ).json()
        assert staged["previews"][0].startswith(f"回滚 {entry['audit_id']}")  # in the page's language
        run = client.get(f"/api/runs/{staged['run_id']}", headers=alice).json()
        assert run["status"] == "waiting" and run["agent"] == "person"
        if ending == "reject":
            client.post(f"/api/asks/{staged['ask_id']}/answer", json={"decision": "reject"}, headers=alice)
        elif ending == "stop":
            assert client.post(f"/api/runs/{staged['run_id']}/stop", headers=alice).json()["status"] == "cancelled"
        ended = run_status(client, alice, staged["run_id"], "finished", "cancelled")
        ask = client.get(f"/api/asks/{staged['ask_id']}", headers=alice).json()
        assert ask["status"] == {"reject": "answered", "stop": "cancelled", "time out": "timed_out"}[ending]
        events = client.get(f"/api/runs/{staged['run_id']}/events?follow=false", headers=alice).text
        assert '"type":"plan_decided"' in events and '"status":"applied"' not in events
        assert ended["status"] == ("cancelled" if ending == "stop" else "finished")
        assert (
            sha256(inventory_path(tmp_path)) == before and len(client.get("/api/ln2/audit", headers=alice).json()) == 1
        )


def test_a_rollback_staged_before_a_restart_is_applied_when_approved_after_it(tmp_path: Path) -> None:
    with TestClient(create_app(app="ln2", settings=settings_for(tmp_path))) as client:
        alice = new_session(client)
        entry = _one_change(client, alice)
        changed = sha256(inventory_path(tmp_path))
        staged = client.post(f"/api/ln2/audit/{entry['audit_id']}/rollback", headers=alice).json()
    with TestClient(create_app(app="ln2", settings=settings_for(tmp_path))) as client:  # the server restarted
        assert sha256(inventory_path(tmp_path)) == changed
        assert [a["id"] for a in client.get("/api/asks", headers=alice).json()] == [staged["ask_id"]]
        client.post(f"/api/asks/{staged['ask_id']}/answer", json={"decision": "approve"}, headers=alice)
        assert run_status(client, alice, staged["run_id"], "finished")["output"]
        assert sha256(inventory_path(tmp_path)) == entry["before_sha256"]
        newest = client.get("/api/ln2/audit", headers=alice).json()[0]
        assert newest["op"] == "rollback" and newest["run_id"] == staged["run_id"]
