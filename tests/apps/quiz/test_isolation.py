"""Every session's tests and profile are its own (issue 20, item 4), on the quiz app served on the web: session B
cannot read, answer, abandon or even see session A's test, nor A's profile; nothing of A's changes while B tries."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from consulta.frontends.web import create_app
from frontends.web.conftest import new_session, settings_for

from .conftest import write_script

PROFILE = {
    "self_level": "advanced",
    "years_experience": 7,
    "job_role": "data engineer",
    "duty": "pipelines",
    "interests": ["SQL"],
}


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    script = write_script(tmp_path / "script.json")
    with TestClient(create_app(app="quiz", settings=settings_for(tmp_path, script))) as test_client:
        yield test_client


def test_a_test_and_a_profile_are_their_sessions_own(client: TestClient) -> None:
    alice, bob = new_session(client), new_session(client)
    test = client.post("/api/quiz/tests", headers=alice, json={"profile": PROFILE, "lang": "en"}).json()
    item = test["item"]
    answer = {"position": item["position"], "question_id": item["question_id"], "answer": "x"}

    assert client.get("/api/quiz/tests/current", headers=bob).json() is None  # see
    assert client.get("/api/quiz/profile", headers=bob).json() == {"profile": None}
    read = client.get(f"/api/quiz/tests/{test['id']}", headers=bob)  # read
    assert read.status_code == 404 and read.json()["error_code"] in ("not_found", "unknown_test"), read.text
    answered = client.post(f"/api/quiz/tests/{test['id']}/answers", headers=bob, json=answer)  # answer
    assert answered.status_code == 404, answered.text
    abandoned = client.post(f"/api/quiz/tests/{test['id']}/abandon", headers=bob)  # change
    assert abandoned.status_code == 404, abandoned.text

    mine = client.get(f"/api/quiz/tests/{test['id']}", headers=alice).json()  # nothing of Alice's changed
    assert mine["status"] == "in_progress" and mine["answered"] == 0 and mine["item"] == item
    assert client.get("/api/quiz/profile", headers=alice).json()["profile"]["job_role"] == "data engineer"
    assert client.get("/api/quiz/tests/current", headers=alice).json()["id"] == test["id"]

    bobs = client.post("/api/quiz/tests", headers=bob, json={"profile": PROFILE | {"job_role": "x"}, "lang": "en"})
    assert bobs.status_code == 201 and bobs.json()["id"] != test["id"]  # Bob's own test: Alice's stays open
    assert client.get("/api/quiz/tests/current", headers=alice).json()["id"] == test["id"]
    assert client.get("/api/quiz/profile", headers=alice).json()["profile"]["job_role"] == "data engineer"
