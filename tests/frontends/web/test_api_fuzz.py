"""Every app's HTTP API under schemathesis: `consulta serve APP` as a user runs it (a subprocess on a free port, a temp
CONSULTA_HOME, the scripted model), its OpenAPI loaded from /openapi.json, and schemathesis's examples, coverage,
fuzzing and stateful phases run against it with every check on, bounded in time. The API holds when schemathesis
finds nothing: no server error, every status code documented, every response (each SSE frame included) matching its
schema, schema-valid requests accepted and schema-violating ones refused, 405's `Allow` listing the path's methods —
and the server logged no traceback.

The quick test runs two passes per app (examples, coverage and 5 fuzzed cases per operation; then 6 s of stateful
scenarios): about 35 s an app, so it is marked `subprocess` (and `slow`): `scripts/test` runs it for the apps in
`QUICK_APPS` (`--thorough` for the others), `pytest` alone does not. The thorough one (200 per operation, 120 s stateful, a fresh seed) is marked `fuzz_long`: only
`scripts/test --thorough` (or `pytest -m fuzz_long`) runs it. The same by hand, against a server you started
(`consulta serve ln2 --model scripted:src/consulta/apps/ln2/data/scripts/ambiguous_thaw.yaml`), with `_CONFIG`
below saved as schemathesis.toml and `$TOKEN` from `curl -X POST http://127.0.0.1:8000/api/sessions`:

    st --config-file schemathesis.toml run http://127.0.0.1:8000/openapi.json --checks all --max-time 60 \\
        -H "Authorization: Bearer $TOKEN"

The failures this was written against are plain regression cases in test_api_conformance.py.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import httpx2
import pytest

from consulta.apps import app_names

from .conftest import wait_for

_SCRIPTS = {
    "ln2": ("consulta.apps.ln2", "ambiguous_thaw.yaml"),
    "tutor": ("consulta.apps.tutor", "unsuitable_upload.yaml"),
}
"""The app's demo script: its runs ask questions and stage plans, so the stateful phase meets open asks."""
_REPLY_ONLY = {"turns": [[{"text": "Noted."}]]}
"""For an app without one here: runs that reply and finish (the API is fuzzed all the same)."""


@dataclass(frozen=True)
class Pass:
    """One schemathesis run: its phases, each run once with at most `examples` cases per operation, or over and
    over for `seconds`."""

    phases: tuple[str, ...]
    examples: int | None = None
    seconds: int | None = None

    @property
    def time_limit(self) -> float:
        """How long the run may take before the test gives up on it: its own seconds, plus 3 s for each example asked
        per operation (200 examples on 2 busy cores took over 180 s), plus 180 s for start-up and the schema."""
        return 180 + (self.seconds or 0) + 3 * (self.examples or 0)

    def options(self) -> list[str]:
        return [
            "--phases", ",".join(self.phases),
            *(["--max-examples", str(self.examples)] if self.examples else []),
            *(["--max-time", str(self.seconds)] if self.seconds else []),
        ]  # fmt: skip


@dataclass(frozen=True)
class Fuzzed:
    reports: list[dict[str, Any]]
    """schemathesis's JSON report of each pass: operations, phases, test_cases, failures, errors."""
    output: str
    """What schemathesis printed (each failure with a curl command that reproduces it)."""
    server_log: str

    def explain(self) -> str:
        """What went wrong first (a CI log shows the head of a message), then all schemathesis printed, then the server."""
        found = [
            {"pass": n, "failures": r.get("failures"), "errors": r.get("errors")}
            for n, r in enumerate(self.reports)
            if r.get("failures") or r.get("errors")
        ]
        head = json.dumps(found, ensure_ascii=False, default=str)[:6000]
        return f"{head}\n---- schemathesis ----\n{self.output}\n---- the server's log (last 4000 characters) ----\n{self.server_log[-4000:]}"

    @property
    def generated(self) -> int:
        return sum(report["test_cases"]["generated"] for report in self.reports)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _script(app: str, home: Path) -> Path:
    if app in _SCRIPTS:
        package, name = _SCRIPTS[app]
        with resources.as_file(resources.files(package).joinpath("data", "scripts", name)) as path:
            return Path(path)
    path = home / "reply_only.json"
    path.write_text(json.dumps(_REPLY_ONLY), encoding="utf-8")
    return path


@contextmanager
def consulta_serve(app: str, home: Path, log: Path) -> Iterator[str]:
    """`consulta serve APP` in a subprocess; yields its base URL once it answers; Ctrl-C (then a kill) afterwards."""
    port = _free_port()
    env = {**os.environ, "CONSULTA_HOME": str(home), "CONSULTA_LANG": "en", "PYTHONUNBUFFERED": "1"}
    env.pop("CONSULTA_DATABASE_URL", None)
    command = [
        sys.executable,
        "-m",
        "consulta",
        "serve",
        app,
        "--port",
        str(port),
        "--model",
        f"scripted:{_script(app, home)}",
    ]
    with log.open("w", encoding="utf-8") as out:
        server = subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:

        def up() -> bool:
            assert server.poll() is None, f"consulta serve {app} exited:\n{log.read_text(encoding='utf-8')}"
            try:
                return httpx2.get(f"{base}/api/app", timeout=2).status_code == 200
            except httpx2.TransportError:
                return False

        wait_for(up, timeout=60, what=f"consulta serve {app} to answer")
        yield base
    finally:
        server.send_signal(signal.SIGINT)
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(timeout=10)


