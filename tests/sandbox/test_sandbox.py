"""The sandbox for students' code: the real exception and line, files only in the work folder, no network, no
processes, and every limit (wall time, CPU time, memory) ends the code with a clear reason, leaving nothing behind."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from consulta.sandbox import Limits, run_python


def test_the_code_runs_on_copies_of_the_given_files_and_reports_the_real_exception(tmp_path: Path) -> None:
    data = tmp_path / "student_data.csv"
    data.write_text("name,city\nAda,Paris\n", encoding="utf-8")
    result = run_python(
        "header = rows[0].split(',')\nprint(header)\nrows[0].split(',').index('age')",
        files=[data],
        prelude="rows = open('student_data.csv', encoding='utf-8').read().splitlines()",
    )
    assert not result.ok and result.stopped is None
    assert result.stdout == "['name', 'city']\n"
    assert result.exception is not None and (result.exception.type, result.exception.line) == ("ValueError", 3)
    assert "'age' is not in list" in result.exception.message
    ok = run_python("open('notes.txt', 'w').write('x'); print(open('notes.txt').read())", files=[data])
    assert ok.ok and ok.stdout == "x\n"
    assert data.read_text(encoding="utf-8") == "name,city\nAda,Paris\n"  # the original is never touched


@pytest.mark.parametrize(
    "code",
    [
        "open('/etc/passwd').read()",
        "open('../request.json').read()",
        "open('/tmp/consulta-sandbox-escape', 'w').write('x')",
    ],
)
def test_files_outside_the_work_folder_are_refused(code: str) -> None:
    result = run_python(code)
    assert result.exception is not None and result.exception.type == "PermissionError"
    assert "work folder only" in result.exception.message


@pytest.mark.parametrize(
    ("code", "says"),
    [
        ("import socket; socket.create_connection(('127.0.0.1', 9), timeout=2)", "no network"),
        ("import urllib.request; urllib.request.urlopen('http://example.com', timeout=2)", "no network"),
        ("import subprocess; subprocess.run(['ls'])", "does not start processes"),
        ("import os; os.system('ls')", "does not start processes"),
    ],
)
def test_network_and_processes_are_refused(code: str, says: str) -> None:
    result = run_python(code)
    assert not result.ok and result.exception is not None
    assert says in result.exception.message or says in result.exception.traceback


def test_an_infinite_loop_is_stopped_by_the_cpu_limit() -> None:
    result = run_python("while True:\n    pass", limits=Limits(cpu_s=1, wall_s=10))
    assert (result.ok, result.stopped) == (False, "cpu_time")
    assert result.duration_ms < 9000  # the CPU limit, not the wall clock, ended it


def test_a_sleeping_loop_is_stopped_by_the_wall_clock() -> None:
    result = run_python("import time\nwhile True:\n    time.sleep(0.1)", limits=Limits(wall_s=1.5))
    assert (result.ok, result.stopped) == (False, "wall_time")


def test_a_huge_allocation_is_stopped_by_the_memory_limit() -> None:
    result = run_python("block = bytearray(4 * 1024**3)", limits=Limits(memory_mb=256))
    assert (result.ok, result.stopped) == (False, "memory")
    assert result.exception is not None and result.exception.type == "MemoryError"


def test_output_is_bounded() -> None:
    result = run_python("print('x' * 100_000)", limits=Limits(output_bytes=1_000))
    assert result.ok and len(result.stdout) == 1_000


def test_without_bubblewrap_the_code_is_refused_and_not_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from consulta.sandbox import SandboxUnavailable, _sandbox, sandbox_available

    monkeypatch.setenv("PATH", str(tmp_path))  # no bwrap on this PATH: the OS sandbox cannot be made
    _sandbox._probe.cache_clear()
    try:
        assert "bubblewrap" in (sandbox_available() or "")
        with pytest.raises(SandboxUnavailable) as refused:
            run_python(f"open({str(tmp_path / 'ran')!r}, 'w').write('x')", work=tmp_path / "work")
        assert refused.value.code == "sandbox_unavailable" and "\n" not in refused.value.reason
        assert not (tmp_path / "ran").exists() and not (tmp_path / "work").exists()  # nothing ran, nothing made
    finally:
        monkeypatch.undo()
        _sandbox._probe.cache_clear()


def test_a_probe_that_did_not_finish_in_time_is_asked_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """A machine too busy to start bwrap within the probe's time is not taken for one without a sandbox."""
    import subprocess

    from consulta.sandbox import _sandbox

    probe = _sandbox._Probe()
    real_run = subprocess.run

    def slow(*args: object, **kwargs: object) -> object:
        raise subprocess.TimeoutExpired(cmd="bwrap", timeout=1)

    monkeypatch.setattr(_sandbox.subprocess, "run", slow)
    assert "did not start" in (probe(os.geteuid() == 0) or "")
    monkeypatch.setattr(_sandbox.subprocess, "run", real_run)
    assert probe(os.geteuid() == 0) is None


def test_a_python_under_tmp_stays_visible_above_the_sandboxs_tmp(monkeypatch: pytest.MonkeyPatch) -> None:
    """A checkout (and its venv) under /tmp: the sandbox's own /tmp is mounted first, the Python binds above it."""
    import sys

    from consulta.sandbox import _sandbox

    monkeypatch.setattr(sys, "prefix", "/tmp/some-checkout/.venv")
    args = _sandbox._base_args(as_root=os.geteuid() == 0)
    tmpfs = args.index("--tmpfs")
    bind = next(i for i, a in enumerate(args) if a == "--ro-bind" and args[i + 1] == "/tmp/some-checkout/.venv")
    assert tmpfs < bind
