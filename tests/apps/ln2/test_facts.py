"""ln2's replies hold only what the run found (issue 26), on the scripted model (a test double): an invented count is
replaced by code's summary, a negative look-up is said by code in both languages ("no HeLa tube is left: record 4
(HeLa) was used up on …", "no tube at box 1 position 7"), a tool's hint never reaches the person, a request that
names no cells gets a question, and a turn whose writes are refused ends with a reply."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from consulta.apps.ln2._dates import said_date
from consulta.apps.ln2._replies import ln2_facts
from consulta.i18n import t
from consulta.runtime import RunStatus, TurnFacts, unfounded

from .test_agent_flow import inventory  # noqa: F401 (a fixture)
from .test_claims import run_script
from .test_inventory import SAMPLE, tiny_copy

HELA = {"tool_calls": [{"name": "query_inventory", "args": {"cell_line": "HeLa"}}]}


def shown(store, run_id: str) -> list[str]:  # noqa: ANN001
    return [e.data["text"] for e in store.list_events(run_id) if e.type == "model_text"]


def checks(store, run_id: str) -> list[str]:  # noqa: ANN001
    return [e.data["check"] for e in store.list_events(run_id) if e.type == "reply_checked"]


def test_the_hela_answer_with_invented_counts_is_replaced_by_codes(tmp_path: Path, inventory: Path) -> None:  # noqa: F811
    invented = "HeLa: the tank has HeLa left in box 1, and in box 3. There are 4 boxes with 51 free positions."  # on subject, located and no count of tubes (ln2's own check passes it): only the facts check sees the 51
    run, store = run_script(
        tmp_path, inventory, "Do we have any HeLa cells left for tomorrow?", [{"text": invented}] * 2
    )
    assert run.status == RunStatus.finished
    assert run.output is not None and run.output.startswith(
        "Records found: 4, tubes: 11.\nBy name: HeLa 4, HeLa-H2B-mCherry 2, HeLa-Kyoto 2, HeLa-RTCB-KO 3.\n"
        "- id 4: HeLa; box 1 positions"
    )
    assert shown(store, run.id) == [run.output] and checks(store, run.id) == ["facts", "facts"]


@pytest.mark.parametrize(
    ("prompt", "expected"),
    [
        ("Do we have any HeLa cells left?", "No HeLa tube is left: record 4 (HeLa) was used up on 2024-07-01."),
        ("还有 HeLa 吗？", "HeLa 已经没有剩余的管子了：记录 4（HeLa）已于 2024-07-01 用完。"),
    ],
)
def test_no_tube_left_is_said_by_code_when_the_model_does_not(tmp_path: Path, prompt: str, expected: str) -> None:
    tiny = tiny_copy(tmp_path)
    run, _ = run_script(
        tmp_path, tiny, prompt, [HELA, {"text": "We have 79 free positions in box 1."}] + [{"text": "Box 1 is ready."}]
    )
    assert run.output == expected


@pytest.mark.parametrize(
    ("prompt", "expected"),
    [
        ("What is in box 1 position 7?", "There is no tube at box 1 position 7."),
        ("1号盒7号位是什么？", "1号盒7号位没有管子。"),
    ],
)
def test_an_empty_position_is_said_by_code(tmp_path: Path, inventory: Path, prompt: str, expected: str) -> None:  # noqa: F811
    # the runtime's first look queries box 1 position 7; the model twice describes something else
    run, store = run_script(tmp_path, inventory, prompt, [{"text": "It holds HeLa."}, {"text": "Box 1 holds HeLa."}])
    assert run.output == expected


def test_a_negative_answer_in_the_models_words_passes(tmp_path: Path, inventory: Path) -> None:  # noqa: F811
    run, store = run_script(
        tmp_path, inventory, "What is in box 1 position 7 these days?", [{"text": "Box 1 position 7 is empty."}]
    )
    assert run.output == "Box 1 position 7 is empty." and checks(store, run.id) == []


def test_a_hint_never_reaches_the_person(tmp_path: Path) -> None:
    """ "Thaw the HeLa tube." with none left: the write is refused, and the hint the model copies is never shown."""
    tiny = tiny_copy(tmp_path)
    hint = (
        "Please provide the box and positions as the user said them, or ask the user with ONE question listing "
        "the matches as options."
    )
    thaw = {"tool_calls": [{"name": "record_thaw", "args": {"box": 1, "positions": [1]}}]}
    run, store = run_script(tmp_path, tiny, "Thaw the HeLa tube.", [thaw, {"text": hint}, {"text": hint}])
    assert run.output is not None and hint not in run.output and "the user" not in run.output
    assert all(hint not in text for text in shown(store, run.id))
    assert store.list_plans(run_id=run.id) == []


@pytest.mark.parametrize("lang_prompt", ["I need some cells for my experiment tomorrow.", "明天做实验，我需要一些细胞"])
def test_a_request_naming_no_cells_gets_a_question(tmp_path: Path, inventory: Path, lang_prompt: str) -> None:  # noqa: F811
    picked = {"text": "Here are three K562 tubes: box 2 positions 1, 2 and 3."}
    k562 = {"tool_calls": [{"name": "query_inventory", "args": {"cell_line": "K562"}}]}
    run, store = run_script(tmp_path, inventory, lang_prompt, [k562, picked, picked])
    lang = "zh-CN" if "细胞" in lang_prompt else "en"
    assert run.output is not None and run.output.startswith(t("ln2.reply.which_cells", lang, lines="")[:8])
    assert "HeLa" in run.output and "K562" in run.output and store.list_plans(run_id=run.id) == []
    # the lines it offers are the ones the turn's own look-up returned, on record before the model's first step
    assert [c.tool_name for c in store.list_tool_calls(run.id)][0] == "inventory_stats"


def test_a_write_turn_refused_twice_ends_with_a_reply(tmp_path: Path, inventory: Path) -> None:  # noqa: F811
    """The HEK293T case: "positions 22 and 23" with no box, then an invented box; the turn still ends, at once."""
    steps = [
        {"tool_calls": [{"name": "record_thaw", "args": {"cell_line": "HEK293T", "box": 3, "positions": [60]}}]},
        {"tool_calls": [{"name": "record_thaw", "args": {"cell_line": "HEK293T", "box": 4, "positions": [61]}}]},
        {"text": "Which box are positions 22 and 23 in?"},
    ]
    prompt = "Take out two HEK293T vials, the ones at positions 22 and 23."
    run, store = run_script(tmp_path, inventory, prompt, steps)
    assert run.status in (RunStatus.finished, RunStatus.waiting)  # a reply, or the runtime's question
    if run.status == RunStatus.finished:
        assert run.output and "?" in run.output


def test_ln2_facts_declare_the_layout_and_know_the_inventorys_names(inventory: Path) -> None:  # noqa: F811
    rules = ln2_facts(inventory)
    facts = TurnFacts(lang="en", prompt="How big is the tank?")
    assert unfounded("The tank has 5 boxes of 9x9, 81 positions each.", facts, rules) == []
    assert unfounded("Keep HeLa-Kyoto at 37 °C for 5 minutes.", facts, rules) == ["HeLa-Kyoto"]
    assert unfounded("Hello! I keep the LN2 tank's records. Thaw cells in a CO2 incubator.", facts, rules) == []


@pytest.mark.parametrize(
    ("words", "month"),
    [
        ("Which tubes were frozen in February 2026?", "2026-02"),
        ("2026年2月冻存的管子有哪些？", "2026-02"),
        ("what went into the tank in Dec '25", "2025-12"),
        ("25年9月冻的都有啥", "2025-09"),
        ("anything frozen on 09/30/2025?", "2025-09-30"),
        ("frozen 30.09.2025", "2025-09-30"),
        ("tubes from 3/4/2025", None),  # March 4 or April 3: no date
        ("frozen on Sep 30, 2025", "2025-09-30"),
        ("frozen on 30 September 2025", "2025-09-30"),
        ("2025年9月30日冻的", "2025-09-30"),
        ("what did we freeze in 09/2025", "2025-09"),
        ("What did we freeze last month?", "2026-10"),
        ("上个月冻了哪些细胞？", "2026-10"),
        ("本月冻了什么", "2026-11"),
        ("昨天冻的是哪个", "2026-11-28"),  # thirteenth set
        ("what did we freeze yesterday?", "2026-11-28"),
        ("前天存进去的管子", "2026-11-27"),
        ("I need some cells today", None),  # when they are wanted, not a date
        ("box 2 #33", None),
        ("prep PB-2024-07", None),
        ("hi", None),
    ],
)
def test_a_month_or_a_day_named_is_looked_up_by_its_dates(words: str, month: str | None) -> None:
    assert said_date(words, today=dt.date(2026, 11, 29)) == month


@pytest.mark.parametrize(
    ("prompt", "args", "staged"),
    [
        # seen on the embedded model: two refused calls, then "Nothing was changed"
        (
            "Take out two HEK293T vials, the ones at positions 22 and 23.",
            {"cell_line": "HEK293T", "positions": [22, 23], "action": "takeout"},
            {"record_id": 3, "positions": [22, 23]},  # record 33 (HEK293T-Lenti-X) holds 22 only
        ),
        ("Thaw record 16, positions 1 and 2", {"record_id": 16, "box": 1, "positions": [1, 2]}, None),
        # seen too: the call left out what the words said (the record id; the name)
        ("Thaw record 16, positions 1 and 2", {"box": 1, "positions": [1, 2]}, None),
        (
            "Take out two HEK293T vials, the ones at positions 22 and 23.",
            {"positions": [22, 23], "action": "takeout"},
            {"record_id": 3, "positions": [22, 23]},
        ),
    ],
)
def test_the_words_single_out_the_tubes_though_the_call_adds_a_guess(
    tmp_path: Path,
    inventory: Path,  # noqa: F811
    prompt: str,
    args: dict,
    staged: dict | None,
) -> None:
    """The record holding every position the person named is theirs; a box nobody said is left out of a call that
    names its record by the id the person gave; what the call left out of the words (the one record id they
    mention, the name) is completed from them."""
    steps = [{"tool_calls": [{"name": "record_thaw", "args": args}]}, {"text": "Staged; approve it."}]
    run, store = run_script(tmp_path, inventory, prompt, steps)
    [plan] = store.list_plans(run_id=run.id)
    [item] = plan.items
    expected = staged or {"record_id": 16, "positions": [1, 2]}
    assert {k: item["op"][k] for k in ("record_id", "positions")} == expected


TUBE_LEVEL = Path(__file__).resolve().parents[3] / "bench" / "data" / "ln2" / "tube_level.yaml"


def test_a_plasmid_passed_as_a_cell_line_still_finds_its_tube(tmp_path: Path) -> None:
    """Seen on the embedded model: "取出p251120-4质粒对应的那管细胞" → record_thaw(cell_line="p251120-4") →
    no_matching_tube, though a record's plasmid is p251120-4."""
    inventory = tmp_path / "inventory.yaml"
    inventory.write_bytes(TUBE_LEVEL.read_bytes())
    steps = [
        {"tool_calls": [{"name": "record_thaw", "args": {"cell_line": "p251120-4"}}]},
        {"text": "已暂存，等待您批准。"},
    ]
    run, store = run_script(tmp_path, inventory, "取出p251120-4质粒对应的那管细胞", steps)
    [plan] = store.list_plans(run_id=run.id)
    [item] = plan.items
    assert item["op"]["record_id"] == 10  # A549_RTCB_OE, plasmid p251120-4, box 2 position 30


