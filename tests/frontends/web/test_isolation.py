"""Who may do what over HTTP: every /api route × the three ways a caller may not be the owner — another session
(foreign), a token this server never issued (made up), no token at all (missing). Sessions are issued, not guessed:
only tokens minted here are sessions, and a minted one keeps working after a restart. A run's and an ask's own
routes answer another session exactly like an unknown id; the app's shared data (ln2's inventory, its history and
rollbacks) is served to whom the app's `WebPart.shared_data` lets in, and a rollback only stages a plan of the
caller's own."""

from __future__ import annotations

import dataclasses
import hashlib
import secrets
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from consulta.apps import ln2
from consulta.frontends.web import create_app

from .conftest import AMBIGUOUS, inventory_path, new_session, pending_ask, settings_for, sha256

OPEN_ROUTES = {("POST", "/api/sessions"), ("GET", "/api/app"), ("GET", "/api/i18n/{lang}")}
"""The routes that need no session (the page's set-up)."""

Response = Any  # what the TestClient returns
Check = Callable[[Response], bool]


def _status(*codes: int) -> Check:
    return lambda response: response.status_code in codes


def _empty_list(response: Response) -> bool:
    return response.status_code == 200 and response.json() == []


FOREIGN: dict[tuple[str, str], Check] = {
    # A session's own runs and asks: another session's ids read exactly like unknown ones; its lists are its own.
    ("GET", "/api/runs"): _empty_list,
    ("POST", "/api/runs"): _status(404),  # continuing another session's run
    ("GET", "/api/runs/{run_id}"): _status(404),
    ("GET", "/api/runs/{run_id}/events"): _status(404),
    ("POST", "/api/runs/{run_id}/stop"): _status(404),
    ("GET", "/api/asks"): _empty_list,
    ("GET", "/api/asks/{ask_id}"): _status(404),
    ("POST", "/api/asks/{ask_id}/answer"): _status(404),
    ("POST", "/api/asks/{ask_id}/cancel"): _status(404),
    # ln2's shared data, which ln2 shares with every session this server issued (`shared_data="sessions"`); a
    # rollback is staged on the caller's own run, for the caller's own approval.
    ("GET", "/api/ln2/grid"): _status(200),
    ("GET", "/api/ln2/boxes/{box}/positions/{position}"): _status(200),
    ("GET", "/api/ln2/audit"): _status(200),
    ("POST", "/api/ln2/audit/{audit_id}/rollback"): _status(202),
}


def _seed_one_change(home: Path) -> str:
    """An inventory with one audited change (what an approved plan leaves), made before the server starts."""
    inventory_path(home).parent.mkdir(parents=True, exist_ok=True)
    path = ln2.default_inventory(inventory_path(home).parent)
    op = ln2.parse_op({"op": "record_thaw", "record_id": 9, "positions": [1], "date": "2026-01-05", "action": "thaw"})
    return ln2.apply_plan(path, [op], plan_id="plan_seed", actor="local").audit_ids[0]


@pytest.fixture
def world(home: Path) -> Iterator[dict[str, Any]]:
    """Alice's run waiting on her question, her staged rollback waiting on its approval, and the server."""
    audit_id = _seed_one_change(home)
    with TestClient(create_app(app="ln2", settings=settings_for(home))) as client:
        alice = new_session(client)
        run = client.post("/api/runs", json={"prompt": AMBIGUOUS}, headers=alice).json()
        question = pending_ask(client, alice, kind="question")
        staged = client.post(f"/api/ln2/audit/{audit_id}/rollback", headers=alice).json()
        yield {
            "client": client,
            "alice": alice,
            "run": run,
            "question": question,
            "staged": staged,
            "audit_id": audit_id,
        }


def _routes(client: TestClient) -> list[tuple[str, str]]:
    """Every /api route the server documents (its OpenAPI schema: the app's own routes included)."""
    paths = client.get("/openapi.json").json()["paths"]
    return sorted(
        (method.upper(), path)
        for path, operations in paths.items()
        if path.startswith("/api/")
        for method in operations
    )


def _request(client: TestClient, world: dict[str, Any], method: str, path: str, **kw: Any) -> Response:
    """Call route `path` on Alice's ids, with a body the route accepts."""
    url = path.format(
        run_id=world["run"]["id"],
        ask_id=world["question"]["id"],
        audit_id=world["audit_id"],
        box=1,
        position=1,
        lang="en",
    )
    body: dict[str, Any] | None = None
    if path == "/api/runs" and method == "POST":
        body = {"prompt": "take one K562", "continue_from": world["run"]["id"]}
    elif path.endswith("/answer"):
        body = {"answers": ["K562-WT"]}
    if path.endswith("/events"):
        url += "?follow=false"
    return client.request(method, url, json=body, **kw)


def _made_up_tokens(client: TestClient) -> list[dict[str, str]]:
    """Tokens of the right form this server never issued: random ones, the sha256 of a minted one (what the store
    keeps), and one minted by another server on another store."""
    minted = new_session(client)["Authorization"].removeprefix("Bearer ")
    random = secrets.token_urlsafe(32)
    return [
        {"Authorization": f"Bearer {random}"},
        {"Cookie": f"consulta_session={random}", "Origin": "http://testserver"},  # as the page sends it
        {"Authorization": f"Bearer {hashlib.sha256(minted.encode()).hexdigest()}"},
        {"Authorization": f"Bearer {minted[:-1]}{'A' if minted[-1] != 'A' else 'B'}"},
    ]


