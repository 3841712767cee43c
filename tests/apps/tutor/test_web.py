"""The tutor's web routes (a real app, scripted model): uploads listed and taken as multipart; bad uploads refused
with the error body and nothing written (too big — by Content-Length, by a stream that goes on, by the file itself —,
a type not accepted, names that leave the folder, an empty file, no file, not multipart); a turn's cards (the packet
and the consultation with its binding rule) read for the orchestrator's run and for the assistant's."""

from __future__ import annotations

import io
import json
import select
import socket
import urllib.request
import zipfile
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from fastapi.testclient import TestClient

from apps.tutor._folders import session_uploads
from consulta.apps.tutor import MAX_UPLOAD_BYTES
from consulta.apps.tutor._turn import consultation_card, turn_view
from consulta.frontends.web import create_app
from consulta.runtime import ConsultationRecord, RunStatus, ToolCallRecord
from frontends.web.conftest import new_session, run_status, running_server, settings_for, wait_for

SCRIPT = resources.files("consulta.apps.tutor").joinpath("data", "scripts", "unsuitable_upload.yaml")
STUDENT_DATA = b"name,city\nAda,Paris\nBo,Rome\nCy,Oslo\n"
PROMPT = "我上传了数据，可以开始task_2_1吗？"


def uploads_dir(home: Path) -> Path:
    return session_uploads(home)


def folder_files(home: Path) -> list[str]:
    """Everything in the upload folder, hidden files included (a refused upload leaves nothing, not even a part)."""
    folder = uploads_dir(home)
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path


@pytest.fixture
def client(home: Path) -> Iterator[TestClient]:
    with (
        resources.as_file(SCRIPT) as script,
        TestClient(create_app(app="tutor", settings=settings_for(home, Path(script)))) as test_client,
    ):
        yield test_client


@pytest.fixture
def alice(client: TestClient) -> dict[str, str]:
    return new_session(client)


def upload(client: TestClient, headers: dict[str, str], name: str, data: bytes) -> Any:
    return client.post("/api/tutor/uploads", headers=headers, files={"file": (name, data, "text/csv")})


