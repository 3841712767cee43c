"""The team's scripts run in the sandbox: outputs come back into the workspace only when the script ran to its end;
no network, no files outside; every run recorded next to its script."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from consulta.apps.modeling._sandbox_run import run_record, run_script
from consulta.runtime import ToolError


def _workspace(tmp_path: Path, script: str, name: str = "fit.py") -> Path:
    (tmp_path / "code").mkdir()
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "demand.csv").write_text("year,demand\n2020,10\n2021,12\n2022,15\n", encoding="utf-8")
    (tmp_path / "code" / name).write_text(script, encoding="utf-8")
    return tmp_path


def test_a_script_reads_the_data_and_its_results_and_figures_come_back(tmp_path: Path) -> None:
    workspace = _workspace(
        tmp_path,
        """
import pandas as pd
import matplotlib.pyplot as plt
frame = pd.read_csv("data/demand.csv")
slope = (frame.demand.iloc[-1] - frame.demand.iloc[0]) / 2
pd.DataFrame({"metric": ["slope"], "value": [slope]}).to_csv("results/metrics.csv", index=False)
fig, ax = plt.subplots()
ax.plot(frame.year, frame.demand)
ax.set_title("用电需求")
fig.savefig("figures/demand.png")
open("scratch.txt", "w").write("dropped")
print("slope", slope)
""",
    )
    run = run_script(workspace, Path("code/fit.py"))
    assert run.ok and run.returncode == 0, run
    assert run.outputs == ["figures/demand.png", "results/metrics.csv"]
    assert run.dropped == ["scratch.txt"] and "slope 2.5" in run.stdout
    assert (workspace / "results" / "metrics.csv").read_text(encoding="utf-8") == "metric,value\nslope,2.5\n"
    assert (workspace / "figures" / "demand.png").read_bytes().startswith(b"\x89PNG")
    assert not (workspace / "scratch.txt").exists()
    record = json.loads((workspace / "code" / "fit.run.json").read_text(encoding="utf-8"))
    assert record["ok"] and record["outputs"] == run.outputs and run_record(workspace / "code" / "fit.py") == run


def test_a_failing_script_changes_nothing_and_says_why(tmp_path: Path) -> None:
    workspace = _workspace(
        tmp_path,
        'open("results/partial.csv", "w").write("a\\n1\\n")\nimport pandas as pd\npd.read_csv("data/nope.csv")\n',
    )
    run = run_script(workspace, workspace / "code" / "fit.py")
    assert not run.ok and run.returncode == 1 and run.outputs == []
    assert run.error is not None and run.error.startswith("FileNotFoundError") and "(line 3)" in run.error
    assert not (workspace / "results").exists()
    assert run_record(workspace / "code" / "fit.py").ok is False  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("script", "words"),
    [
        ('import socket\nsocket.create_connection(("example.com", 80), timeout=2)\n', "network"),
        ('open("/etc/hostname").read()\n', "work folder"),
        ('open("../../outside.txt", "w").write("x")\n', "work folder"),
        ('import subprocess\nsubprocess.run(["ls"])\n', "processes"),
    ],
)
def test_no_network_no_files_outside_no_processes(tmp_path: Path, script: str, words: str) -> None:
    run = run_script(_workspace(tmp_path, script), Path("code/fit.py"))
    assert not run.ok and "PermissionError" in (run.error or "") and words in (run.error or "")


def test_a_script_past_its_time_is_stopped(tmp_path: Path) -> None:
    run = run_script(_workspace(tmp_path, "while True:\n    pass\n"), Path("code/fit.py"), timeout=1.5)
    assert not run.ok and run.stopped in ("wall_time", "cpu_time") and run.returncode < 0


@pytest.mark.parametrize("script", ["../data/demand.csv", "code/missing.py", "/etc/passwd", "data/demand.csv"])
def test_a_script_outside_code_or_missing_is_refused_before_running(tmp_path: Path, script: str) -> None:
    workspace = _workspace(tmp_path, "print(1)\n")
    with pytest.raises(ToolError) as raised:
        run_script(workspace, Path(script))
    assert raised.value.error_code in ("script_outside_code", "script_not_found")
    assert not (workspace / "code" / "fit.run.json").exists()


def test_only_regular_files_of_their_own_come_back_never_a_link(tmp_path: Path) -> None:
    secret = tmp_path / "secret.csv"
    secret.write_text("password,hunter2\n", encoding="utf-8")
    (tmp_path / "ws").mkdir()
    workspace = _workspace(
        tmp_path / "ws",
        f"""
