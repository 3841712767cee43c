"""ln2 audit log, backups and rollback: exact bytes restored, rollbacks audited and undoable, damage handled."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from consulta.apps.ln2._audit import audit_log_path, backup_dir, read_audit, resolve_rollback
from consulta.apps.ln2._inventory import load_inventory
from consulta.apps.ln2._operations import AddEntry, RecordThaw, Rollback, apply_plan, preview
from consulta.runtime._errors import ToolError

from .test_inventory import TODAY, sample_copy, sha, snapshot, tiny_copy


def thaw_plan(path: Path, plan_id: str, record_id: int, positions: list[int]) -> list[str]:
    ops = [RecordThaw(record_id=record_id, positions=positions, date="2025-07-20", note=f"{plan_id} 复苏")]
    return apply_plan(path, ops, plan_id=plan_id, actor="tester", today=TODAY).audit_ids


def rollback(path: Path, audit_id: str, plan_id: str = "p_rb"):
    return apply_plan(path, [Rollback(audit_id=audit_id)], plan_id=plan_id, actor="tester", today=TODAY)


def test_rollback_restores_exact_bytes_and_can_itself_be_rolled_back(tmp_path: Path) -> None:
    path = sample_copy(tmp_path)
    original = path.read_bytes()
    assert b"# ---- Box 2" in original and "张三冻存".encode() in original
    plan = [
        RecordThaw(record_id=9, positions=[1, 2], date="2025-07-31", note="time course"),
        AddEntry(
            parent_cell_line="K562-dTAG",
            short_name="K562-dTAG-BRD4",
            box=2,
            positions=[1, 2],
            frozen_at="2025-07-31",
            note="李四冻存",
        ),
    ]
    applied = apply_plan(path, plan, plan_id="p_1", actor="tester", today=TODAY)
    changed = path.read_bytes()
    assert sha(changed) == applied.after_sha256 != sha(original)

    undo = rollback(path, applied.audit_ids[1])  # any entry of the plan restores the state before the whole plan
    assert path.read_bytes() == original
    assert sha(path.read_bytes()) == sha(original) == undo.after_sha256
    assert undo.before_sha256 == applied.after_sha256
    assert undo.audit_ids == ["a_000003"]
    assert (tmp_path / undo.backup).read_bytes() == changed
    assert undo.summaries[0].startswith("Roll back a_000002 (Add record 41: K562-dTAG / K562-dTAG-BRD4")
    assert undo.summaries[0].endswith("before plan p_1, undoing 2 audit entries (a_000001..a_000002).")

    entry = read_audit(path).entries[-1]
    assert (entry.op, entry.args, entry.plan_id) == ("rollback", {"audit_id": "a_000002"}, "p_rb")

    redo = rollback(path, "a_000003", plan_id="p_redo")
    assert path.read_bytes() == changed
    assert redo.audit_ids == ["a_000004"]
    # Three states, each stored once although the original was backed up twice.
    assert sorted(p.name for p in backup_dir(path).iterdir()) == sorted(
        f"{sha(data)}.yaml" for data in (original, changed)
    )


def test_rollback_of_an_older_entry_undoes_later_plans_too(tmp_path: Path) -> None:
    path = tiny_copy(tmp_path)
    states = [path.read_bytes()]
    for plan_id, record_id, pos in (("p_1", 1, 1), ("p_2", 3, 2), ("p_3", 5, 9)):
        thaw_plan(path, plan_id, record_id, [pos])
        states.append(path.read_bytes())
    assert len({sha(s) for s in states}) == 4
    inv = load_inventory(path)
    assert preview(inv, [Rollback(audit_id="a_000002")], path=path) == [
        "Roll back a_000002 (Thaw on 2025-07-20: record 3 (K562-RTCB-KO-c3), box 2 at 2 (A2) (2 tubes left)): "
        "restore the file as it was before plan p_2, undoing 2 audit entries (a_000002..a_000003)."
    ]
    rollback(path, "a_000002")
    assert path.read_bytes() == states[1]
    target = resolve_rollback(path, "a_000004")
    assert target.data == states[3] and target.undone == ["a_000004"]


def test_rollback_to_the_current_state_is_refused(tmp_path: Path) -> None:
    path = tiny_copy(tmp_path)
    [audit_id] = thaw_plan(path, "p_1", 1, [1])
    rollback(path, audit_id)
    before = snapshot(tmp_path)
    with pytest.raises(ToolError) as info:
        rollback(path, audit_id)  # the file is already as it was before p_1
    assert info.value.error_code == "invalid_argument"
    assert snapshot(tmp_path) == before


def test_unknown_audit_entry_changes_nothing(tmp_path: Path) -> None:
    path = tiny_copy(tmp_path)
    thaw_plan(path, "p_1", 1, [1])
    before = snapshot(tmp_path)
    with pytest.raises(ToolError) as info:
        rollback(path, "a_000099")
    err = info.value
    assert (err.error_code, err.field) == ("unknown_audit_entry", "audit_id")
    assert "a_000099" in err.message and "a_000001..a_000001" in err.message and err.hint
    assert snapshot(tmp_path) == before


@pytest.mark.parametrize("damage", ["missing", "altered"])
def test_missing_or_damaged_backup_is_refused(tmp_path: Path, damage: str) -> None:
    path = tiny_copy(tmp_path)
    [audit_id] = thaw_plan(path, "p_1", 1, [1])
    backup = tmp_path / read_audit(path).entries[0].backup
    if damage == "missing":
        backup.unlink()
    else:
        backup.write_bytes(backup.read_bytes().replace(b"K562", b"K563"))
    before = snapshot(tmp_path)
    with pytest.raises(ToolError) as info:
        rollback(path, audit_id)
    assert info.value.error_code == "inventory_file_error"
    assert ("missing" if damage == "missing" else "damaged") in info.value.message
    assert snapshot(tmp_path) == before


def test_a_damaged_backup_is_rewritten_when_the_state_is_backed_up_again(tmp_path: Path) -> None:
    path = tiny_copy(tmp_path)
    original = path.read_bytes()
    thaw_plan(path, "p_1", 1, [1])
    backup = tmp_path / read_audit(path).entries[0].backup
    backup.write_bytes(b"garbage")
    path.write_bytes(original)  # a person restores the file by hand...
    thaw_plan(path, "p_2", 1, [2])  # ...and the next plan backs the same state up again
    assert backup.read_bytes() == original


def test_corrupt_audit_lines_are_skipped_and_reported(tmp_path: Path) -> None:
    path = tiny_copy(tmp_path)
    thaw_plan(path, "p_1", 1, [1])
    log = audit_log_path(path)
    good = log.read_text(encoding="utf-8")
    log.write_text(
        good + "{not json\n" + json.dumps({"audit_id": "a_000005", "op": "x"}) + "\n\n" + '{"audit_id": "a_0000',
        encoding="utf-8",
    )
    result = read_audit(path)
    assert [e.audit_id for e in result.entries] == ["a_000001"]
    assert [s.line for s in result.skipped] == [2, 3, 5]
    assert "not JSON" in result.skipped[0].reason and "not an audit entry" in result.skipped[1].reason
    # Appending after a torn line starts a fresh line and never reuses an id seen in a damaged line.
    assert thaw_plan(path, "p_2", 1, [2]) == ["a_000006"]
    again = read_audit(path)
    assert [e.audit_id for e in again.entries] == ["a_000001", "a_000006"]
    assert len(again.skipped) == 3
    assert rollback(path, "a_000006").audit_ids == ["a_000007"]


def test_read_audit_limit_and_missing_log(tmp_path: Path) -> None:
    path = tiny_copy(tmp_path)
    assert read_audit(path).entries == [] and read_audit(path).skipped == []
    for i, pos in enumerate((1, 2), start=1):
        thaw_plan(path, f"p_{i}", 1, [pos])
    thaw_plan(path, "p_3", 3, [1])
    assert [e.audit_id for e in read_audit(path, limit=2).entries] == ["a_000002", "a_000003"]
    assert [e.plan_id for e in read_audit(path).entries] == ["p_1", "p_2", "p_3"]
