"""A kill at any instant of applying a plan leaves the inventory, its audit log and the plan agreeing.

The apply path has named crash points (`consulta.runtime.crash_point`, chosen by `CONSULTA_CRASH_AT`); a child
process dies by SIGKILL at one of them, then recovery runs and the invariant is checked. After every kill exactly
one of two states holds once recovery has run:

- *before*: the file unchanged, no audit entry of the plan, the plan still to apply (applying it then writes it
  once);
- *after*: the file holding the plan's change, exactly one audit entry per operation, the plan applied (the run is
  told "done").

And always: no journal, no temporary draft left, every audit line readable.

Two layers: `apply_plan` itself (a driver process forks one child per trial: a two-operation plan on the tiny
inventory, many trials per point), and the whole path through the terminal (`consulta answer PLAN approve` killed,
then `consulta resume RUN`, on the scripted model).
"""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from importlib import resources
from pathlib import Path

import pytest
import sqlalchemy as sa

from consulta._files import write_atomic
from consulta.apps.ln2._audit import audit_log_path, backup_dir, journal_path, plan_entries, read_audit
from consulta.apps.ln2._operations import AddEntry, RecordThaw, apply_plan, reconcile_plan
from consulta.runtime import CRASH_AT_ENV, AskStatus, PlanStatus, RunStatus, Store, ToolError
from consulta.runtime._store import runs

from .test_inventory import TODAY, sha, tiny_copy

BEFORE_POINTS = ["before_backup", "after_backup", "after_journal", "before_rename"]
"""Crash points of `apply_plan` before the file is replaced: recovery leaves the plan unapplied."""
AFTER_POINTS = ["after_rename", "after_audit", "after_apply"]
"""Crash points of `apply_plan` once the file is replaced: recovery finishes the plan."""
TRIALS = 5

PLAN_ID = "plan_killsuite"
OPS = [
    AddEntry(parent_cell_line="Jurkat", box=1, positions=[3], frozen_at="2025-07-01"),
    RecordThaw(record_id=1, positions=[1], date="2025-07-15"),
]

# A single-threaded process that forks one child per job (fork is safe there): the child applies the plan with
# CONSULTA_CRASH_AT set; the driver reports how it ended.
_DRIVER = r"""
import datetime as dt, json, os, sys, traceback
from consulta.apps.ln2._operations import apply_plan, parse_op
from consulta.runtime import CRASH_AT_ENV
for line in sys.stdin:
    job = json.loads(line)
    pid = os.fork()
    if pid == 0:
        os.environ[CRASH_AT_ENV] = job["point"]
        try:
            apply_plan(job["path"], [parse_op(o) for o in job["ops"]], plan_id=job["plan_id"], actor="kill-suite",
                       today=dt.date.fromisoformat(job["today"]))
        except BaseException:
            traceback.print_exc()
            os._exit(3)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    ended = {"signal": os.WTERMSIG(status)} if os.WIFSIGNALED(status) else {"code": os.WEXITSTATUS(status)}
    print(json.dumps(ended), flush=True)
"""


class Driver:
    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _DRIVER],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def apply(self, path: Path, point: str) -> dict[str, int]:
        """Apply OPS to `path` in a child that dies at `point`; how the child ended."""
        ops = [op.model_dump(mode="json") for op in OPS]
        job = {"path": str(path), "point": point, "ops": ops, "plan_id": PLAN_ID, "today": TODAY.isoformat()}
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(job) + "\n")
        self.proc.stdin.flush()
        ready, _, _ = select.select([self.proc.stdout], [], [], 60)
        assert ready, "the driver did not answer within 60 s"
        line = self.proc.stdout.readline()
        assert line, self.proc.stderr.read() if self.proc.stderr else "the driver died"
        return json.loads(line)

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait(timeout=10)


@pytest.fixture(scope="module")
def driver() -> Iterator[Driver]:
    d = Driver()
    try:
        yield d
    finally:
        d.close()