def test_a_reply_to_a_search_names_the_records_it_found(tmp_path: Path) -> None:
    """Seen on the embedded model: "Which tubes were frozen in February 2026?" → "There are 4 tubes frozen in
    February 2026: id 6, id 7, id 9, id 11." — no name. Written again, then said by code with the names."""
    inventory = tmp_path / "inventory.yaml"
    inventory.write_bytes(TUBE_LEVEL.read_bytes())
    bare = {"text": "There are 4 tubes frozen in February 2026: id 6, id 7, id 9, id 11."}
    prompt = "Which tubes were frozen in February 2026, and by whom?"  # more than a plain look-up: the model answers
    run, store = run_script(tmp_path, inventory, prompt, [bare, bare])
    assert run.output is not None and "NCCIT_ctrl_A" in run.output and "MCF7" in run.output
    assert checks(store, run.id) == ["ln2", "ln2"]


def test_a_month_no_tube_was_frozen_in_finds_none_not_close_dates(tmp_path: Path) -> None:
    """Seen: "Which tubes were frozen in February 2026?" on the sample inventory (no tube frozen then) answered with
    7 records of other months, 2024-08 to 2025-02: the search fell back to "close spellings" of the date."""
    inventory = tmp_path / "inventory.yaml"
    inventory.write_bytes(SAMPLE.read_bytes())
    invented = {"text": "There are 7 tubes frozen in February 2026."}
    run, _ = run_script(tmp_path, inventory, "Which tubes were frozen in February 2026?", [invented, invented])
    assert run.output == t("ln2.reply.none", "en")


