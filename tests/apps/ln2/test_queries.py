"""ln2 read queries: fuzzy and exact matching, compact results, free positions and statistics."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from consulta.apps.ln2._inventory import Inventory, load_inventory
from consulta.apps.ln2._queries import best_named, empty_positions, inventory_stats, query_inventory, search_records
from consulta.runtime._errors import ToolError

from .test_inventory import SAMPLE, tiny_copy

# The tiny inventory (2 boxes of 3×3): record 1 K562 box 1 [1, 2]; 2 K562-dTAG-BRD4 box 1 [5];
# 3 K562-RTCB box 2 [1, 2, 3]; 4 HeLa box 2 consumed; 5 HEK293T box 2 [9].


@pytest.fixture
def tiny(tmp_path: Path) -> Inventory:
    return load_inventory(tiny_copy(tmp_path))


def ids(result: dict[str, Any]) -> list[int]:
    return [hit["id"] for hit in result["records"]]


def assert_compact(value: Any) -> None:
    """No nulls and no empty strings/lists anywhere in a result (they only cost prompt tokens)."""
    if isinstance(value, dict):
        for item in value.values():
            assert item is not None and item != "" and item != []
            assert_compact(item)
    elif isinstance(value, list):
        for item in value:
            assert_compact(item)


def test_fuzzy_cell_line_finds_the_three_look_alikes(tiny: Inventory) -> None:
    result = query_inventory(tiny, cell_line="k562")
    assert ids(result) == [1, 2, 3]  # the exact name first, then file order
    assert result["total"] == 3
    assert result["distinct_names"] == ["K562", "K562-dTAG", "K562-RTCB"]
    assert result["records"][0] == {
        "id": 1,
        "parent_cell_line": "K562",
        "short_name": "K562-WT",
        "box": 1,
        "positions": [1, 2],
        "labels": "A1 A2",
        "frozen_at": "2025-01-10",
        "note": "张三冻存, 复苏后状态良好",
    }
    assert result["records"][1]["plasmid_id"] == "P0123" and result["records"][1]["labels"] == "B2"
    assert "note" not in result
    assert_compact(result)


def test_typo_still_finds_k562_and_says_it_is_approximate(tiny: Inventory) -> None:
    result = query_inventory(tiny, cell_line="K652")
    assert ids(result) == [1, 2, 3]
    assert "close spellings" in result["note"] and "'K652'" in result["note"]
    assert query_inventory(tiny, cell_line="zebrafish") == {"total": 0, "records": []}


def test_exact_match(tiny: Inventory) -> None:
    assert ids(query_inventory(tiny, cell_line="k562", exact=True)) == [1]
    assert ids(query_inventory(tiny, short_name="K562-dTAG-BRD4", exact=True)) == [2]
    assert ids(query_inventory(tiny, cell_line="K562-dTAG-BRD4", exact=True)) == [2]  # short names count as lines
    assert ids(query_inventory(tiny, cell_line="K562-dTAG", exact=True)) == [2]
    assert ids(query_inventory(tiny, cell_line="K56", exact=True)) == []


def test_plasmid_and_punctuation_insensitive_match(tiny: Inventory) -> None:
    assert ids(query_inventory(tiny, plasmid="p0123")) == [2]
    assert ids(query_inventory(tiny, plasmid="plex dtag")) == [2]
    assert ids(query_inventory(tiny, cell_line="K562 dTAG")) == [2]
    assert ids(query_inventory(tiny, cell_line="k562", plasmid="P0123")) == [2]  # filters combine


def test_box_filter_and_consumed_records(tiny: Inventory) -> None:
    assert ids(query_inventory(tiny, box=2)) == [3, 5]
    result = query_inventory(tiny, box=2)
    assert result["consumed_hidden"] == 1 and result["distinct_names"] == ["HEK293T", "K562-RTCB"]
    everything = query_inventory(tiny, box=2, include_consumed=True)
    assert ids(everything) == [3, 4, 5] and "consumed_hidden" not in everything
    hela = everything["records"][1]
    assert hela == {"id": 4, "parent_cell_line": "HeLa", "box": 2, "consumed": True, "frozen_at": "2024-05-05"}
    assert ids(query_inventory(tiny, cell_line="hela")) == []
    assert ids(query_inventory(tiny, cell_line="k562", box=1)) == [1, 2]


def test_limit_and_distinct_short_names(tmp_path: Path) -> None:
    inv = load_inventory(SAMPLE)
    result = query_inventory(inv, cell_line="K562-dTAG", limit=2)
    assert len(result["records"]) == 2 and result["total"] == 7
    assert "Showing 2 of 7" in result["note"]
    assert "distinct_names" not in result
    assert result["distinct_short_names"] == ["K562-dTAG-BRD4", "K562-dTAG-CDK9", "K562-dTAG-IKZF1", "K562-dTAG-MYC"]
    with pytest.raises(ToolError) as info:
        query_inventory(inv, cell_line="K562", limit=0)
    assert info.value.error_code == "invalid_argument"
    with pytest.raises(ToolError) as info:
        query_inventory(inv, box=6)
    assert (info.value.error_code, info.value.field) == ("invalid_box", "box")


def test_sample_k562_is_ambiguous_between_three_lines_with_tubes() -> None:
    inv = load_inventory(SAMPLE)
    result = query_inventory(inv, cell_line="K562", limit=50)
    assert result["distinct_names"] == ["K562", "K562-dTAG", "K562-RTCB"]
    with_tubes = {hit["parent_cell_line"] for hit in result["records"] if hit.get("positions")}
    assert with_tubes == {"K562", "K562-dTAG", "K562-RTCB"}
    assert result["consumed_hidden"] == 3
    typo = query_inventory(inv, cell_line="K652", limit=50)
    assert typo["total"] == result["total"] and "close spellings" in typo["note"] and typo["close_spellings"]
    long_note = next(hit for hit in result["records"] if hit["id"] == 9)["note"]
    assert len(long_note) <= 60 and long_note.endswith("…")
    assert_compact(result)


def test_search_records(tiny: Inventory) -> None:
    result = search_records(tiny, "张三")
    assert ids(result) == [1] and result["records"][0]["matched"] == ["note"]
    assert ids(search_records(tiny, "knockout clone")) == [3]  # every word must match
    assert ids(search_records(tiny, "knockout HeLa")) == []
    contaminated = search_records(tiny, "contaminated")
    assert ids(contaminated) == [4] and contaminated["records"][0]["consumed"] is True
    assert contaminated["records"][0]["matched"] == ["thaw_events"]
    assert ids(search_records(tiny, "contaminated", include_consumed=False)) == []
    assert ids(search_records(tiny, "2025-0")) == [1, 2, 3, 5]
    fuzzy = search_records(tiny, "knockuot")
    assert ids(fuzzy) == [3] and "close spellings" in fuzzy["note"] and fuzzy["close_spellings"] is True
    # a date is not spelled: a month no record was frozen in finds nothing, not the months "close" to it
    assert search_records(tiny, "2031-02") == {"total": 0, "records": []}
    assert "close_spellings" not in search_records(tiny, "knockout")
    assert search_records(tiny, "K562", limit=1)["total"] == 3
    with pytest.raises(ToolError) as info:
        search_records(tiny, "   ")
    assert (info.value.error_code, info.value.field) == ("missing_required_field", "text")


def test_empty_positions(tiny: Inventory) -> None:
    result = empty_positions(tiny)
    assert result == {
        "layout": "3x3 boxes, positions 1..9 row by row (1=A1, 9=C3)",
        "boxes": [
            {"box": 1, "free": 6, "positions": "3-4, 6-9"},
            {"box": 2, "free": 5, "positions": "4-8"},  # the consumed record's old positions are free
        ],
        "free_in_all": 11,  # counted here (heldout8: "how many free positions in total" answered box by box)
    }
    assert "free_in_all" not in empty_positions(tiny, box=2)
    assert empty_positions(tiny, box=2)["boxes"] == [{"box": 2, "free": 5, "positions": "4-8"}]
    assert empty_positions(tiny, limit=3)["boxes"][0] == {"box": 1, "free": 6, "positions": "3-4, 6, …"}
    with pytest.raises(ToolError) as info:
        empty_positions(tiny, box=3)
    assert info.value.error_code == "invalid_box"


def test_full_box_has_no_positions_key(tmp_path: Path) -> None:
    text = (
        "meta:\n  box_layout: {rows: 1, cols: 2}\n  box_count: 1\ninventory:\n"
        "  - {id: 1, parent_cell_line: A, box: 1, positions: [1, 2], frozen_at: '2025-01-01'}\n"
    )
    inv = load_inventory(tiny_copy(tmp_path, text))
    assert empty_positions(inv)["boxes"] == [{"box": 1, "free": 0}]


def test_inventory_stats(tiny: Inventory) -> None:
    assert inventory_stats(tiny) == {
        "layout": "3x3 boxes, positions 1..9 row by row (1=A1, 9=C3)",
        "boxes": [{"box": 1, "occupied": 3, "free": 6}, {"box": 2, "occupied": 4, "free": 5}],
        "capacity": 18,
        "occupied": 7,
        "free": 11,
        "records": 5,
        "active_records": 4,
        "consumed_records": 1,
        "cell_lines": {
            "HEK293T": {"records": 1, "tubes": 1},
            "HeLa": {"records": 1, "tubes": 0},
            "K562": {"records": 1, "tubes": 2},
            "K562-dTAG": {"records": 1, "tubes": 1},
            "K562-RTCB": {"records": 1, "tubes": 3},
        },
    }


def test_sample_stats_add_up() -> None:
    stats = inventory_stats(load_inventory(SAMPLE))
    assert stats["capacity"] == 405
    assert stats["occupied"] + stats["free"] == 405
    assert sum(b["occupied"] for b in stats["boxes"]) == stats["occupied"]
    assert sum(c["tubes"] for c in stats["cell_lines"].values()) == stats["occupied"]
    assert stats["records"] == stats["active_records"] + stats["consumed_records"] == 40


@pytest.mark.parametrize("typed", ["gamma delta T", "GAMMA-DELTA t", "γδ T"])
def test_a_name_in_greek_letters_is_found_by_their_names(tmp_path: Path, typed: str) -> None:
    inventory = load_inventory(tiny_copy(tmp_path))
    record = inventory.records[0].model_copy(update={"parent_cell_line": "γδ T (Vδ2) D-131", "short_name": None})
    inventory = inventory.model_copy(update={"records": [record, *inventory.records[1:]]})
    assert ids(query_inventory(inventory, cell_line=typed)) == [1]


@pytest.mark.parametrize(
    ("said", "ids"),
    [
        ("AB", [1, 2, 25]),  # a word of "Danio rerio AB", not the letters inside "Zebrabow" (record 15)
        ("WIK straw", [5]),  # a name said with its container
        ("the WIK straws", [5]),
        ("WIK那管", [5]),
        ("Zebrabow", [15]),
    ],
)
def test_a_few_letters_name_a_word_and_a_container_is_no_part_of_a_name(said: str, ids: list[int]) -> None:
    lab = load_inventory(Path(__file__).resolve().parents[3] / "bench" / "data" / "ln2" / "heldout18_lab.yaml")
    found, close = best_named(lab, cell_line=said)
    assert [r.id for r in found] == ids and not close