@pytest.fixture(scope="module")
def intended(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """The bytes the plan leaves when nothing interrupts it."""
    path = tiny_copy(tmp_path_factory.mktemp("intended"))
    apply_plan(path, OPS, plan_id=PLAN_ID, actor="kill-suite", today=TODAY)
    return path.read_bytes()


def leftovers(path: Path) -> list[Path]:
    """What an interrupted write may leave beside the inventory: its journal, drafts of the file or a backup."""
    folder = path.parent
    drafts = [p for p in folder.iterdir() if p.name.endswith(".tmp")]
    drafts += [p for p in backup_dir(path).glob("*.tmp")] if backup_dir(path).exists() else []
    return drafts + ([journal_path(path)] if journal_path(path).exists() else [])


def assert_agree(path: Path, *, applied: bool, before: bytes, intended: bytes) -> None:
    """One of the two states, and nothing left over."""
    log = read_audit(path)
    assert log.skipped == []
    entries = [e for e in log.entries if e.plan_id == PLAN_ID]
    if applied:
        assert path.read_bytes() == intended
        assert [e.op for e in entries] == ["add_entry", "record_thaw"]  # exactly one per operation
        assert {(e.before_sha256, e.after_sha256) for e in entries} == {(sha(before), sha(intended))}
    else:
        assert path.read_bytes() == before
        assert entries == []
    assert leftovers(path) == []


@pytest.mark.parametrize("trial", range(TRIALS))
@pytest.mark.parametrize("point", BEFORE_POINTS + AFTER_POINTS)
def test_a_kill_while_applying_leaves_one_of_two_states(
    tmp_path: Path, driver: Driver, intended: bytes, point: str, trial: int
) -> None:
    path = tiny_copy(tmp_path)
    before = path.read_bytes()
    assert driver.apply(path, point) == {"signal": signal.SIGKILL}  # it died there: the point is on the path
    applied = point in AFTER_POINTS
    assert path.read_bytes() == (intended if applied else before)  # a reader never sees a third state
    if point == "before_rename":
        assert any(p.name.endswith(".tmp") for p in leftovers(path))  # the draft, left for recovery to remove

    result = reconcile_plan(path, PLAN_ID)

    assert_agree(path, applied=applied, before=before, intended=intended)
    if applied:
        assert result is not None and result.audit_ids == [e.audit_id for e in plan_entries(path, PLAN_ID)]
        assert reconcile_plan(path, PLAN_ID) == result  # settled: asking again changes nothing
    else:
        assert result is None
        # The plan is still to apply, and applying it now writes it once.
        applied_now = apply_plan(path, OPS, plan_id=PLAN_ID, actor="kill-suite", today=TODAY)
        assert len(applied_now.audit_ids) == 2
        assert_agree(path, applied=True, before=before, intended=intended)


@pytest.mark.parametrize("point", ["after_rename", "before_rename"])
def test_the_next_write_settles_an_interrupted_one_first(
    tmp_path: Path, driver: Driver, intended: bytes, point: str
) -> None:
    """Another plan applied after a kill (no reconcile asked for) finds the interrupted one settled first."""
    path = tiny_copy(tmp_path)
    before = path.read_bytes()
    assert driver.apply(path, point) == {"signal": signal.SIGKILL}
    other = RecordThaw(record_id=3, positions=[3], date="2025-07-20")
    apply_plan(path, [other], plan_id="plan_other", actor="kill-suite", today=TODAY)
    entries = read_audit(path).entries
    expected = ["add_entry", "record_thaw"] if point == "after_rename" else []
    assert [e.op for e in entries if e.plan_id == PLAN_ID] == expected
    [last] = [e for e in entries if e.plan_id == "plan_other"]
    assert last.before_sha256 == sha(intended if point == "after_rename" else before)
    assert leftovers(path) == []


def test_a_torn_audit_append_is_finished_with_one_entry_per_operation(
    tmp_path: Path, driver: Driver, intended: bytes
) -> None:
    """Killed while appending: the first entry whole, the second torn. Recovery adds the missing one, once."""
    path = tiny_copy(tmp_path)
    before = path.read_bytes()
    assert driver.apply(path, "after_audit") == {"signal": signal.SIGKILL}
    log = audit_log_path(path)
    lines = log.read_bytes().splitlines(keepends=True)
    log.write_bytes(lines[0] + lines[1][:40])
    result = reconcile_plan(path, PLAN_ID)
    assert result is not None and len(result.audit_ids) == 2
    entries = read_audit(path)
    assert [e.op for e in entries.entries] == ["add_entry", "record_thaw"] and len(entries.skipped) == 1
    assert path.read_bytes() == intended and leftovers(path) == []
    assert before != intended


def test_a_damaged_journal_means_the_file_was_never_replaced(tmp_path: Path) -> None:
    path = tiny_copy(tmp_path)
    before = path.read_bytes()
    journal_path(path).write_text('{"plan_id": "plan_killsuite", "before_sha', encoding="utf-8")
    assert reconcile_plan(path, PLAN_ID) is None
    assert path.read_bytes() == before and leftovers(path) == [] and read_audit(path).entries == []


# ---- a read-only inventory ------------------------------------------------------------------------------------


def test_a_read_only_inventory_is_not_replaced(tmp_path: Path) -> None:
    path = tiny_copy(tmp_path)
    before = path.read_bytes()
    path.chmod(0o444)
    listing = sorted(p.name for p in tmp_path.iterdir())
    with pytest.raises(ToolError) as info:
        apply_plan(path, OPS, plan_id=PLAN_ID, actor="kill-suite", today=TODAY)
    assert info.value.error_code == "inventory_read_only"
    assert "read-only (mode 444)" in info.value.message and "chmod u+w" in (info.value.hint or "")
    assert path.read_bytes() == before and oct(path.stat().st_mode & 0o777) == "0o444"
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.endswith(".lock")) == [
        n for n in listing if not n.endswith(".lock")
    ]  # no backup, no journal, no audit log
    path.chmod(0o644)
    assert len(apply_plan(path, OPS, plan_id=PLAN_ID, actor="kill-suite", today=TODAY).audit_ids) == 2