def test_two_names_in_one_call_are_asked_about_not_refused(tmp_path: Path) -> None:
    """Seen on the embedded model: "Thaw NCCIT_ctrl_A and K562_WT_P8" → one call with both names in two fields → "no
    record matches", then an apology naming an unrelated line. The runtime asks which tube, among both names'."""
    inventory = tmp_path / "inventory.yaml"
    inventory.write_bytes(TUBE_LEVEL.read_bytes())
    both = {"cell_line": "NCCIT_ctrl_A", "short_name": "K562_WT_P8"}
    steps = [{"tool_calls": [{"name": "record_thaw", "args": both}]}, {"text": "Sorry."}, {"text": "Sorry."}]
    run, store = run_script(tmp_path, inventory, "Thaw NCCIT_ctrl_A and K562_WT_P8", steps)
    assert run.status == RunStatus.waiting and store.list_plans(run_id=run.id) == []
    [ask] = store.list_asks(status=None, run_id=run.id)
    options = " ".join(ask.payload["questions"][0]["options"])
    assert "NCCIT_ctrl_A" in options and "K562_WT_P8" in options and "HEK293T" not in options


def test_the_positions_said_in_the_calls_box_complete_a_call_that_left_them_out(
    tmp_path: Path,
    inventory: Path,  # noqa: F811
) -> None:
    """Held-out (third set): "Take out the BV2 tube in box 4 well B2" called with the box and the name, no position,
    was asked about (two tubes of the box); the position the words say in that box completes the call."""
    steps = [
        {"tool_calls": [{"name": "record_thaw", "args": {"cell_line": "HeLa", "box": 1, "action": "takeout"}}]},
        {"text": "Staged; approve it."},
    ]
    run, store = run_script(tmp_path, inventory, "Take out the HeLa tube in box 1 position 29 please", steps)
    [plan] = store.list_plans(run_id=run.id)
    [item] = plan.items
    assert item["op"]["positions"] == [29] and item["op"]["action"] == "takeout"


