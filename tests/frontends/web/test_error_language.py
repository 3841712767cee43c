"""Every web error body in the request's language (issue 20, item 7): each generic error (`invalid_request`,
`invalid_json`, `not_found`, `no_session`, `method_not_allowed`, `unsupported_media_type`, `conflict`,
`invalid_answer`, `unknown_language`, `invalid_host`, `cross_origin`) in English and in Chinese (`?lang=` and
`Accept-Language`), and the tutor's upload refusals (413, 415, 422) in Chinese: message and hint read in the
language asked, no English sentence in a Chinese body."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from consulta.apps.tutor import MAX_UPLOAD_BYTES
from consulta.frontends.web import create_app

from .conftest import new_session, pending_ask, settings_for

CJK = re.compile(r"[\u4e00-\u9fff]")
ENGLISH_WORDS = re.compile(r"\b(?:the|is|not|this|was|with|request|session|send)\b", re.IGNORECASE)
TUTOR_SCRIPT = resources.files("consulta.apps.tutor").joinpath("data", "scripts", "unsuitable_upload.yaml")


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    with TestClient(create_app(app="ln2", settings=settings_for(tmp_path_factory.mktemp("lang")))) as test_client:
        yield test_client


@pytest.fixture(scope="module")
def tutor(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    home = tmp_path_factory.mktemp("tutor")
    with (
        resources.as_file(TUTOR_SCRIPT) as script,
        TestClient(create_app(app="tutor", settings=settings_for(home, Path(script)))) as test_client,
    ):
        yield test_client


@pytest.fixture(scope="module")
def alice(client: TestClient) -> dict[str, str]:
    return new_session(client)


@pytest.fixture(scope="module")
def asks(client: TestClient, alice: dict[str, str]) -> dict[str, str]:
    """Two asks of Alice's (the scripted ln2 model asks which K562 tube): one cancelled, one pending."""

    def ask() -> str:
        run = client.post("/api/runs", headers=alice, json={"prompt": "帮我取一管K562"}).json()
        return pending_ask(client, alice, kind="question", run_id=run["id"])["id"]

    closed = ask()
    assert client.post(f"/api/asks/{closed}/cancel", headers=alice).status_code == 200
    return {"closed": closed, "pending": ask()}


class WithLang:
    """A TestClient whose every request carries `?lang=zh-CN`."""

    def __init__(self, client: TestClient) -> None:
        self.client = client

    def __getattr__(self, method: str) -> Any:
        return lambda url, **kw: getattr(self.client, method)(url, params={"lang": "zh-CN"}, **kw)


Call = Callable[[Any, dict[str, str], dict[str, str], dict[str, str]], Any]
"""(client, Alice's headers, the language headers, Alice's asks) -> the response."""

GENERIC: dict[str, tuple[int, Call]] = {
    "invalid_request": (422, lambda c, a, h, _: c.post("/api/runs", headers=a | h, json={"prompt": 3})),
    "invalid_request (no object)": (422, lambda c, a, h, _: c.post("/api/runs", headers=a | h, json=[1])),
    "invalid_json": (
        422,
        lambda c, a, h, _: c.post("/api/runs", headers=a | h | {"Content-Type": "application/json"}, content=b"{"),
    ),
    "invalid_json (not UTF-8)": (
        422,
        lambda c, a, h, _: c.post(
            "/api/runs", headers=a | h | {"Content-Type": "application/json"}, content=b'{"prompt": "\xff"}'
        ),
    ),
    "not_found (run)": (404, lambda c, a, h, _: c.get("/api/runs/run_nope", headers=a | h)),
    "not_found (ask)": (404, lambda c, a, h, _: c.get("/api/asks/ask_nope", headers=a | h)),
    "not_found (route)": (404, lambda c, a, h, _: c.get("/api/no/such/route", headers=a | h)),
    "no_session": (401, lambda c, a, h, _: c.get("/api/runs", headers=h)),
    "method_not_allowed": (405, lambda c, a, h, _: c.delete("/api/runs", headers=a | h)),
    "unsupported_media_type": (
        415,
        lambda c, a, h, _: c.post("/api/runs", headers=a | h | {"Content-Type": "text/plain"}, content=b"hi"),
    ),
    "conflict": (409, lambda c, a, h, asks: c.post(f"/api/asks/{asks['closed']}/cancel", headers=a | h)),
    "invalid_answer": (
        422,
        lambda c, a, h, asks: c.post(
            f"/api/asks/{asks['pending']}/answer", headers=a | h, json={"decision": "approve"}
        ),
    ),
    "invalid_request (our own check)": (
        422,
        lambda c, a, h, asks: c.post(f"/api/asks/{asks['pending']}/answer", headers=a | h, json={}),
    ),
    "unknown_language": (404, lambda c, a, h, _: c.get("/api/i18n/fr", headers=h)),
    "invalid_host": (400, lambda c, a, h, _: c.get("/", headers=h | {"Host": "attacker.example"})),
    "cross_origin": (403, lambda c, a, h, _: c.post("/api/sessions", headers=h | {"Origin": "http://evil.example"})),
}