def refused(response: Any, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body = response.json()
    assert body["error_code"] == code and body["message"], body
    return body


# ---- uploads ------------------------------------------------------------------------------------------------------


def test_an_upload_is_listed_and_kept_byte_for_byte(client: TestClient, alice: dict[str, str], home: Path) -> None:
    empty = client.get("/api/tutor/uploads", headers=alice).json()
    assert empty == {
        "files": [],
        "max_bytes": MAX_UPLOAD_BYTES,
        "accepted": [".csv", ".tsv", ".txt", ".dat", ".xlsx", ".xls"],
    }
    saved = upload(client, alice, "student_data.csv", STUDENT_DATA)
    assert saved.status_code == 201, saved.text
    assert saved.json()["name"] == "student_data.csv" and saved.json()["size"] == len(STUDENT_DATA)
    assert (uploads_dir(home) / "student_data.csv").read_bytes() == STUDENT_DATA
    # a second upload of the same name replaces the file; the listing is by name
    assert upload(client, alice, "student_data.csv", b"a,b\n1,2\n").status_code == 201
    workbook = io.BytesIO()
    with zipfile.ZipFile(workbook, "w") as parts:  # what the upload checks of a workbook: a zip with xl/workbook.xml
        parts.writestr("xl/workbook.xml", "<workbook/>")
    assert upload(client, alice, "scores.xlsx", workbook.getvalue()).status_code == 201
    listed = client.get("/api/tutor/uploads", headers=alice).json()["files"]
    assert [(f["name"], f["size"]) for f in listed] == [
        ("scores.xlsx", len(workbook.getvalue())),
        ("student_data.csv", 8),
    ]
    assert folder_files(home) == ["scores.xlsx", "student_data.csv"]


def test_uploads_need_a_session(client: TestClient) -> None:
    assert client.get("/api/tutor/uploads").status_code == 401
    refused(client.post("/api/tutor/uploads", files={"file": ("a.csv", b"a\n1\n")}), 401, "no_session")


@pytest.mark.parametrize(
    ("name", "status", "code"),
    [
        ("notes.md", 415, "unsupported_file_type"),
        ("script.py", 415, "unsupported_file_type"),
        ("data", 415, "unsupported_file_type"),
        ("../escape.csv", 422, "path_outside_uploads"),
        ("/etc/passwd.csv", 422, "path_outside_uploads"),
        ("sub/data.csv", 422, "path_outside_uploads"),
        (".hidden.csv", 422, "path_outside_uploads"),
        ("..", 422, "path_outside_uploads"),
    ],
)
def test_a_bad_name_or_type_is_refused_and_nothing_is_written(
    client: TestClient, alice: dict[str, str], home: Path, name: str, status: int, code: str
) -> None:
    body = refused(upload(client, alice, name, STUDENT_DATA), status, code)
    assert body["field"] == "file"
    assert folder_files(home) == []
    assert not (home / "apps" / "tutor" / "escape.csv").exists()


def test_a_file_over_the_limit_is_refused_and_nothing_is_written(
    client: TestClient, alice: dict[str, str], home: Path
) -> None:
    body = refused(upload(client, alice, "big.csv", b"x" * (MAX_UPLOAD_BYTES + 1)), 413, "file_too_large")
    assert "20 MB" in body["message"]
    assert folder_files(home) == []
    # exactly the limit is taken (in lines of 1 kB: ten million two-byte lines made this one upload take 20-50 s)
    rows = b"a\n" + (b"1" * 1023 + b"\n") * (MAX_UPLOAD_BYTES // 1024)
    edge = rows[: MAX_UPLOAD_BYTES - 1] + b"\n"
    assert len(edge) == MAX_UPLOAD_BYTES
    assert upload(client, alice, "edge.csv", edge).status_code == 201


def test_a_content_length_over_the_limit_is_refused_before_the_body_is_read(
    client: TestClient, alice: dict[str, str], home: Path
) -> None:
    sent: list[int] = []

    def body() -> Iterator[bytes]:
        for i in range(4):
            sent.append(i)
            yield b"x" * 1024

    headers = {**alice, "Content-Type": "multipart/form-data; boundary=b", "Content-Length": str(MAX_UPLOAD_BYTES * 2)}
    refused(client.post("/api/tutor/uploads", headers=headers, content=body()), 413, "file_too_large")
    assert folder_files(home) == [] and len(sent) <= 1, "the body was read"


def test_a_stream_that_goes_over_the_limit_stops_being_read(home: Path) -> None:
    """A real server, a chunked body (no Content-Length to refuse by) three times the limit: the 413 comes back
    while the client is still sending, and nothing is written."""
    with (
        resources.as_file(SCRIPT) as script,
        running_server(create_app(app="tutor", settings=settings_for(home, Path(script)))) as base,
    ):
        host, port = base.removeprefix("http://").split(":")
        with urllib.request.urlopen(
            urllib.request.Request(f"{base}/api/sessions", method="POST"), timeout=10
        ) as minted:
            bearer = json.loads(minted.read())["token"]
        with socket.create_connection((host, int(port)), timeout=10) as sock:
            sock.sendall(
                f"POST /api/tutor/uploads HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {bearer}\r\n"
                "Content-Type: multipart/form-data; boundary=b\r\nTransfer-Encoding: chunked\r\n\r\n".encode()
            )
            head = b'--b\r\nContent-Disposition: form-data; name="file"; filename="huge.csv"\r\n\r\n'
            sock.sendall(b"%x\r\n%s\r\n" % (len(head), head))
            chunk, sent, answer = b"y" * 65536, 0, b""
            sock.setblocking(False)
            while sent < 3 * MAX_UPLOAD_BYTES and not answer:
                readable, writable, _ = select.select([sock], [sock], [], 10)
                if readable:
                    answer = sock.recv(65536)
                elif writable:
                    try:
                        sock.send(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                        sent += len(chunk)
                    except BlockingIOError:
                        pass
            sock.setblocking(True)
            while answer and not answer.endswith(b"}"):  # the rest of the error body
                answer += sock.recv(65536)
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    assert b'"error_code":"file_too_large"' in answer
    assert sent < 3 * MAX_UPLOAD_BYTES, "the whole body was sent before the answer"
    assert folder_files(home) == []


@pytest.mark.parametrize(
    ("kwargs", "status", "code"),
    [
        ({"files": {"file": ("empty.csv", b"")}}, 422, "empty_file"),
        ({"files": {"other": ("a.csv", b"a\n1\n")}}, 422, "missing_file"),
        ({"data": {"file": "a,b"}}, 415, "unsupported_media_type"),  # a form, not multipart
        ({"json": {"file": "a.csv"}}, 415, "unsupported_media_type"),
    ],
)
def test_an_upload_without_a_file_in_it_is_refused(
    client: TestClient, alice: dict[str, str], home: Path, kwargs: dict[str, Any], status: int, code: str
) -> None:
    refused(client.post("/api/tutor/uploads", headers=alice, **kwargs), status, code)
    assert folder_files(home) == []


# ---- the turn's cards ---------------------------------------------------------------------------------------------


def finished_turn(client: TestClient, headers: dict[str, str]) -> tuple[str, str]:
    """Upload the student's file and ask; the (orchestrator, assistant) runs once the assistant has answered."""
    assert upload(client, headers, "student_data.csv", STUDENT_DATA).status_code == 201
    run = client.post("/api/runs", headers=headers, json={"prompt": PROMPT}).json()
    run_status(client, headers, run["id"], "finished")
    events = lambda: client.get(f"/api/runs/{run['id']}/events?follow=false", headers=headers).text  # noqa: E731
    wait_for(lambda: "handed_over" in events(), what="the hand-over")
    runs = client.get("/api/runs", headers=headers).json()
    assistant = next(r for r in runs if r["id"] != run["id"])
    run_status(client, headers, assistant["id"], "finished")
    return run["id"], assistant["id"]


def test_the_turns_cards_show_the_packet_and_the_consultation_with_its_binding_rule(
    client: TestClient, alice: dict[str, str]
) -> None:
    assert client.get("/api/tutor/turn", headers=alice).json() is None  # no turn yet
    orchestrator, assistant = finished_turn(client, alice)
    turn = client.get("/api/tutor/turn", headers=alice, params={"run_id": orchestrator}).json()
    assert turn["run_id"] == orchestrator and turn["status"] == "finished" and turn["prompt"] == PROMPT
    assert turn["assistant_run_id"] == assistant and turn["assistant_status"] == "finished"

    packet = turn["packet"]
    assert packet["accepted"] is True and packet["refusal"] is None
    assert packet["task_id"] == "task_2_1" and packet["task_status"] == "blocked"
    assert "Do not start the exercise on this file" in packet["guidance_for_ca"]  # the rule's, applied
    assert packet["blocked_steps"] == ["analysis"] and packet["consultation_ids"] == ["consult_0001"]

    (card,) = turn["consultations"]
    assert card["id"] == "consult_0001" and card["expert_id"] == "data_inspector" and card["status"] == "done"
    assert card["output_type"] == "suitability_judgment" and card["scenario_id"] == "dataset_suitability_check"
    assert card["file_name"] == "student_data.csv" and card["task_id"] == "task_2_1"
    assert card["verdict"] == "not_suitable"  # the code's verdict, not the scripted model's "suitable"
    assert any("age" in issue for issue in card["issues"]) and any("rows" in issue for issue in card["issues"])
    assert "rows: 3" in card["evidence"]
    assert card["binding_rules"] == [{"rule_name": "dataset_not_suitable", "action": "require_new_dataset"}]
    assert card["instruction_updates"]["blocked_steps"] == ["analysis"]

    # the same turn read from the assistant's run, and as the session's newest
    assert client.get("/api/tutor/turn", headers=alice, params={"run_id": assistant}).json() == turn
    assert client.get("/api/tutor/turn", headers=alice).json() == turn


def test_a_turn_is_only_its_sessions(client: TestClient, alice: dict[str, str]) -> None:
    orchestrator, _ = finished_turn(client, alice)
    bob = new_session(client)
    assert client.get("/api/tutor/turn", headers=bob).json() is None
    refused(client.get("/api/tutor/turn", headers=bob, params={"run_id": orchestrator}), 404, "not_found")
    refused(client.get("/api/tutor/turn", headers=alice, params={"run_id": "run_nope"}), 404, "not_found")


def test_the_page_carries_the_tutors_panels(client: TestClient) -> None:
    page = client.get("/").text
    assert 'data-app="tutor"' in page and 'id="upload-input"' in page and 'id="turn-cards"' in page
    assert "/apps/tutor/static/app.css" in page and 'data-app-script="/apps/tutor/static/app.js"' in page
    assert client.get("/apps/tutor/static/app.js").status_code == 200
    body = client.get("/openapi.json").json()["paths"]["/api/tutor/uploads"]["post"]["requestBody"]
    assert body["content"]["multipart/form-data"]["schema"]["properties"]["file"]["format"] == "binary"


# ---- the cards' data, for every kind of consultation and a refused packet -------------------------------------------


def consultation(
    n: int,
    output_type: str,
    output: dict[str, Any] | None,
    *,
    status: str = "done",
    rules: list[dict[str, str]] | None = None,
) -> ConsultationRecord:
    return ConsultationRecord(
        id=f"consult_{n:04d}",
        run_id="run_o",
        tool_call_id="call_1",
        expert_id="data_inspector",
        status=status,
        request={
            "question": "q?",
            "context": {"task_id": "task_2_1"},
            "expected_output_type": output_type,
            "scenario_id": "s",
        },
        expert_output=output,
        binding_rules=rules or [],
        instruction_updates={},
        attempts=1,
        error=None if status == "done" else "never fitted its type",
        expert_run_id=None,
        started_at="2026-11-23T00:00:00+00:00",
        finished_at="2026-11-23T00:00:01+00:00",
        duration_ms=12.0,
    )


@pytest.mark.parametrize(
    ("output_type", "output", "verdict", "summary", "issues"),
    [
        (
            "validation_report",
            {
                "is_valid": False,
                "validation_details": "no output shown",
                "missing_elements": ["df.head()"],
                "recommended_action": "show it",
            },
            "not_valid",
            "no output shown",
            ["df.head()"],
        ),
        (
            "validation_report",
            {"is_valid": True, "validation_details": "all there", "missing_elements": [], "recommended_action": ""},
            "valid",
            "all there",
            [],
        ),
        (
            "error_diagnosis",
            {
                "error_root_cause": "a typo in the column",
                "explanation": "KeyError",
                "suggested_fix_direction": "check df.columns",
                "related_concepts": [],
            },
            "diagnosed",
            "a typo in the column",
            [],
        ),
        (
            "concept_explanation",
            {
                "concept_name": "groupby",
                "definition": "split-apply-combine",
                "use_cases": [],
                "simple_example": "",
                "common_pitfalls": ["forgetting agg"],
            },
            "explained",
            "split-apply-combine",
            [],
        ),
        (
            "suitability_judgment",
            {
                "is_suitable": True,
                "blocking_issues": [],
                "warning_issues": ["2 duplicate row(s)"],
                "evidence": ["rows: 120"],
                "recommended_next_step": "go on",
            },
            "suitable",
            "go on",
            [],
        ),
    ],
)
def test_a_consultation_card_reads_its_verdict_from_the_typed_output(
    output_type: str, output: dict[str, Any], verdict: str, summary: str, issues: list[str]
) -> None:
    card = consultation_card(consultation(1, output_type, output))
    assert (card.verdict, card.summary, card.issues) == (verdict, summary, issues)


def test_a_failed_consultation_says_why() -> None:
    card = consultation_card(consultation(2, "suitability_judgment", None, status="failed"))
    assert card.verdict == "failed" and card.summary == "never fitted its type" and card.binding_rules == []


class _Store:
    """The store reads a turn makes, over fixed records."""

    def __init__(self, calls: list[ToolCallRecord], consultations: list[ConsultationRecord]) -> None:
        self.calls, self.consultations = calls, consultations

    def list_tool_calls(self, run_id: str) -> list[ToolCallRecord]:
        return [c for c in self.calls if c.run_id == run_id]

    def list_consultations(self, *, run_id: str, limit: int) -> list[ConsultationRecord]:
        return [c for c in reversed(self.consultations) if c.run_id == run_id]

    def list_events(self, run_id: str, **_: Any) -> list[Any]:
        return []


def test_a_refused_packet_shows_what_was_submitted_and_why_it_was_refused() -> None:
    args = {"task_id": "task_2_1", "task_status": "done", "guidance_for_ca": "start the analysis"}
    refusal = {
        "ok": False,
        "error_code": "not_validated",
        "message": "The packet says task_2_1 is done, but no validation of the student's work found it valid.",
    }
    call = ToolCallRecord(
        run_id="run_o",
        step=2,
        tool_call_id="call_2",
        tool_name="submit_instruction_packet",
        args=args,
        result=refusal,
        ok=False,
        error_code="not_validated",
        started_at="2026-11-23T00:00:00+00:00",
        duration_ms=3.0,
    )
    rules = [{"rule_name": "dataset_not_suitable", "action": "require_new_dataset"}]
    kept = [
        consultation(
            1,
            "suitability_judgment",
            {"is_suitable": False, "blocking_issues": ["missing column(s): age"], "recommended_next_step": "x"},
            rules=rules,
        )
    ]
    run = SimpleNamespace(
        id="run_o", status=RunStatus.failed, prompt="can I start?", parent_run_id=None
    )  # what a turn reads of its run
    turn = turn_view(_Store([call], kept), run)  # type: ignore[arg-type]
    assert turn.status == "failed" and turn.assistant_run_id is None
    assert turn.packet is not None and turn.packet.accepted is False
    assert turn.packet.task_status == "done" and turn.packet.refusal == refusal["message"]
    assert [c.binding_rules[0].rule_name for c in turn.consultations] == ["dataset_not_suitable"]