def test_a_number_said_as_a_place_is_not_taken_for_a_record_id(
    tmp_path: Path,
    inventory: Path,  # noqa: F811
) -> None:
    """Held-out (third set): "taking out the PC-3-Luc2 tube (box2 #13)" called with record_id 13 was asked about; the
    13 was a position of box 2, so the call names the tube there."""
    steps = [
        {"tool_calls": [{"name": "record_thaw", "args": {"record_id": 13, "action": "takeout"}}]},
        {"text": "Staged; approve it."},
    ]
    run, store = run_script(tmp_path, inventory, "taking out the K562-dTAG-MYC tube (box2 #13), pls record it", steps)
    [plan] = store.list_plans(run_id=run.id)
    [item] = plan.items
    assert (item["op"]["record_id"], item["op"]["positions"]) == (10, [13])


def test_a_reply_to_where_says_the_positions_and_both_questions_are_answered(tmp_path: Path, inventory: Path) -> None:  # noqa: F811
    """Seen on the embedded model: "where's the Calu-3, and how many T47D" → "We have 1 Calu-3 tube in box 2, and 5
    T47D tubes in total." — the box, not the position. Written again, then said by code: both look-ups."""
    boxed = {"text": "We have HeLa-Kyoto in box 5, and 2 K562-GFP tubes in total."}
    prompt = "where's the HeLa-Kyoto, and how many K562-GFP do we have in total"
    run, store = run_script(tmp_path, inventory, prompt, [boxed, boxed])
    assert run.output is not None and "positions 28,29" in run.output and "positions 73,74" in run.output
    assert checks(store, run.id) == ["ln2", "ln2"]
    placed = {"text": "HeLa-Kyoto is in box 5, positions 28 and 29; we have 2 K562-GFP tubes in total."}
    (again := tmp_path / "again").mkdir()
    run, store = run_script(again, inventory, prompt, [placed])
    assert run.output == placed["text"] and checks(store, run.id) == []