def test_the_atomic_write_does_not_replace_a_read_only_file(tmp_path: Path) -> None:
    target = tmp_path / "kept.yaml"
    target.write_bytes(b"old")
    target.chmod(0o444)
    with pytest.raises(PermissionError, match=r"kept.yaml is read-only \(mode 444\)"):
        write_atomic(target, b"new")
    assert target.read_bytes() == b"old" and sorted(p.name for p in tmp_path.iterdir()) == ["kept.yaml"]


# ---- the whole path, through the terminal ------------------------------------------------------------------------

SCRIPT = resources.files("consulta.apps.ln2").joinpath("data", "scripts", "ambiguous_thaw.yaml")
CONSULTA = [sys.executable, "-m", "consulta"]
CLI_POINTS = [*BEFORE_POINTS, *AFTER_POINTS, "after_plan_status"]
"""Every crash point of the path: `apply_plan`'s, and the runtime's once the plan is recorded applied."""
CLI_TRIALS = 2


def _consulta(
    home: Path, *args: str, crash_at: str | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, CONSULTA_HOME=str(home), CONSULTA_LANG="en", COLUMNS="200", PYTHONUNBUFFERED="1")
    env.pop(CRASH_AT_ENV, None)
    if crash_at is not None:
        env[CRASH_AT_ENV] = crash_at
    return subprocess.run(
        [*CONSULTA, *args],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


class Staged:
    """A CONSULTA_HOME whose run waits for the approval of its plan (record_thaw of record 9, position 1)."""

    def __init__(self, home: Path) -> None:
        self.home = home
        with resources.as_file(SCRIPT) as script:
            started = _consulta(home, "chat", "ln2", "--model", f"scripted:{script}", "-p", "帮我取一管K562")
        assert started.returncode == 0, started.stdout + started.stderr
        store = self.store()
        try:
            (question,) = store.list_asks()
            answered = _consulta(home, "answer", question.id, "2")
            assert answered.returncode == 0, answered.stdout + answered.stderr
            (self.plan_ask,) = store.list_asks()
            assert self.plan_ask.kind == "plan"
            self.run_id = question.run_id
            self.plan_id = self.plan_ask.payload["plan_id"]
        finally:
            store.close()

    def store(self, home: Path | None = None) -> Store:
        return Store(f"sqlite:///{(home or self.home) / 'consulta.db'}")

    def copy(self, target: Path) -> Path:
        """A copy of the home whose run works on the copy's inventory (a run records its inventory's full path)."""
        shutil.copytree(self.home, target)
        store = self.store(target)
        try:
            with store.engine.begin() as conn:
                for run_id, options in conn.execute(sa.select(runs.c.id, runs.c.options)).all():
                    moved = options.replace(str(self.home), str(target))
                    conn.execute(sa.update(runs).where(runs.c.id == run_id).values(options=moved))
        finally:
            store.close()
        return target


def inventory(home: Path) -> Path:
    return home / "apps" / "ln2" / "inventory.yaml"


@pytest.fixture(scope="module")
def staged(tmp_path_factory: pytest.TempPathFactory) -> Staged:
    return Staged(tmp_path_factory.mktemp("staged") / "home")


@pytest.fixture(scope="module")
def approved(staged: Staged, tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """The inventory's bytes once the plan is approved and nothing interrupts it."""
    home = staged.copy(tmp_path_factory.mktemp("approved") / "home")
    done = _consulta(home, "answer", staged.plan_ask.id, "approve")
    assert done.returncode == 0, done.stdout + done.stderr
    return inventory(home).read_bytes()


def _trials() -> list[object]:
    """Every point once in the README's test command; the second trial of each in the thorough pass (`kill_long`):
    each trial starts `consulta` three times."""
    return [
        pytest.param(point, trial, marks=[pytest.mark.kill_long] if trial else [])
        for point in CLI_POINTS
        for trial in range(CLI_TRIALS)
    ]


@pytest.mark.slow
@pytest.mark.subprocess  # subprocesses killed and run again: still run by scripts/test
@pytest.mark.parametrize(("point", "trial"), _trials())
def test_consulta_answer_killed_anywhere_then_resumed_tells_the_truth(
    staged: Staged, approved: bytes, tmp_path: Path, point: str, trial: int
) -> None:
    home = staged.copy(tmp_path / "home")
    path = inventory(home)
    before = path.read_bytes()

    killed = _consulta(home, "answer", staged.plan_ask.id, "approve", crash_at=point)
    assert killed.returncode == -signal.SIGKILL, killed.stdout + killed.stderr
    changed = point not in BEFORE_POINTS
    assert path.read_bytes() == (approved if changed else before)
    if point == "before_rename":  # one trial is enough to show it (each `consulta` takes seconds)
        # Approving again says the approval is on record and how to go on; nothing is written.
        again = _consulta(home, "answer", staged.plan_ask.id, "approve")
        assert again.returncode == 2 and "already answered" in again.stdout
        assert f"consulta resume {staged.run_id}" in again.stdout
        assert path.read_bytes() == before

    resumed = _consulta(home, "resume", staged.run_id)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    out = resumed.stdout
    assert "Not applied" not in out and "未执行" not in out
    store = staged.store(home)
    try:
        run = store.get_run(staged.run_id)
        plan = store.get_plan(staged.plan_id)
        assert (run.status, plan.status) == (RunStatus.finished, PlanStatus.applied)
        assert run.output is not None and run.output.startswith("已完成")  # "Done": the run is told it was applied
        assert store.get_ask(staged.plan_ask.id).status == AskStatus.answered
        # Once, whoever applied it: the file holds the change, one audit entry for the one operation.
        assert path.read_bytes() == approved
        entries = read_audit(path)
        assert entries.skipped == [] and [(e.plan_id, e.op) for e in entries.entries] == [
            (staged.plan_id, "record_thaw")
        ]
        assert entries.entries[0].audit_id in json.dumps(plan.result)
        assert leftovers(path) == []

        if point == "after_rename":  # one trial is enough to show it (each `consulta` takes seconds)
            # Approving again is refused and writes nothing more.
            again = _consulta(home, "answer", staged.plan_ask.id, "approve")
            assert again.returncode == 2 and "already answered" in again.stdout
            assert path.read_bytes() == approved and len(read_audit(path).entries) == 1
    finally:
        store.close()


@pytest.mark.subprocess  # `consulta chat` stages the plan, `consulta answer` applies it: run by scripts/test
def test_a_read_only_inventory_fails_the_plan_and_the_command(staged: Staged, tmp_path: Path) -> None:
    home = staged.copy(tmp_path / "home")
    path = inventory(home)
    before = path.read_bytes()
    path.chmod(0o444)
    refused = _consulta(home, "answer", staged.plan_ask.id, "approve")
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert "read-only (mode 444)" in refused.stdout and "Traceback" not in refused.stdout + refused.stderr
    store = staged.store(home)
    try:
        assert store.get_plan(staged.plan_id).status == PlanStatus.failed
        run = store.get_run(staged.run_id)
        assert run.status == RunStatus.failed and "read-only" in (run.error or "")
    finally:
        store.close()
    assert path.read_bytes() == before and read_audit(path).entries == [] and leftovers(path) == []


@pytest.mark.subprocess  # two `consulta answer` processes at once: run by scripts/test
@pytest.mark.parametrize("round_", range(2))
def test_two_processes_approving_one_plan_at_once_apply_it_once(
    staged: Staged, approved: bytes, tmp_path: Path, round_: int
) -> None:
    home = staged.copy(tmp_path / "home")
    env = dict(os.environ, CONSULTA_HOME=str(home), CONSULTA_LANG="en", COLUMNS="200")
    env.pop(CRASH_AT_ENV, None)
    procs = [
        subprocess.Popen(
            [*CONSULTA, "answer", staged.plan_ask.id, "approve"],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for _ in range(2)
    ]
    try:
        outputs = [p.communicate(timeout=90)[0] for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    codes = sorted(p.returncode for p in procs)
    assert codes == [0, 2], outputs  # exactly one wins; the other is told the ask is already answered
    assert any("already answered" in out for out in outputs)
    path = inventory(home)
    assert path.read_bytes() == approved
    assert [(e.plan_id, e.op) for e in read_audit(path).entries] == [(staged.plan_id, "record_thaw")]
    store = staged.store(home)
    try:
        assert store.get_plan(staged.plan_id).status == PlanStatus.applied
        assert store.get_run(staged.run_id).status == RunStatus.finished
    finally:
        store.close()
