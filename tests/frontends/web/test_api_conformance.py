"""The API does what its OpenAPI says: each case here is one schemathesis found (issue 14, on an older main),
reproduced plainly so it stays fixed — a body of the wrong media type was a 500 (now 415, with the error body), an
unparsable JSON body an undocumented 400 (now a 422 `invalid_json`), the SSE frames matched no documented schema,
schema-valid requests were refused (`{}` as an answer, `Last-Event-ID` sent as the documented `null`), a header the
schema refused was taken, and a 405's `Allow` named one route's methods rather than the path's."""

from __future__ import annotations

import json
import re
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from fastapi.testclient import TestClient

from consulta.frontends.web import create_app

from .conftest import AMBIGUOUS, new_session, pending_ask, settings_for, wait_for
from .test_stream import Frame, _finished_run, replay

JSON_BODY_ROUTES = ("/api/runs", "/api/asks/{ask_id}/answer")
TUTOR_SCRIPT = resources.files("consulta.apps.tutor").joinpath("data", "scripts", "unsuitable_upload.yaml")


@pytest.fixture
def openapi(client: TestClient) -> dict[str, Any]:
    return client.get("/openapi.json").json()


def documented(openapi: dict[str, Any], schema: dict[str, Any]) -> jsonschema.Validator:
    """A validator of `schema`, its `#/components/...` references resolved in the API's OpenAPI document."""
    return jsonschema.Draft202012Validator({**schema, "components": openapi["components"]})


def error_body(openapi: dict[str, Any], response: Any) -> dict[str, Any]:
    body = response.json()
    documented(openapi, {"$ref": "#/components/schemas/ErrorBody"}).validate(body)
    return body


# ---- a body of the wrong media type: 415, not 500 -----------------------------------------------------------------


def test_a_body_that_is_not_json_is_415_and_starts_nothing(
    client: TestClient, alice: dict[str, str], openapi: dict[str, Any]
) -> None:
    for content_type in ("text/plain", "application/x-www-form-urlencoded", None):
        headers = {**alice, **({"Content-Type": content_type} if content_type else {})}
        response = client.post("/api/runs", content=json.dumps({"prompt": AMBIGUOUS}).encode(), headers=headers)
        assert response.status_code == 415, content_type
        body = error_body(openapi, response)
        assert body["error_code"] == "unsupported_media_type" and "application/json" in body["hint"]
        assert (content_type or "without a Content-Type") in body["message"]
    assert client.get("/api/runs", headers=alice).json() == []


def test_an_answer_that_is_not_json_is_415_and_the_ask_stays_pending(
    client: TestClient, alice: dict[str, str], openapi: dict[str, Any]
) -> None:
    client.post("/api/runs", json={"prompt": AMBIGUOUS}, headers=alice)
    question = pending_ask(client, alice, kind="question")
    response = client.post(
        f"/api/asks/{question['id']}/answer",
        content=b'{"answers": ["K562-dTAG-BRD4"]}',
        headers={**alice, "Content-Type": "text/plain"},
    )
    assert response.status_code == 415 and error_body(openapi, response)["error_code"] == "unsupported_media_type"
    assert client.get(f"/api/asks/{question['id']}", headers=alice).json()["status"] == "pending"


@pytest.mark.parametrize("path", JSON_BODY_ROUTES)
def test_the_routes_that_read_json_document_415_and_422(openapi: dict[str, Any], path: str) -> None:
    responses = openapi["paths"][path]["post"]["responses"]
    assert {"415", "422"} <= responses.keys()
    assert responses["415"]["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/ErrorBody"}


# ---- an unparsable JSON body: the documented 422, not an undocumented 400 ---------------------------------------


def test_an_unparsable_json_body_is_a_documented_422(
    client: TestClient, alice: dict[str, str], openapi: dict[str, Any]
) -> None:
    for body, reason in (
        (b"\xff\xfe{", "not UTF-8"),
        (b"[" * 100_000, "nested too deeply"),
        (b"{not json", "Expecting property name"),
    ):
        response = client.post("/api/runs", content=body, headers={**alice, "Content-Type": "application/json"})
        assert response.status_code == 422, reason
        error = error_body(openapi, response)
        assert error["error_code"] == "invalid_json" and reason in error["message"]
    assert client.get("/api/runs", headers=alice).json() == []


# ---- the event stream matches its documented frames -------------------------------------------------------------


def assert_documented_frames(openapi: dict[str, Any], frames: list[Frame]) -> None:
    """Each frame as EventSource reads it (`event`, `id`, `data`) against the documented `itemSchema`, its `data`
    against the frame's `contentSchema`; the whole stream against `schema`."""
    content = openapi["paths"]["/api/runs/{run_id}/events"]["get"]["responses"]["200"]["content"]["text/event-stream"]
    parsed = [{"event": f.event, "data": f.data, **({"id": str(f.id)} if f.id is not None else {})} for f in frames]
    documented(openapi, content["schema"]).validate(parsed)
    item = documented(openapi, content["itemSchema"])
    members = {
        "message": "EventFrame", "live": "MarkFrame", "reset": "MarkFrame", "end": "EndFrame",
    }  # fmt: skip
    for frame in parsed:
        item.validate(frame)
        data = openapi["components"]["schemas"][members[frame["event"]]]["properties"]["data"]
        assert data["contentMediaType"] == "application/json"
        documented(openapi, data["contentSchema"]).validate(json.loads(frame["data"]))