def test_codes_answer_says_the_names_the_person_asked_about_not_the_models_guesses() -> None:
    from consulta.apps.ln2._replies import answer_from_results
    from consulta.runtime import ToolOutcome

    def found(name: str, box: int, position: int) -> ToolOutcome:
        line = f"id {position}: {name}; box {box} positions {position}; frozen 2025-01-02"
        data = f'{{"total": 1, "records": ["{line}"], "tubes": 1}}'
        return ToolOutcome(name="query_inventory", kind="read", ok=True, data=data, args={"cell_line": name})

    calls = (found("Calu-3", 2, 37), found("HeLa", 1, 5), found("T47D", 4, 28))
    facts = TurnFacts(lang="en", prompt="where's the Calu-3, and how many T47D", calls=calls)
    answer = answer_from_results(facts)
    assert answer is not None and "Calu-3" in answer and "T47D" in answer and "HeLa" not in answer


@pytest.mark.parametrize(
    ("reply", "refused"),
    [
        ("HCT116 还剩 7 管，其中 WT 和 p53 敲除的分别是 HCT116-WT 和 HCT116-TP53-KO。", True),  # sixth set, at dd083d2
        ("HCT116 还剩 7 管：HCT116-WT 4 管，HCT116-TP53-KO 3 管。", False),
        ("HCT116-WT 4 管，HCT116-TP53-KO 3 管。", False),
    ],
)
def test_how_many_of_a_name_with_several_lines_says_each_lines_count(reply: str, refused: bool) -> None:
    """The look-up counts each line's tubes (`tubes_by_name`, checked on the sixth set's lab below); a reply to "how
    many" of a name with several lines says each count."""
    import json

    from consulta.apps.ln2._replies import check_ln2_reply
    from consulta.runtime import ReplyRefused, ToolOutcome

    data = {
        "total": 2,
        "records": [
            "id 1: HCT116-WT (HCT116); box 1 positions 1,2,3,4; frozen 2025-02-14",
            "id 2: HCT116-TP53-KO (HCT116); plasmid pX459-sgTP53; box 1 positions 11,12,13; frozen 2025-10-21",
        ],
        "distinct_short_names": ["HCT116-TP53-KO", "HCT116-WT"],
        "tubes": 7,
        "tubes_by_name": {"HCT116-TP53-KO": 3, "HCT116-WT": 4},
    }
    call = ToolOutcome(
        name="query_inventory", kind="read", ok=True, data=json.dumps(data), args={"cell_line": "HCT116"}
    )
    facts = TurnFacts(lang="zh-CN", prompt="HCT116 还剩多少管？WT 和 p53 敲除的分开说", calls=(call,))
    if not refused:
        check_ln2_reply(reply, facts)
        return
    with pytest.raises(ReplyRefused) as info:
        check_ln2_reply(reply, facts)
    assert info.value.replacement is not None and "按名称：HCT116-TP53-KO 3，HCT116-WT 4。" in info.value.replacement


@pytest.mark.parametrize(
    ("reply", "refused"),
    [
        ("There are 7 Sf9 tubes left in box 7 positions 95,96. There are 5 Raji tubes left.", True),  # seventh set
        ("There are 2 Sf9 tubes left in box 7 positions 95,96. There are 5 Raji tubes left.", False),
        ("Sf9 还剩 2 管，在 7 号盒 95、96 号位；Raji 还剩 5 管。", False),
    ],
)
def test_a_number_said_as_a_count_of_tubes_is_one_the_results_counted(reply: str, refused: bool) -> None:
    import json

    from consulta.apps.ln2._replies import check_ln2_reply
    from consulta.runtime import ReplyRefused, ToolOutcome

    def found(name: str, line: str, tubes: int) -> ToolOutcome:
        data = {"total": 1, "records": [line], "tubes": tubes}
        return ToolOutcome(
            name="query_inventory", kind="read", ok=True, data=json.dumps(data), args={"cell_line": name}
        )

    calls = (
        found("Sf9", "id 24: Sf9; box 7 positions 95,96; frozen 2025-10-30", 2),
        found("Raji", "id 15: Raji; box 4 positions 25,26,27,28,29; frozen 2025-07-07", 5),
    )
    facts = TurnFacts(lang="en", prompt="where's the Sf9 and also how many Raji are left", calls=calls)
    if not refused:
        check_ln2_reply(reply, facts)
        return
    with pytest.raises(ReplyRefused):
        check_ln2_reply(reply, facts)


