"""ln2's inventory is shared by declaration (issue 20, item 4): the app declares its data shared with every web
session the server issued (`WebPart.shared_data == "sessions"`), so two sessions see the same inventory, history and
grid; what is each session's own — its runs, their asks and the plans they stage — stays its own."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from consulta.apps import resolve_app
from consulta.frontends.web import create_app
from frontends.web.conftest import AMBIGUOUS, new_session, pending_ask, settings_for


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    with TestClient(create_app(app="ln2", settings=settings_for(tmp_path))) as test_client:
        yield test_client


def test_the_inventory_is_shared_by_declaration(client: TestClient) -> None:
    part = resolve_app("ln2").web
    assert part is not None and part().shared_data == "sessions"  # the declaration both sessions are served by
    alice, bob = new_session(client), new_session(client)
    for route in ("/api/ln2/grid", "/api/ln2/audit"):
        seen_by_alice = client.get(route, headers=alice)
        assert seen_by_alice.status_code == 200, seen_by_alice.text
        assert client.get(route, headers=bob).json() == seen_by_alice.json()  # both see it: it is shared


def test_a_sessions_runs_and_asks_stay_its_own(client: TestClient) -> None:
    alice, bob = new_session(client), new_session(client)
    run = client.post("/api/runs", headers=alice, json={"prompt": AMBIGUOUS}).json()
    ask = pending_ask(client, alice, kind="question", run_id=run["id"])
    assert client.get(f"/api/runs/{run['id']}", headers=bob).status_code == 404
    assert client.get(f"/api/asks/{ask['id']}", headers=bob).status_code == 404
    assert client.post(f"/api/asks/{ask['id']}/cancel", headers=bob).status_code == 404
    assert client.get("/api/asks", headers=bob).json() == [] and client.get("/api/runs", headers=bob).json() == []
    assert client.get(f"/api/asks/{ask['id']}", headers=alice).json()["status"] == "pending"  # unchanged
    client.post(f"/api/runs/{run['id']}/stop", headers=alice)