def in_chinese(body: dict[str, Any]) -> None:
    for part in ("message", "hint"):
        text = body.get(part)
        if text is not None:
            assert CJK.search(text) and not ENGLISH_WORDS.search(text), (part, body)


def in_english(body: dict[str, Any]) -> None:
    for part in ("message", "hint"):
        assert not CJK.search(body.get(part) or ""), (part, body)


@pytest.mark.parametrize("case", sorted(GENERIC))
@pytest.mark.parametrize(
    ("lang", "asked"),
    [("en", {}), ("zh-CN", {"Accept-Language": "zh-CN,zh;q=0.9,en;q=0.5"}), ("zh-CN", {"X-Query": "lang"})],
    ids=["en", "zh-CN by Accept-Language", "zh-CN by ?lang="],
)
def test_each_generic_error_in_the_requests_language(
    client: TestClient, alice: dict[str, str], asks: dict[str, str], case: str, lang: str, asked: dict[str, str]
) -> None:
    status, call = GENERIC[case]
    by_query = "X-Query" in asked
    headers = {k: v for k, v in asked.items() if k != "X-Query"}
    response = call(WithLang(client) if by_query else client, alice, headers, asks)
    assert response.status_code == status, response.text
    body = response.json()
    assert body["error_code"] == case.split(" ")[0] and body["message"], body
    (in_english if lang == "en" else in_chinese)(body)


def upload(client: TestClient, headers: dict[str, str], name: str, data: bytes) -> Any:
    return client.post("/api/tutor/uploads", headers=headers, files={"file": (name, data, "text/csv")})


ZH = {"Accept-Language": "zh-CN"}
TUTOR: dict[str, tuple[int, str, Callable[[TestClient, dict[str, str]], Any]]] = {
    "too large": (413, "file_too_large", lambda c, h: upload(c, h, "big.csv", b"x" * (MAX_UPLOAD_BYTES + 1))),
    "body too large": (
        413,
        "file_too_large",
        lambda c, h: c.post(
            "/api/tutor/uploads",
            headers=h
            | {"Content-Type": "multipart/form-data; boundary=x", "Content-Length": str(MAX_UPLOAD_BYTES * 2)},
            content=b"--x--",
        ),
    ),
    "wrong type": (415, "unsupported_file_type", lambda c, h: upload(c, h, "notes.json", b'{"a": 1}')),
    "not multipart": (
        415,
        "unsupported_media_type",
        lambda c, h: c.post("/api/tutor/uploads", headers=h, json={"file": "a,b"}),
    ),
    "a folder in the name": (422, "path_outside_uploads", lambda c, h: upload(c, h, ".hidden.csv", b"a,b\n1,2\n")),
    "empty": (422, "empty_file", lambda c, h: upload(c, h, "empty.csv", b"")),
    "header only": (422, "no_rows", lambda c, h: upload(c, h, "header.csv", b"a,b\n")),
    "not UTF-8": (
        422,
        "invalid_encoding",
        lambda c, h: upload(c, h, "gbk.csv", "名字,城市\n张三,北京\n".encode("gbk")),
    ),
    "no file": (
        422,
        "missing_file",
        lambda c, h: c.post("/api/tutor/uploads", headers=h, files={"other": ("a.csv", b"a,b\n1,2\n", "text/csv")}),
    ),
    "unknown run": (404, "not_found", lambda c, h: c.get("/api/tutor/turn", headers=h, params={"run_id": "run_x"})),
}


@pytest.mark.parametrize("case", sorted(TUTOR))
def test_the_tutors_refusals_in_chinese(tutor: TestClient, case: str) -> None:
    status, code, call = TUTOR[case]
    headers = new_session(tutor) | ZH
    response = call(tutor, headers)
    assert response.status_code == status, response.text
    body = response.json()
    assert body["error_code"] == code, body
    in_chinese(body)
    assert tutor.get("/api/tutor/uploads", headers=headers).json()["files"] == []  # nothing written
