"""The ln2 inventory file: models, round-trip loading/rendering, file errors, position labels.

Also holds the small helpers the other ln2 test modules import (sample copy, tiny inventory, snapshots).
"""

from __future__ import annotations

import datetime as dt
import difflib
import hashlib
import shutil
import textwrap
from pathlib import Path

import pytest

from consulta.apps.ln2._inventory import (
    BoxLayout,
    InventoryFile,
    describe_position,
    load_inventory,
    occupancy,
    position_label,
)
from consulta.apps.ln2._operations import AddEntry, RecordThaw, apply_plan
from consulta.runtime._errors import ToolError

SAMPLE = Path(__file__).parents[3] / "src" / "consulta" / "apps" / "ln2" / "data" / "sample_inventory.yaml"
TODAY = dt.date(2025, 8, 1)

TINY = textwrap.dedent(
    """\
    # tiny test inventory
    meta:
      box_layout: {rows: 3, cols: 3}
      box_count: 2
    inventory:
      # box 1
      - id: 1
        parent_cell_line: K562
        short_name: K562-WT
        box: 1
        positions: [1, 2]   # top left
        frozen_at: '2025-01-10'
        note: 张三冻存, 复苏后状态良好
      - id: 2
        parent_cell_line: K562-dTAG
        short_name: K562-dTAG-BRD4
        plasmid_name: pLEX-dTAG-BRD4
        plasmid_id: P0123
        box: 1
        positions: [5]
        frozen_at: '2025-02-01'
      # box 2
      - id: 3
        parent_cell_line: K562-RTCB
        short_name: K562-RTCB-KO-c3
        box: 2
        positions: [1, 2, 3]
        frozen_at: '2025-03-01'
        note: RTCB knockout clone 3
      - id: 4
        parent_cell_line: HeLa
        box: 2
        positions: []
        frozen_at: '2024-05-05'
        thaw_events:
          - {date: '2024-06-01', action: thaw, positions: [4]}
          - {date: '2024-07-01', action: discard, positions: [5], note: contaminated}
      - id: 5
        parent_cell_line: HEK293T
        box: 2
        positions: [9]
        frozen_at: '2025-04-01'
    """
)


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sample_copy(folder: Path) -> Path:
    """A private copy of the shipped sample inventory."""
    target = folder / "inventory.yaml"
    shutil.copyfile(SAMPLE, target)
    return target


def tiny_copy(folder: Path, text: str = TINY) -> Path:
    """The tiny 2-box, 3×3 inventory above, written to `folder`."""
    target = folder / "tiny.yaml"
    target.write_text(text, encoding="utf-8")
    return target


def snapshot(folder: Path) -> dict[str, str]:
    """sha256 of every file under `folder` (hidden ones included) except the lock file, which writers may create."""
    return {
        str(p.relative_to(folder)): sha(p.read_bytes())
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.name.endswith(".lock")
    }


# --------------------------------------------------------------------------------------------------------------


def test_sample_round_trip_is_byte_identical() -> None:
    file = InventoryFile.load(SAMPLE)
    assert file.render() == SAMPLE.read_bytes()
    assert file.sha256 == sha(SAMPLE.read_bytes())


def test_sample_is_a_realistic_inventory() -> None:
    inv = load_inventory(SAMPLE)
    assert inv.meta.box_count == 5 and (inv.layout.rows, inv.layout.cols) == (9, 9)
    assert 35 <= len(inv.records) <= 45
    assert len({r.id for r in inv.records}) == len(inv.records)
    held = [(r.box, p) for r in inv.records for p in r.positions]
    assert len(held) == len(set(held)) == len(occupancy(inv))
    for line in ("K562", "K562-dTAG", "K562-RTCB"):
        assert any(r.parent_cell_line == line and r.positions for r in inv.records), line
    lines = {r.parent_cell_line for r in inv.records}
    assert {"HEK293T", "HeLa", "Jurkat"} <= lines and any(name.startswith("iPSC") for name in lines)
    consumed = [r for r in inv.records if r.consumed]
    assert len(consumed) >= 3 and all(r.thaw_events for r in consumed)
    assert {e.action for r in inv.records for e in r.thaw_events} == {"thaw", "takeout", "discard"}
    assert any("张三冻存" in (r.note or "") for r in inv.records)
    assert any(r.short_name and r.short_name.startswith("K562-dTAG-") for r in inv.records)
    text = SAMPLE.read_text(encoding="utf-8")
    assert text.count("\n  # ---- Box") == 5


