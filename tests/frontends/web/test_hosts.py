"""The server answers only its own hosts, and a browser changes something only from the server's own page (issue 20,
item 6): any other `Host` is a 400 with the error body before any route (the page, /api/sessions, an app's route,
static files); a write carrying a foreign `Origin` is a 403 (the SameSite=Strict cookie never leaves the page's site) and
changes nothing; sessions are minted for the page's origin and for API clients (no `Origin`) only."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from consulta.frontends.web import create_app
from consulta.frontends.web._guard import allowed_hosts, host_name

from .conftest import new_session, settings_for

ATTACKER = "attacker.example"
OWN_ORIGIN = "http://testserver"  # what a browser on the page TestClient serves sends


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    home: Path = tmp_path_factory.mktemp("hosts")
    with TestClient(create_app(app="ln2", settings=settings_for(home))) as test_client:
        yield test_client


def refused(response: Any, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, (response.status_code, response.text)
    body = response.json()
    assert body["error_code"] == code and body["message"], body
    return body


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/"),
        ("POST", "/api/sessions"),
        ("GET", "/api/app"),
        ("GET", "/api/ln2/grid"),
        ("GET", "/static/icon.svg"),
        ("GET", "/apps/ln2/static/app.js"),
        ("GET", "/docs"),
        ("GET", "/no/such/route"),
    ],
)
@pytest.mark.parametrize("host", [ATTACKER, f"{ATTACKER}:8000", "127.0.0.1.attacker.example", "localhost.", "[::2]"])
def test_a_foreign_host_gets_400_before_any_route(client: TestClient, method: str, path: str, host: str) -> None:
    response = client.request(method, path, headers={"Host": host})
    body = refused(response, 400, "invalid_host")
    assert "set-cookie" not in response.headers and "token" not in body  # no session minted for it
    assert host[:100] in body["message"] and "CONSULTA_ALLOWED_HOSTS" in body["hint"]


def test_the_refusal_is_in_the_requests_language(client: TestClient) -> None:
    body = refused(client.get("/", headers={"Host": ATTACKER, "Accept-Language": "zh-CN"}), 400, "invalid_host")
    assert body["message"].startswith("本服务器不响应主机名")


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.1:8000", "localhost", "LOCALHOST:8000", "[::1]:8000"])
def test_the_servers_own_hosts_are_served(client: TestClient, host: str) -> None:
    assert client.post("/api/sessions", headers={"Host": host}).status_code == 201
    page = TestClient(client.app)  # a browser of its own (the page sets its cookie)
    assert page.get("/", headers={"Host": host}).status_code == 200
    own = {"Host": host, "Origin": f"http://{host.lower()}"}
    run = page.post("/api/runs", headers=own, json={"prompt": "hi"})
    assert run.status_code == 201, run.text
    page.post(f"/api/runs/{run.json()['id']}/stop", headers=own)


def test_sessions_are_minted_for_the_page_and_api_clients_only(client: TestClient) -> None:
    refused(client.post("/api/sessions", headers={"Origin": f"http://{ATTACKER}"}), 403, "cross_origin")
    refused(client.post("/api/sessions", headers={"Origin": "null"}), 403, "cross_origin")
    refused(client.post("/api/sessions", headers={"Origin": "http://testserver:8001"}), 403, "cross_origin")
    assert client.post("/api/sessions", headers={"Origin": OWN_ORIGIN}).status_code == 201
    assert client.post("/api/sessions").status_code == 201  # an API client: no Origin


def test_a_browsers_write_needs_the_pages_origin(client: TestClient) -> None:
    alice = new_session(client)
    before = client.get("/api/runs", headers=alice).json()
    foreign = {**alice, "Origin": f"http://{ATTACKER}"}
    refused(client.post("/api/runs", headers=foreign, json={"prompt": "hi"}), 403, "cross_origin")
    assert client.get("/api/runs", headers=alice).json() == before  # nothing started

    page = TestClient(client.app)  # a browser: it loaded the page, so it has the session cookie
    page.get("/")
    refused(
        page.post("/api/runs", headers={"Origin": f"http://{ATTACKER}"}, json={"prompt": "hi"}), 403, "cross_origin"
    )
    assert page.get("/api/runs").json() == []  # reads are not writes: the page's own GETs go through
    run = page.post("/api/runs", headers={"Origin": OWN_ORIGIN}, json={"prompt": "hi"})
    assert run.status_code == 201, run.text
    page.post(f"/api/runs/{run.json()['id']}/stop", headers={"Origin": OWN_ORIGIN})


def test_the_hosts_served() -> None:
    assert allowed_hosts(extra=()) == {"127.0.0.1", "localhost", "[::1]"}
    assert allowed_hosts(bind="0.0.0.0", extra=()) == allowed_hosts(bind="::", extra=()) == allowed_hosts(extra=())
    assert "192.168.1.5" in allowed_hosts(bind="192.168.1.5", extra=())
    assert "[fe80::1]" in allowed_hosts(bind="fe80::1", extra=())
    assert {"lab.example", "box"} <= allowed_hosts(extra=[" Lab.example", "box", ""])
    assert host_name("[::1]:8000") == "[::1]" and host_name("LocalHost:80") == "localhost" and host_name("") is None


def test_consulta_allowed_hosts_names_more(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CONSULTA_ALLOWED_HOSTS", "lab.example, testserver")
    assert "lab.example" in allowed_hosts()
    with TestClient(create_app(app="ln2", settings=settings_for(tmp_path))) as client:
        assert client.get("/", headers={"Host": "lab.example:8000"}).status_code == 200
        refused(client.get("/", headers={"Host": ATTACKER}), 400, "invalid_host")
    with TestClient(create_app(app="ln2", settings=settings_for(tmp_path), hosts=["testserver"])) as client:
        refused(client.get("/", headers={"Host": "lab.example"}), 400, "invalid_host")  # hosts given: those only
