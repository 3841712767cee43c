"""Follow-ups: a turn that names a tube by what the previous reply showed ("the one at position 28" after "HeLa-Kyoto
is in box 5 positions 28, 29") stages that tube; without such a reply the same words are asked about, never guessed."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from consulta.apps.ln2._tools import Ln2Plans, ln2_tools
from consulta.runtime import Evidence, ToolError

from .test_agent_flow import Harness, inventory  # noqa: F401 (inventory: the fixture)

KYOTO = ("Where is HeLa-Kyoto kept these days?", "We still have 2 tubes of HeLa-Kyoto in box 5 positions 28,29.")
MYC = ("Show me the dTAG-MYC tubes", "K562-dTAG-MYC: 1 tube in box 5 position 76.")
RESCUE = (
    "Do we have RTCB rescue lines?",
    "K562-RTCB-rescue-WT in box 3 positions 19,20,21 and K562-RTCB-rescue-C122A in box 3 positions 28,29.",
)


def staged(path: Path, evidence: Evidence, args: dict[str, Any]) -> tuple[int, list[int]] | str:
    """What a record_thaw call with `args` stages after grounding (the runtime's order), or the error code."""
    plans = Ln2Plans(path)
    thaw = next(t for t in ln2_tools(path) if t.name == "record_thaw").function
    try:
        op = thaw(**plans.ground_args("record_thaw", {**args, "action": "thaw"}, evidence))
        plans.check_grounding("record_thaw", op, evidence)
    except ToolError as error:
        return error.error_code
    return op["record_id"], op["positions"]


@pytest.mark.parametrize(
    ("first", "words", "args", "taken"),
    [
        (KYOTO, "Thaw the one at position 28", {"positions": [28]}, (34, [28])),
        (KYOTO, "Thaw the one at position 28", {"short_name": "HeLa-Kyoto", "box": 5, "positions": [28]}, (34, [28])),
        (MYC, "Thaw the one in box 5", {"box": 5}, (40, [76])),
        (MYC, "Thaw the one in box 5", {"cell_line": "K562-dTAG-MYC", "box": 5}, (40, [76])),
        (MYC, "解冻5号盒那一管", {"box": 5, "positions": [76]}, (40, [76])),
        # the reply named the line only in part (seen on the embedded model): the person's own words single it out
        (
            ("Show me the dTAG-MYC tubes", "There are 5 dTAG-MYC tubes in box 2 and box 5."),
            "Thaw the one in box 5",
            {"box": 5},
            (40, [76]),
        ),
        (RESCUE, "Thaw the C122A one at position 29", {"positions": [29]}, (19, [29])),
        (
            RESCUE,
            "Thaw the C122A one",
            {"short_name": "K562-RTCB-rescue-C122A", "box": 3, "positions": [29]},
            (19, [29]),
        ),
    ],
)
def test_a_follow_up_stages_the_tube_the_previous_reply_showed(
    inventory: Path,  # noqa: F811
    first: tuple[str, str],
    words: str,
    args: dict[str, Any],
    taken: tuple[int, list[int]],
) -> None:
    evidence = Evidence(user_texts=(first[0], words), data_texts=(first[1],))
    assert staged(inventory, evidence, args) == taken


@pytest.mark.parametrize(
    ("shown", "words", "args"),
    [
        ((), "Thaw the one in box 5", {"box": 5}),  # box 5 holds many records: which one?
        ((), "Thaw the one in box 5", {"cell_line": "K562-dTAG-MYC", "box": 5}),  # a name nobody said or showed
        ((), "Thaw the one at position 28", {"positions": [28]}),  # every box has a position 28
        ((KYOTO[1],), "Thaw the one in box 1", {"box": 1}),  # the reply showed box 5, not box 1
        ((RESCUE[1],), "Thaw the one in box 3", {"box": 3}),  # the reply showed two records in box 3
    ],
)
def test_without_a_reply_that_singles_it_out_the_same_words_stage_nothing(
    inventory: Path,  # noqa: F811
    shown: tuple[str, ...],
    words: str,
    args: dict[str, Any],
) -> None:
    result = staged(inventory, Evidence(user_texts=(words,), data_texts=shown), args)
    assert result in {"ambiguous_tube", "ungrounded_argument", "missing_required_field"}


def test_the_runtime_counts_the_earlier_reply_as_what_the_person_was_shown(tmp_path: Path, inventory: Path) -> None:  # noqa: F811
    steps = {
        "turns": [
            [{"text": KYOTO[1]}],
            [
                {"tool_calls": [{"name": "record_thaw", "args": {"positions": [28], "action": "thaw"}}]},
                {"text": "Staged."},
            ],
        ]
    }
    h = Harness(tmp_path, inventory, steps)

    async def scenario() -> list[Any]:
        try:
            earlier = await h.run(KYOTO[0])
            run = await h.run("Thaw the one at position 28", continue_from=earlier.id)
            return [i["op"] for p in h.store.list_plans(run_id=run.id) for i in p.items]
        finally:
            await h.runtime.aclose()

    (op,) = asyncio.run(scenario())
    assert (op["record_id"], op["positions"]) == (34, [28])