def test_tiny_round_trip_and_models() -> None:
    file = InventoryFile.from_bytes(TINY.encode())
    assert file.render() == TINY.encode()
    inv = file.inventory
    assert [r.id for r in inv.records] == [1, 2, 3, 4, 5]
    hela = inv.record(4)
    assert hela is not None and hela.consumed and hela.short_name is None
    assert [(e.action, e.positions, e.note) for e in hela.thaw_events] == [
        ("thaw", [4], None),
        ("discard", [5], "contaminated"),
    ]
    assert inv.next_id() == 6
    assert occupancy(inv) == {(1, 1): 1, (1, 2): 1, (1, 5): 2, (2, 1): 3, (2, 2): 3, (2, 3): 3, (2, 9): 5}


def test_edit_keeps_comments_key_order_and_style(tmp_path: Path) -> None:
    path = tiny_copy(tmp_path)
    ops = [
        RecordThaw(record_id=1, positions=[2], date="2025-07-01", note="exp 7"),
        AddEntry(parent_cell_line="HeLa", box=1, positions=[2, 3], frozen_at="2025-07-02"),
    ]
    apply_plan(path, ops, plan_id="p1", actor="test", today=TODAY)
    # The shortened list keeps its end-of-line comment at the same column; the event goes after the last key.
    record_1 = "    frozen_at: '2025-01-10'\n    note: 张三冻存, 复苏后状态良好\n"
    expected = TINY.replace(
        "    positions: [1, 2]   # top left\n" + record_1,
        "    positions: [1]      # top left\n"
        + record_1
        + "    thaw_events:\n      - {date: '2025-07-01', action: thaw, positions: [2], note: exp 7}\n",
    ) + ("  - id: 6\n    parent_cell_line: HeLa\n    box: 1\n    positions: [2, 3]\n    frozen_at: '2025-07-02'\n")
    assert path.read_text(encoding="utf-8") == expected


def test_edit_of_sample_keeps_every_comment(tmp_path: Path) -> None:
    path = sample_copy(tmp_path)
    before = path.read_text(encoding="utf-8")
    apply_plan(path, [RecordThaw(record_id=9, positions=[1], date="2025-07-31")], plan_id="p", actor="t", today=TODAY)
    after = path.read_text(encoding="utf-8")
    comments = [line for line in before.splitlines() if "#" in line]
    assert len(comments) >= 8
    assert [line for line in after.splitlines() if "#" in line] == comments
    # Only record 9 changed: its list shortened and one event line added after its last event.
    diff = [
        line
        for line in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    ]
    assert diff == [
        "-    positions: [1, 2, 3]",
        "+    positions: [2, 3]",
        "+      - {date: '2025-07-31', action: thaw, positions: [1]}",
    ]
    record_9 = after.split("  - id: 9\n")[1].split("  - id: 10\n")[0]
    keys = [line.split(":")[0].strip() for line in record_9.splitlines() if not line.startswith("      ")]
    assert keys == [
        "parent_cell_line",
        "short_name",
        "plasmid_name",
        "plasmid_id",
        "box",
        "positions",
        "frozen_at",
        "note",
        "thaw_events",
    ]


@pytest.mark.parametrize(
    "text",
    [
        "meta:\n  box_layout: {rows: 2, cols: 2}\n  box_count: 1\ninventory:\n- id: 1\n  parent_cell_line: A\n"
        "  box: 1\n  positions: [1]\n  frozen_at: 2025-01-01\n",
        "meta:\n    box_layout:\n        rows: 2\n        cols: 2\n    box_count: 1\ninventory:\n    -   id: 1\n"
        '        parent_cell_line: "A"\n        box: 1\n        positions:\n            -   1\n'
        '        frozen_at: "2025-01-01"\n',
        "---\r\nmeta:\r\n  box_layout: {rows: 2, cols: 2}\r\n  box_count: 1\r\ninventory: []\r\n",
    ],
    ids=["dash-at-key-column-unquoted-date", "four-space-indent-double-quotes", "crlf-explicit-start"],
)
def test_other_formatting_round_trips(text: str) -> None:
    data = text.encode()
    file = InventoryFile.from_bytes(data)
    assert file.render() == data


def test_unquoted_date_is_read_as_text() -> None:
    text = TINY.replace("frozen_at: '2025-01-10'", "frozen_at: 2025-01-10")
    record = InventoryFile.from_bytes(text.encode()).inventory.records[0]
    assert record.frozen_at == "2025-01-10"