def fuzz(app: str, tmp_path: Path, *, passes: list[Pass], seed: int) -> Fuzzed:
    """Serve `app` and run schemathesis against it, every check on, one pass after the other (a pass of its own
    keeps a phase from being left no time by those before it on a busy machine)."""
    home, work = tmp_path / "home", tmp_path / "schemathesis"
    home.mkdir()
    work.mkdir()
    log = tmp_path / "server.log"
    reports, outputs = [], []
    with consulta_serve(app, home, log) as base:
        token = httpx2.post(f"{base}/api/sessions", timeout=5).json()["token"]
        for number, fuzz_pass in enumerate(passes):
            report_path = work / f"report-{number}.json"
            command = [
                sys.executable, "-m", "schemathesis.cli", "--no-color", "--config-file", str(_config(work)), "run",
                f"{base}/openapi.json",
                *fuzz_pass.options(),
                "--checks", "all",
                "--seed", str(seed),
                "--workers", "1",
                "--request-timeout", "10",
                "--header", f"Authorization: Bearer {token}",
                "--report", "json", "--report-json-path", str(report_path),
            ]  # fmt: skip
            done = subprocess.run(
                command, cwd=work, capture_output=True, text=True, timeout=fuzz_pass.time_limit, check=False
            )
            outputs.append(done.stdout + done.stderr)
            assert report_path.exists(), f"schemathesis wrote no report (exit {done.returncode}):\n{outputs[-1]}"
            reports.append(json.loads(report_path.read_text(encoding="utf-8")))
    return Fuzzed(reports=reports, output="\n".join(outputs), server_log=log.read_text(encoding="utf-8"))


_CONFIG = """
# Whether answers fit depends on the ask, which no schema can say (how many questions, which options; a question
# or a plan): an answer of the right shape that does not fit is a 422 `invalid_answer`, and nothing changes.
# A followed stream of a run waiting on a question stays open (heartbeats aside) until it is answered: read what
# comes within a second (the replay, `live`), as a client that leaves, rather than the whole request timeout.
[[operations]]
include-path = "/api/runs/{run_id}/events"
request-timeout = 1

[[operations]]
include-path = "/api/asks/{ask_id}/answer"
include-method = "POST"
checks.positive_data_acceptance.expected-statuses = ["2xx", "401", "404", "409", "422"]
"""


def _config(work: Path) -> Path:
    """schemathesis.toml: what the command line cannot say (and an explicit file keeps a stray one from applying)."""
    path = work / "schemathesis.toml"
    path.write_text(_CONFIG, encoding="utf-8")
    return path


def assert_holds(fuzzed: Fuzzed, passes: list[Pass]) -> None:
    for report, fuzz_pass in zip(fuzzed.reports, passes, strict=True):
        assert report["failures"] == [] and report["errors"] == [], fuzzed.explain()
        assert report["complete"] and report["stop_reason"] in ("completed", "max_time"), fuzzed.explain()
        operations = report["operations"]
        if "coverage" in fuzz_pass.phases:  # every operation (stateful scenarios reach those their links lead to)
            assert operations["tested"] == operations["selected"] == operations["total"] > 0, fuzzed.explain()
        for phase in fuzz_pass.phases:
            assert report["phases"][phase]["status"] == "success", (phase, fuzzed.explain())
    assert "Traceback" not in fuzzed.server_log, fuzzed.explain()


QUICK = [Pass(phases=("examples", "coverage", "fuzzing"), examples=5), Pass(phases=("stateful",), seconds=6)]
"""Every case the coverage phase derives from the schema, 5 random ones per operation, 6 s of stateful scenarios."""
THOROUGH = [Pass(phases=("examples", "coverage", "fuzzing"), examples=200), Pass(phases=("stateful",), seconds=120)]


QUICK_APPS = ("ln2", "tutor", "modeling")
"""The apps the quick pass fuzzes: those that stage writes, ask questions and take uploaded files (the runtime's
routes are every app's). The others' routes are fuzzed by the thorough pass; the quick one costs 25-45 s an app of the
README command's 15 minutes."""


def _quick(app: str) -> Any:
    return app if app in QUICK_APPS else pytest.param(app, marks=pytest.mark.fuzz_long)


@pytest.mark.slow
@pytest.mark.subprocess  # about 35 s per app: run by scripts/test (the apps outside QUICK_APPS by --thorough)
@pytest.mark.parametrize("app", [_quick(app) for app in app_names()])
def test_the_api_holds_under_fuzzing(app: str, tmp_path: Path) -> None:
    fuzzed = fuzz(app, tmp_path, passes=QUICK, seed=14)
    assert_holds(fuzzed, QUICK)
    assert fuzzed.generated > 100, fuzzed.explain()


@pytest.mark.slow
@pytest.mark.subprocess
@pytest.mark.fuzz_long
@pytest.mark.timeout(
    sum(p.time_limit for p in THOROUGH) + 120
)  # its passes' own bounds (200 examples took ~3 min here)
@pytest.mark.parametrize("app", app_names())
def test_the_api_holds_under_long_fuzzing(app: str, tmp_path: Path) -> None:
    assert_holds(fuzz(app, tmp_path, passes=THOROUGH, seed=int.from_bytes(os.urandom(4), "big")), THOROUGH)