import os, shutil
open("results/own.csv", "w").write("a,b\\n1,2\\n")
os.symlink("/etc/passwd", "results/passwd.csv")
os.symlink({str(secret)!r}, "results/secret.csv")
os.symlink("../../outside.png", "figures/up.png")
open("results/twin.csv", "w").write("a\\n1\\n")
os.link("results/twin.csv", "results/twin2.csv")  # a file with two names is nobody's own
shutil.rmtree("figures")
os.symlink("/", "figures")  # a folder swapped for a link to the root is not walked
""",
    )
    run = run_script(workspace, Path("code/fit.py"))
    assert run.ok, run
    assert run.outputs == ["results/own.csv"]
    assert {"results/passwd.csv", "results/secret.csv", "results/twin.csv", "results/twin2.csv", "figures"} <= set(
        run.dropped
    )
    assert not any(p.is_symlink() for p in workspace.rglob("*"))
    assert sorted(p.name for p in (workspace / "results").iterdir()) == ["own.csv"]
    assert secret.read_text(encoding="utf-8") == "password,hunter2\n"


def test_a_runs_script_cannot_list_read_change_or_use_another_runs_workspace(tmp_path: Path) -> None:
    other = tmp_path / "runs" / "problem-0123456789" / "run_alice"
    (other / "results").mkdir(parents=True)
    (other / "results" / "forecast.csv").write_text("month,gwh\n2024-01,10\n", encoding="utf-8")
    (tmp_path / "mine").mkdir()
    workspace = _workspace(
        tmp_path / "mine",
        f"""
import ctypes, os, shutil
libc = ctypes.CDLL(None)
theirs = {str(other)!r}
seen = []
for name, act in [
    ("list", lambda: os.listdir(theirs)),
    ("read", lambda: open(theirs + "/results/forecast.csv").read()),
    ("libc_read", lambda: libc.fopen((theirs + "/results/forecast.csv").encode(), b"r") or None),
    ("change", lambda: open(theirs + "/results/forecast.csv", "w").write("month,gwh\\n")),
    ("remove", lambda: libc.unlink((theirs + "/results/forecast.csv").encode())),
    ("use", lambda: shutil.copy(theirs + "/results/forecast.csv", "results/stolen.csv")),
]:
    try:
        seen.append(f"{{name}}:{{act()}}")
    except Exception as error:
        seen.append(f"{{name}}:{{type(error).__name__}}")
print(" ".join(seen))
""",
    )
    run = run_script(workspace, Path("code/fit.py"))
    said = dict(part.split(":", 1) for part in run.stdout.split())
    assert said["list"] in ("FileNotFoundError", "PermissionError") and said["libc_read"] == "None", run.stdout
    assert said["remove"] == "-1" and all(
        said[k] in ("FileNotFoundError", "PermissionError") for k in ("read", "change", "use")
    )
    assert (other / "results" / "forecast.csv").read_text(encoding="utf-8") == "month,gwh\n2024-01,10\n"
    assert not (workspace / "results" / "stolen.csv").exists()


def test_without_the_os_sandbox_a_script_is_refused_and_nothing_is_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from consulta.i18n import t
    from consulta.sandbox import SandboxUnavailable, _sandbox

    workspace = _workspace(tmp_path, "open('results/x.csv', 'w').write('a\\n1\\n')")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))  # no bwrap to be found
    _sandbox._probe.cache_clear()
    try:
        with pytest.raises(SandboxUnavailable):
            run_script(workspace, Path("code/fit.py"))
    finally:
        monkeypatch.undo()
        _sandbox._probe.cache_clear()
    assert run_record(workspace / "code" / "fit.py") is None and not (workspace / "results").exists()
    for lang, words in (("en", "was not run"), ("zh-CN", "没有运行")):  # what the run says instead (run_team)
        assert words in t("modeling.error.sandbox_unavailable", lang)
