"""Durability across processes: a run waiting on a question survives SIGKILL; another process answers and resumes it.

These start the real `consulta` command in subprocesses (scripted model, a temporary CONSULTA_HOME) and talk to it
only through the store and the command line, as a person with two terminals would.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from importlib import resources
from pathlib import Path

import pytest

from consulta.i18n import catalog
from consulta.runtime import AskStatus, RunStatus, Store

SCRIPT = resources.files("consulta.apps.ln2").joinpath("data", "scripts", "ambiguous_thaw.yaml")
CONSULTA = [sys.executable, "-m", "consulta"]


def _env(home: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(CONSULTA_HOME=str(home), CONSULTA_LANG="en", COLUMNS="200", PYTHONUNBUFFERED="1")
    return env


def _consulta(home: Path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CONSULTA, *args],
        env=_env(home),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def _wait_for(predicate, *, timeout: float = 60.0, what: str = "condition"):  # noqa: ANN001, ANN202
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def _store(home: Path) -> Store:
    return Store(f"sqlite:///{home / 'consulta.db'}")


def _start_chat(home: Path) -> subprocess.Popen[str]:
    with resources.as_file(SCRIPT) as script:
        return subprocess.Popen(
            [*CONSULTA, "chat", "ln2", "--model", f"scripted:{script}", "--ask-policy", "wait", "-p", "帮我取一管K562"],
            env=_env(home),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )


@pytest.mark.slow
@pytest.mark.subprocess  # subprocesses: still run in CI (scripts/test runs slow or not slow)
def test_sigkill_while_question_pending_then_answer_resumes_to_completion(tmp_path: Path) -> None:
    home = tmp_path / "home"
    proc = _start_chat(home)
    try:
        store = _wait_for(lambda: (home / "consulta.db").exists() and _store(home), what="the store")
        ask = _wait_for(lambda: next(iter(store.list_asks()), None), what="the question to be pending")
        _wait_for(lambda: store.get_run(ask.run_id).status == RunStatus.waiting, what="the run to wait")
        time.sleep(0.5)
        assert proc.poll() is None  # waiting in process, alive, not exited
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
    inventory = home / "apps" / "ln2" / "inventory.yaml"
    before = hashlib.sha256(inventory.read_bytes()).hexdigest()

    # After the crash the question is still pending and listed.
    listed = _consulta(home, "asks")
    assert listed.returncode == 0, listed.stderr
    assert ask.id in listed.stdout and "Cell Line" in listed.stdout

    # Answering it (option 2 = K562-dTAG-BRD4) resumes the run from its checkpoint in this new process.
    answered = _consulta(home, "answer", ask.id, "2")
    assert answered.returncode == 0, answered.stdout + answered.stderr
    en = catalog("en")  # the resumed run's thaw, shown as its step in the person's words
    assert (
        en["ln2.step.record_thaw"] in answered.stdout
        or en["ln2.step.record_thaw.detail"].split("{")[0] in answered.stdout
    )
    store = _store(home)
    assert store.get_ask(ask.id).status == AskStatus.answered
    (plan_ask,) = store.list_asks()
    assert plan_ask.kind == "plan"
    assert hashlib.sha256(inventory.read_bytes()).hexdigest() == before  # only staged

    approved = _consulta(home, "answer", plan_ask.id, "approve")
    assert approved.returncode == 0, approved.stdout + approved.stderr
    run = store.get_run(ask.run_id)
    assert run.status == RunStatus.finished
    audit = [json.loads(x) for x in (home / "apps" / "ln2" / "inventory.yaml.audit.jsonl").read_text().splitlines()]
    assert len(audit) == 1 and audit[0]["args"]["record_id"] == 9 and audit[0]["run_id"] == run.id
    # No step ran twice: one query, one question, one thaw.
    names = [c.tool_name for c in store.list_tool_calls(run.id)]
    assert names == ["query_inventory", "record_thaw"]

    # Answering again is a clear error, not silence.
    again = _consulta(home, "answer", ask.id, "1")
    assert again.returncode == 2 and "already answered" in again.stdout


@pytest.mark.slow
@pytest.mark.subprocess  # subprocesses: still run in CI (scripts/test runs slow or not slow)
def test_answer_from_another_process_reaches_the_live_run(tmp_path: Path) -> None:
    home = tmp_path / "home"
    proc = _start_chat(home)
    try:
        store = _wait_for(lambda: (home / "consulta.db").exists() and _store(home), what="the store")
        ask = _wait_for(lambda: next(iter(store.list_asks()), None), what="the question")
        answered = _consulta(home, "answer", ask.id, "K562-dTAG-BRD4")
        assert answered.returncode == 0, answered.stdout + answered.stderr
        assert "continues in the process" in answered.stdout
        plan_ask = _wait_for(lambda: next((a for a in store.list_asks() if a.kind == "plan"), None), what="the plan")
        assert _consulta(home, "answer", plan_ask.id, "approve").returncode == 0
        out, _ = proc.communicate(timeout=60)
        assert proc.returncode == 0, out
        assert "Applied" in out
        assert store.get_run(ask.run_id).status == RunStatus.finished
    finally:
        if proc.poll() is None:
            proc.kill()


@pytest.mark.slow
@pytest.mark.subprocess  # subprocesses: still run in CI (scripts/test runs slow or not slow)
@pytest.mark.parametrize("answer", [["9"], ["--json", "[1, 2]"]])
def test_malformed_cli_answer_changes_nothing(tmp_path: Path, answer: list[str]) -> None:
    home = tmp_path / "home"
    with resources.as_file(SCRIPT) as script:
        started = _consulta(home, "chat", "ln2", "--model", f"scripted:{script}", "-p", "帮我取一管K562")
    assert started.returncode == 0, started.stdout + started.stderr
    store = _store(home)
    (ask,) = store.list_asks()
    result = _consulta(home, "answer", ask.id, *answer)
    if answer == ["9"]:
        # "9" is not an option number, so it is free text: allowed for a single-choice question.
        assert result.returncode == 0
        return
    assert result.returncode == 2, result.stdout
    assert "Expected 1 answer" in result.stdout
    assert store.get_ask(ask.id).status == AskStatus.pending