@pytest.mark.parametrize(
    ("reply", "refused"),
    [
        ("我们还有白色念珠菌SC5314，还有1个空位。", True),  # eighth set: "还有" after a look-up that found none
        ("We still have SC5314 in box 3.", True),
        ("白色念珠菌SC5314 已经没有了：记录 19 于 2025-11-11 用完。", False),
        ("No SC5314 tube is left: record 19 was used up on 2025-11-11.", False),
    ],
)
def test_a_look_up_that_found_nothing_is_never_answered_with_we_still_have(reply: str, refused: bool) -> None:
    import json

    from consulta.apps.ln2._replies import check_ln2_reply
    from consulta.runtime import ReplyRefused, ToolOutcome

    data = {"total": 0, "records": [], "tubes": 0, "used_up": [{"id": 19, "name": "SC5314", "on": "2025-11-11"}]}
    lang = "zh-CN" if any("\u4e00" <= c <= "\u9fff" for c in reply) else "en"
    name = "白色念珠菌SC5314" if lang == "zh-CN" else "SC5314"
    call = ToolOutcome(name="query_inventory", kind="read", ok=True, data=json.dumps(data), args={"cell_line": name})
    facts = TurnFacts(
        lang=lang, prompt="咱们还有白色念珠菌SC5314吗" if lang == "zh-CN" else "any SC5314 left?", calls=(call,)
    )
    if not refused:
        check_ln2_reply(reply, facts)
        return
    with pytest.raises(ReplyRefused):
        check_ln2_reply(reply, facts)


def test_codes_answer_never_says_a_guessed_line_is_missing() -> None:
    """Ninth set: "can someone pull a vial for me, doing a fusion tomorrow" — the model looked up K562 (a line of its
    own instructions' examples) and code's reply said "The inventory holds no K562 tube.": a fact of a name nobody
    asked about. A look-up that found nothing of a name the person did not say is not said."""
    import json

    from consulta.apps.ln2._replies import answer_from_results
    from consulta.runtime import ToolOutcome

    nothing = json.dumps({"total": 0, "records": [], "tubes": 0})
    call = ToolOutcome(name="query_inventory", kind="read", ok=True, data=nothing, args={"cell_line": "K562"})
    facts = TurnFacts(lang="en", prompt="can someone pull a vial for me, doing a fusion tomorrow", calls=(call,))
    assert answer_from_results(facts) is None
    asked = TurnFacts(lang="en", prompt="any K562 left?", calls=(call,))
    assert "K562" in (answer_from_results(asked) or "")


@pytest.mark.parametrize(
    ("words", "span"),
    [
        ("what did we put in the tank over the last 7 days?", ("2026-11-22", "2026-11-29")),  # fourteenth set
        ("最近三天冻了啥", ("2026-11-26", "2026-11-29")),
        ("最近一周冻了什么", ("2026-11-22", "2026-11-29")),
        ("anything frozen this week?", ("2026-11-23", "2026-11-29")),
        ("what went in last week", ("2026-11-16", "2026-11-22")),  # the week before, Monday to Sunday
        ("上周存了什么", ("2026-11-16", "2026-11-22")),
        ("what did we freeze last month?", None),  # a month, not a span of days
        ("box 2 has 7 days of backlog", None),
    ],
)
def test_a_span_of_days_named_is_read_as_its_first_and_last_day(words: str, span: tuple[str, str] | None) -> None:
    from consulta.apps.ln2._dates import said_days

    found = said_days(words, today=dt.date(2026, 11, 29))
    assert (tuple(d.isoformat() for d in found) if found else None) == span


def test_a_span_across_two_months_is_looked_up_in_each(inventory: Path) -> None:
    from consulta.apps.ln2._turns import first_look_for

    look = first_look_for(inventory, today=lambda: dt.date(2026, 12, 3))
    assert look("what did we freeze in the past week?") == [
        ("search_records", {"text": "2026-11"}),
        ("search_records", {"text": "2026-12"}),
    ]