def test_every_frame_of_a_run_matches_the_documented_schema(
    client: TestClient, alice: dict[str, str], openapi: dict[str, Any]
) -> None:
    run_id = _finished_run(client, alice)
    frames = replay(client, run_id, alice)
    assert {f.event for f in frames} == {"message", "end"} and len(frames) > 10
    assert_documented_frames(openapi, frames)
    reset = replay(client, run_id, {**alice, "Last-Event-ID": "999"})
    assert reset[0].event == "reset"
    assert_documented_frames(openapi, reset)


def test_a_frame_that_does_not_match_is_caught(openapi: dict[str, Any]) -> None:
    """The check above can fail: an event of no documented type, an `end` without its number."""
    for frame in (Frame(id=1, data='{"run_id": "r", "seq": 1, "type": "made_up"}'), Frame(event="end", data="{}")):
        with pytest.raises(jsonschema.ValidationError):
            assert_documented_frames(openapi, [frame])


def test_the_handover_frame_is_documented(tmp_path: Path) -> None:
    """The tutor's orchestrator hands its turn to the assistant: the stream's `handed_over` frame is documented."""
    with resources.as_file(TUTOR_SCRIPT) as script:
        settings = settings_for(tmp_path, Path(script))
    with TestClient(create_app(app="tutor", settings=settings)) as client:
        openapi = client.get("/openapi.json").json()
        headers = new_session(client)
        run_id = client.post("/api/runs", json={"prompt": "I uploaded my data."}, headers=headers).json()["id"]

        def handed_over() -> list[Frame] | None:
            got = replay(client, run_id, headers)
            return got if any(f.event == "message" and f.json["type"] == "handed_over" for f in got) else None

        assert_documented_frames(openapi, wait_for(handed_over, timeout=30, what="the hand-over"))


# ---- schema-valid requests are taken, schema-violating ones refused -----------------------------------------------


def test_an_answer_with_neither_or_both_fields_is_off_schema_and_refused(
    client: TestClient, alice: dict[str, str], openapi: dict[str, Any]
) -> None:
    client.post("/api/runs", json={"prompt": AMBIGUOUS}, headers=alice)
    question = pending_ask(client, alice, kind="question")
    for body in ({}, {"answers": None}, {"decision": None}, {"answers": ["x"], "decision": "approve"}):
        assert not documented(openapi, {"$ref": "#/components/schemas/AnswerBody"}).is_valid(body)
        response = client.post(f"/api/asks/{question['id']}/answer", json=body, headers=alice)
        assert response.status_code == 422 and error_body(openapi, response)["error_code"] == "invalid_request", body
        assert "exactly one" in response.json()["message"], body
    assert client.get(f"/api/asks/{question['id']}", headers=alice).json()["status"] == "pending"


def test_the_answers_limit_is_documented_as_the_server_holds_it(
    client: TestClient, alice: dict[str, str], openapi: dict[str, Any]
) -> None:
    answers = openapi["components"]["schemas"]["AnswerBody"]["properties"]["answers"]
    assert answers["type"] == "array" and answers["maxItems"] == 20 and "maxLength" not in answers
    client.post("/api/runs", json={"prompt": AMBIGUOUS}, headers=alice)
    question = pending_ask(client, alice, kind="question")
    response = client.post(f"/api/asks/{question['id']}/answer", json={"answers": ["x"] * 21}, headers=alice)
    assert response.status_code == 422 and response.json()["field"] == "answers"


def test_last_event_id_is_taken_exactly_when_its_documented_schema_takes_it(
    client: TestClient, alice: dict[str, str], openapi: dict[str, Any]
) -> None:
    run_id = client.post("/api/runs", json={"prompt": AMBIGUOUS}, headers=alice).json()["id"]
    (header,) = [
        p for p in openapi["paths"]["/api/runs/{run_id}/events"]["get"]["parameters"] if p["name"] == "last-event-id"
    ]
    schema = documented(openapi, header["schema"])
    for value in ("0", "3", "999", "null", "-1", "1.5", "abc", "", "1" * 19):
        response = client.get(
            f"/api/runs/{run_id}/events", params={"follow": "false"}, headers={**alice, "Last-Event-ID": value}
        )
        valid = schema.is_valid(value)
        assert valid == (value in ("0", "3", "999")), value
        assert response.status_code == (200 if valid else 422), value


# ---- 405: `Allow` lists every method of the path -------------------------------------------------------------------


def test_a_405_allows_exactly_the_documented_methods_of_its_path(
    client: TestClient, alice: dict[str, str], openapi: dict[str, Any]
) -> None:
    for path, operations in openapi["paths"].items():
        url = re.sub(r"\{[^}]+\}", "1", path)  # a value each path parameter takes
        documented_methods = {m.upper() for m in operations}
        for method in ("OPTIONS", "PUT", "DELETE", "PATCH"):
            if method in documented_methods:
                continue
            response = client.request(method, url, headers=alice)
            assert response.status_code == 405, (method, path)
            assert set(response.headers["allow"].split(", ")) == documented_methods, (method, path)
            assert error_body(openapi, response)["error_code"] == "method_not_allowed"