MISSING = [{}, {"Authorization": "Bearer"}, {"Authorization": "Bearer short"}, {"Authorization": "Basic " + "x" * 43}]


def test_every_route_by_foreign_made_up_and_missing_tokens(
    world: dict[str, Any], home: Path, tmp_path_factory: Any
) -> None:
    client: TestClient = world["client"]
    routes = _routes(client)
    guarded = [r for r in routes if r not in OPEN_ROUTES]
    assert sorted(FOREIGN) == guarded, (
        "every route that needs a session is in the matrix (classify a new one in FOREIGN)"
    )
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    with TestClient(create_app(app="ln2", settings=settings_for(elsewhere))) as other_server:
        made_up = [*_made_up_tokens(client), new_session(other_server)]
    bob = new_session(client)
    inventory = sha256(inventory_path(home))
    cells: dict[str, int] = {"foreign": 0, "made up": 0, "missing": 0}
    for method, path in guarded:
        for headers in made_up:
            response = _request(client, world, method, path, headers=headers)
            assert response.status_code == 401 and response.json()["error_code"] == "no_session", (
                method,
                path,
                headers,
            )
        cells["made up"] += 1
        for headers in MISSING:
            client.cookies.clear()
            response = _request(client, world, method, path, headers=headers)
            assert response.status_code == 401 and response.headers["www-authenticate"] == "Bearer", (
                method,
                path,
                headers,
            )
            assert (
                response.json()["error_code"] == "no_session" and response.json()["message"] and response.json()["hint"]
            )
        cells["missing"] += 1
        response = _request(client, world, method, path, headers=bob)
        assert FOREIGN[(method, path)](response), (method, path, response.status_code, response.text)
        cells["foreign"] += 1
    print(
        f"\nisolation matrix: {len(guarded)} routes x 3 callers = {sum(cells.values())} cells "
        f"({len(made_up)} made-up and {len(MISSING)} missing variants each): {cells}"
    )
    assert cells == {"foreign": len(guarded), "made up": len(guarded), "missing": len(guarded)}

    # Nothing of Alice's changed: her run and both her asks still wait, the file is as it was.
    alice = world["alice"]
    assert client.get(f"/api/runs/{world['run']['id']}", headers=alice).json()["status"] == "waiting"
    pending = {a["id"] for a in client.get("/api/asks", headers=alice).json()}
    assert pending == {world["question"]["id"], world["staged"]["ask_id"]}
    assert sha256(inventory_path(home)) == inventory
    # Bob's rollback is his own plan: Alice sees none of it, and cannot approve it.
    (bobs,) = [a for a in client.get("/api/asks", headers=bob).json() if a["kind"] == "plan"]
    assert client.post(f"/api/asks/{bobs['id']}/answer", json={"decision": "approve"}, headers=alice).status_code == 404
    for route in OPEN_ROUTES:
        method, path = route
        assert _request(client, world, method, path).status_code in (200, 201), route


def test_a_minted_session_survives_a_restart_and_a_made_up_one_never_works(home: Path) -> None:
    with TestClient(create_app(app="ln2", settings=settings_for(home))) as client:
        alice = new_session(client)
        run = client.post("/api/runs", json={"prompt": AMBIGUOUS}, headers=alice).json()
        pending_ask(client, alice, kind="question")
        page_cookie = client.get("/").cookies["consulta_session"]
    made_up = {"Authorization": f"Bearer {secrets.token_urlsafe(32)}"}
    with TestClient(create_app(app="ln2", settings=settings_for(home))) as client:  # the server restarted
        assert [r["id"] for r in client.get("/api/runs", headers=alice).json()] == [run["id"]]
        assert client.get("/api/runs", headers=made_up).status_code == 401
        client.cookies.set("consulta_session", page_cookie)
        page = client.get("/")
        assert "set-cookie" not in page.headers  # the page's session is still one
        assert client.get("/api/runs").status_code == 200
        client.cookies.set("consulta_session", made_up["Authorization"].removeprefix("Bearer "))
        page = client.get("/")  # a made-up cookie is no session: the page issues a real one in its place
        issued = page.cookies["consulta_session"]
        assert issued != made_up["Authorization"].removeprefix("Bearer ")
        assert client.get("/api/runs", headers={"Authorization": f"Bearer {issued}"}).json() == []


def test_an_app_that_shares_its_data_with_no_session_answers_403(home: Path) -> None:
    web = ln2.APP.web
    assert web is not None
    private = dataclasses.replace(ln2.APP, web=lambda: dataclasses.replace(web(), shared_data="none"))
    audit_id = _seed_one_change(home)
    before = sha256(inventory_path(home))
    with TestClient(create_app(app=private, settings=settings_for(home))) as client:
        alice = new_session(client)
        for method, path in [r for r in FOREIGN if r[1].startswith("/api/ln2/")]:
            url = path.format(box=1, position=1, audit_id=audit_id)
            response = client.request(method, url, headers=alice)
            assert response.status_code == 403 and response.json()["error_code"] == "not_allowed", (method, path)
            assert response.json()["hint"]
            client.cookies.clear()
            assert client.request(method, url).status_code == 401  # no session comes first
        assert "403" in client.get("/openapi.json").json()["paths"]["/api/ln2/audit"]["get"]["responses"]
        assert client.get("/api/runs", headers=alice).json() == [] and sha256(inventory_path(home)) == before