@pytest.mark.parametrize(
    ("mutate", "fragment", "line"),
    [
        (lambda t: t.replace("box: 1\n    positions: [5]", "box: 1\n    positions: [5, 6"), "YAML syntax error", None),
        (lambda t: t.replace("meta:\n  box_layout: {rows: 3, cols: 3}\n  box_count: 2\n", ""), "`meta`", None),
        (lambda t: t.replace("frozen_at: '2025-02-01'", "frozen_at: '2025-02-30'"), "inventory.1.frozen_at", 21),
        (lambda t: t.replace("positions: [5]", "positions: [1]"), "held by both record 1 and record 2", 20),
        (lambda t: t.replace("positions: [9]", "positions: [10]"), "outside 1..9", 41),
        (lambda t: t.replace("id: 5", "id: 3"), "record id 3 is used twice", 38),
        (lambda t: t.replace("box: 2\n    positions: [9]", "box: 3\n    positions: [9]"), "numbered 1..2", 40),
        (lambda t: t.replace("parent_cell_line: HEK293T", "parent_cell_line: ''"), "parent_cell_line", 39),
        (lambda t: t.replace("action: discard", "action: lost"), "thaw_events.1.action", 37),
        (lambda t: t.replace("rows: 3", "rows: 0"), "meta.box_layout.rows", 3),
        (lambda t: "- just\n- a list\n", "top level is a list", 1),
    ],
    ids=[
        "syntax",
        "no-meta",
        "bad-date",
        "shared-position",
        "out-of-range",
        "dup-id",
        "bad-box",
        "empty-name",
        "bad-action",
        "zero-rows",
        "not-a-mapping",
    ],
)
def test_broken_file_is_an_inventory_file_error(mutate, fragment: str, line: int | None) -> None:
    text = mutate(TINY)
    assert text != TINY
    with pytest.raises(ToolError) as info:
        InventoryFile.from_bytes(text.encode(), path=Path("/x/inv.yaml"))
    err = info.value
    assert err.error_code == "inventory_file_error"
    assert fragment in err.message
    assert "/x/inv.yaml" in err.message
    assert err.hint
    if line is not None:
        assert f"(line {line}) " in err.message
    if fragment == "YAML syntax error":
        assert "(line " in err.message


def test_missing_and_non_utf8_files(tmp_path: Path) -> None:
    with pytest.raises(ToolError) as info:
        InventoryFile.load(tmp_path / "nope.yaml")
    assert info.value.error_code == "inventory_file_error" and "does not exist" in info.value.message
    bad = tmp_path / "latin1.yaml"
    bad.write_bytes("meta: {note: 'caf\xe9'}\n".encode("latin-1"))
    with pytest.raises(ToolError) as info:
        InventoryFile.load(bad)
    assert info.value.error_code == "inventory_file_error" and "UTF-8" in info.value.message


def test_position_labels() -> None:
    nine = BoxLayout(rows=9, cols=9)
    assert [position_label(p, nine) for p in (1, 9, 10, 12, 81)] == ["A1", "A9", "B1", "B3", "I9"]
    plate = BoxLayout(rows=8, cols=12)
    assert [position_label(p, plate) for p in (1, 12, 13, 96)] == ["A1", "A12", "B1", "H12"]
    assert describe_position(5, nine) == "5 (A5)"
    assert describe_position(82, nine) == "82"


def test_a_box_heading_after_a_record_stays_before_the_next_record(tmp_path: Path) -> None:
    path = sample_copy(tmp_path)
    heading = "  # ---- Box 2: K562-dTAG degron knock-ins (FKBP12-F36V; degrade with dTAG-13) ----------\n"
    for day in ("2025-07-30", "2025-07-31"):  # the first event starts the list, the second is appended to it
        held = load_inventory(path).record(8).positions
        apply_plan(path, [RecordThaw(record_id=8, positions=held[:1], date=day)], plan_id=day, actor="t", today=TODAY)
    record_8 = path.read_text(encoding="utf-8").split("  - id: 8\n")[1].split("  - id: 9\n")[0]
    assert record_8.endswith(
        "    note: ATCC TIB-152\n    thaw_events:\n"
        "      - {date: '2025-07-30', action: thaw, positions: [64]}\n"
        "      - {date: '2025-07-31', action: thaw, positions: [65]}\n" + heading
    )
