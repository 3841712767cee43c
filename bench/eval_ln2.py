"""ln2 on the embedded model, as a new user meets it: 95 requests (en and zh-CN) across every kind of request, on three
inventories (the app's sample; a tube-level file in SnowFox's newer layout with other lines, `bench/data/ln2/
tube_level.yaml`; an empty one), each checked in code.

Each case runs `consulta chat ln2 --ask-policy defer -p … [-p …]` in a child process with a fresh data dir (a copy of
its inventory, an empty store), exactly as a person would; the models folder is shared, so the saved prompt prefix
(see `consulta.models`) serves every case after the first. After the child exits, the case's store is read back and
the outcome checked:

* **look** (look-ups, counts): a read tool was called, no write tool was called at all (neither staged nor refused),
  no plan staged, the reply names what it should (each group of alternatives: one of them, case-insensitive);
* **stage** (fully specified actions, several tubes, follow-ups, undo with history): a plan was staged and it takes
  out exactly the expected tubes (record id, position) with the expected action, or adds exactly the expected tubes;
* **ask** (ambiguous actions): a question was opened (by the model or by the runtime) and no plan staged;
* **question** (a request that names no cells): a question, opened or in the reply, and no write;
* **no_write** (impossible actions, undo with no history): no plan staged — a refusal explained, or a question;
* **chat** (chit-chat, out of scope): no write tool called, no plan, a reply.

Every case is also checked for three things the issue counts on their own: a **claim without a backing action** (the
reply says something was added, taken out, thawed, undone, done… — an independent lexicon, not the runtime's; in
`defer` mode nothing is ever applied, so any such claim is unbacked), a **write attempted on an information request**
(any write tool called in a look/chat case), and a **fact no tool returned** (a date, number or digit-bearing name of
the reply found in none of the tools' results, the questions asked, the person's words and the inventory's layout —
the eval's own code, not the runtime's fact check). The runtime's reply checks that fired are counted from the
store's `reply_checked` events: in how many cases each fired, in how many code's reply was shown, and how many of
those were right.

Timings per case, from the store's event times: request → first tool call, and request → end of the turn (the run
ended or paused on an ask); the child's wall time includes loading the model (~2 s).

    .venv/bin/python bench/eval_ln2.py                    # all cases (about 30-60 min on 2 cores)
    .venv/bin/python bench/eval_ln2.py --only zh_lookup_hela --only en_count_box4
    .venv/bin/python bench/eval_ln2.py --category ambiguous --limit 3
    .venv/bin/python bench/eval_ln2.py --rejudge results/ln2_eval.json   # the saved outcomes, checked again (no model)
    .venv/bin/python bench/eval_ln2.py --cases bench/data/heldout/ln2_cases.json   # another file's cases (load_cases)
    .venv/bin/python bench/eval_ln2.py --via web --limit 8   # through the web page's API (bench/_web.py), not the terminal
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _web  # noqa: E402
from _common import read_cases, source_version  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
WRITE_TOOLS = frozenset({"add_entry", "record_thaw", "batch_thaw", "rollback"})
READ_TOOLS = frozenset({"query_inventory", "search_records", "empty_positions", "inventory_stats", "audit_history"})

Via = Literal["cli", "web"]
Kind = Literal["look", "stage", "ask", "no_write", "chat", "question"]
INVENTORIES = {
    "sample": None,  # the app's own sample, copied into the data dir by the app itself
    "tubes": ROOT / "bench" / "data" / "ln2" / "tube_level.yaml",  # SnowFox's tube-level layout, other lines
    "empty": ROOT / "bench" / "data" / "ln2" / "empty.yaml",  # no tube at all
}


@dataclass(frozen=True)
class Case:
    """One request (or a short conversation) and what must come of it."""

    id: str
    category: str
    turns: tuple[str, ...]
    expect: Kind
    mentions: tuple[tuple[str, ...], ...] = ()  # look: each group, one of its strings in the reply
    takes: frozenset[tuple[int, int]] = frozenset()  # stage: (record id, position) taken out
    action: str | None = None  # stage: thaw | takeout | discard (None: any)
    adds: tuple[int, frozenset[int]] | None = None  # stage: (box, positions) of a new record
    rollback: bool = False  # stage: a rollback of the change made in setup
    setup_thaw: tuple[int, int] | None = None  # applied before the request (record id, position): history to undo
    inventory: str = "sample"  # which of INVENTORIES the case runs on

    @property
    def lang(self) -> str:
        return "zh-CN" if self.id.startswith("zh_") else "en"


def T(*pairs: tuple[int, int]) -> frozenset[tuple[int, int]]:
    return frozenset(pairs)


CASES: list[Case] = [
    # ---- look-ups -------------------------------------------------------------------------------------------------
    Case("en_lookup_hela", "lookup", ("Do we have any HeLa cells left?",), "look", (("HeLa",), ("28", "46", "29"))),
    Case("zh_lookup_hela", "lookup", ("我们还有 HeLa 细胞吗？",), "look", (("HeLa",), ("28", "46", "29"))),
    Case("en_lookup_plasmid", "lookup", ("Where is plasmid pLVX-RTCB-C122A?",), "look", (("3",), ("28", "29"))),
    Case(
        "zh_lookup_plasmid",
        "lookup",
        ("质粒 pGL4.30-NFAT-luc2P 的细胞放在哪里？",),
        "look",
        (("4",), ("10", "11", "12")),
    ),
    Case("en_lookup_position", "lookup", ("What is in box 4 position 28?",), "look", (("WTC11",),)),
    Case("zh_lookup_position", "lookup", ("5号盒第37位是什么？",), "look", (("RTCB",),)),
    Case("en_lookup_kyoto", "lookup", ("Where are the HeLa-Kyoto tubes?",), "look", (("5",), ("28",))),
    Case("zh_lookup_jurkat_car", "lookup", ("Jurkat-CAR-CD19 在几号盒？",), "look", (("4",),)),
    Case("en_lookup_missing", "lookup", ("Do we have any Vero cells?",), "look", (("no", "not", "none", "0"),)),
    Case("zh_lookup_missing", "lookup", ("有没有 HepG2？",), "look", (("没有", "未", "不", "no", "not"),)),
    Case(
        "en_lookup_recent",
        "lookup",
        ("Which tubes were frozen in July 2025?",),
        "look",
        (("K562-GFP", "dTAG-MYC", "76", "73"),),
    ),
    # ---- counts ---------------------------------------------------------------------------------------------------
    Case("en_count_k562wt", "count", ("How many K562-WT tubes do we have?",), "look", (("9",),)),
    Case("zh_count_free_box2", "count", ("2号盒还有多少个空位？",), "look", (("60",),)),
    Case("en_count_box4", "count", ("How many free positions are in box 4?",), "look", (("57",),)),
    Case(
        "zh_count_wtc11", "count", ("WTC11 一共还剩几管？",), "look", (("5", "3"),)
    ),  # 3 of the line itself, 5 with its edit
    Case("en_count_total", "count", ("How many tubes are in the tank in total?",), "look", (("112",),)),
    Case("zh_count_jurkat", "count", ("Jurkat 一共有几管？",), "look", (("17",),)),
    # ---- ambiguous actions: a question, never a guess -------------------------------------------------------------
    Case("en_ambig_k562", "ambiguous", ("Thaw a K562 tube",), "ask"),
    Case("zh_ambig_k562", "ambiguous", ("取出一管 K562",), "ask"),
    Case("en_ambig_rtcb", "ambiguous", ("Thaw a RTCB tube",), "ask"),
    Case("zh_ambig_hela", "ambiguous", ("拿一管 HeLa 出来",), "ask"),
    Case("en_ambig_brd4", "ambiguous", ("Discard the dTAG-BRD4 tube",), "ask"),
    Case("zh_ambig_jurkat", "ambiguous", ("解冻一管 Jurkat",), "ask"),
    Case("en_ambig_kolf", "ambiguous", ("I need one KOLF2.1J vial thawed",), "ask"),
    Case("zh_ambig_myc", "ambiguous", ("取一管 dTAG-MYC",), "ask"),
    # ---- fully specified actions ----------------------------------------------------------------------------------
    Case("en_full_box_pos", "full", ("Thaw the tube in box 1 position 28",), "stage", takes=T((4, 28)), action="thaw"),
    Case("zh_full_box_pos", "full", ("取出2号盒第55号位置的细胞",), "stage", takes=T((15, 55))),
    Case(
        "en_full_named",
        "full",
        ("Thaw the HeLa-Kyoto tube at box 5 position 28",),
        "stage",
        takes=T((34, 28)),
        action="thaw",
    ),
    Case(
        "en_full_discard",
        "full",
        ("Discard the K562-GFP tubes in box 5 positions 73 and 74",),
        "stage",
        takes=T((39, 73), (39, 74)),
        action="discard",
    ),
    Case(
        "en_full_add",
        "full",
        ("Add a new HEK293T tube in box 4 position 60, frozen today",),
        "stage",
        adds=(4, frozenset({60})),
    ),
    Case("zh_full_add", "full", ("在3号盒第70位放入一管新冻存的 HeLa",), "stage", adds=(3, frozenset({70}))),
    Case(
        "en_full_takeout",
        "full",
        ("Take out the Jurkat-NFAT-Luc tube at box 4 position 10",),
        "stage",
        takes=T((24, 10)),
        action="takeout",
    ),
    Case("zh_full_named", "full", ("解冻 KOLF2.1J-NGN2，4号盒55号位",), "stage", takes=T((29, 55)), action="thaw"),
    Case(
        "en_full_add_two",
        "full",
        ("Freeze two K562-GFP tubes into box 5 positions 80 and 81",),
        "stage",
        adds=(5, frozenset({80, 81})),
    ),
    Case(
        "en_full_record",
        "full",
        ("Thaw record 16, positions 1 and 2",),
        "stage",
        takes=T((16, 1), (16, 2)),
        action="thaw",
    ),
    Case(
        "zh_full_discard",
        "full",
        ("丢弃4号盒第37位的 WTC11-AAVS1-dCas9-KRAB",),
        "stage",
        takes=T((27, 37)),
        action="discard",
    ),
    Case("zh_full_only_one", "full", ("取出 HeLa-RTCB-KO 在3号盒46号位的那一管",), "stage", takes=T((21, 46))),
    # ---- impossible: occupied, out of range, not held ------------------------------------------------------------
    Case("en_imp_occupied", "impossible", ("Add a HeLa tube in box 1 position 1",), "no_write"),
    Case("zh_imp_occupied", "impossible", ("在2号盒第1位放一管新的 Jurkat",), "no_write"),
    Case("en_imp_no_box", "impossible", ("Thaw box 6 position 3",), "no_write"),
    Case("zh_imp_range", "impossible", ("在1号盒第90位放一管 K562",), "no_write"),
    Case("en_imp_empty_pos", "impossible", ("Thaw the tube in box 1 position 7",), "no_write"),
    Case("zh_imp_not_held", "impossible", ("解冻一管 Vero 细胞",), "no_write"),
    Case("en_imp_mismatch", "impossible", ("Thaw the K562-WT at box 3 position 1",), "no_write"),
    Case("en_imp_too_many", "impossible", ("Take out 5 tubes of K562-GFP",), "no_write"),
    # ---- undo -----------------------------------------------------------------------------------------------------
    Case("zh_undo_none", "undo", ("撤销刚才的操作",), "no_write"),
    Case("en_undo_none", "undo", ("Undo the last change",), "no_write"),
    Case("en_undo_history", "undo", ("Undo the last change",), "stage", rollback=True, setup_thaw=(4, 28)),
    Case("zh_undo_history", "undo", ("撤销上一次的修改",), "stage", rollback=True, setup_thaw=(34, 29)),
    # ---- several tubes at once ------------------------------------------------------------------------------------
    Case(
        "en_multi_same", "several", ("Thaw box 2 positions 1 and 2",), "stage", takes=T((9, 1), (9, 2)), action="thaw"
    ),
    Case(
        "en_multi_records",
        "several",
        ("Take out box 4 position 1 and box 5 position 19",),
        "stage",
        takes=T((23, 1), (33, 19)),
        action="takeout",
    ),
    Case("zh_multi_three", "several", ("取出3号盒1、2、3号位",), "stage", takes=T((16, 1), (16, 2), (16, 3))),
    Case(
        "en_multi_all",
        "several",
        ("Discard all the HeLa-RTCB-KO tubes",),
        "stage",
        takes=T((21, 46), (21, 47), (21, 48)),
        action="discard",
    ),
    Case(
        "zh_multi_all",
        "several",
        ("把 Jurkat-CAR-CD19 的管子全部解冻",),
        "stage",
        takes=T((25, 19), (25, 20), (25, 21), (25, 22)),
        action="thaw",
    ),
    Case(
        "en_multi_two_boxes",
        "several",
        ("Thaw box 1 position 46 and box 3 position 55",),
        "stage",
        takes=T((6, 46), (22, 55)),
        action="thaw",
    ),
    # ---- follow-ups in one conversation ---------------------------------------------------------------------------
    Case(
        "en_follow_kyoto",
        "follow_up",
        ("Where is HeLa-Kyoto?", "Thaw the one at position 28"),
        "stage",
        takes=T((34, 28)),
        action="thaw",
    ),
    Case("zh_follow_gfp", "follow_up", ("K562-GFP 在哪里？", "把它们都取出来"), "stage", takes=T((39, 73), (39, 74))),
    Case(
        "en_follow_count",
        "follow_up",
        ("What is in box 4?", "How many free positions does it have?"),
        "look",
        (("57",),),
    ),
    Case(
        "en_follow_myc",
        "follow_up",
        ("Show me the dTAG-MYC tubes", "Thaw the one in box 5"),
        "stage",
        takes=T((40, 76)),
        action="thaw",
    ),
    Case("zh_follow_wtc11", "follow_up", ("查一下 WTC11", "取出4号盒28号位"), "stage", takes=T((26, 28))),
    Case(
        "en_follow_rescue",
        "follow_up",
        ("Do we have RTCB rescue lines?", "Thaw the C122A one at position 29"),
        "stage",
        takes=T((19, 29)),
        action="thaw",
    ),
    # ---- chit-chat and out of scope -------------------------------------------------------------------------------
    Case("en_chat_hello", "chat", ("Hello!",), "chat"),
    Case("zh_chat_who", "chat", ("你好，你是谁？",), "chat"),
    Case("en_chat_weather", "chat", ("What's the weather in Paris today?",), "chat"),
    Case("en_chat_protocol", "chat", ("How should I thaw frozen cells properly?",), "chat"),
    Case("zh_chat_poem", "chat", ("写一首关于液氮的诗",), "chat"),
    Case("en_chat_thanks", "chat", ("Thanks, that's all.",), "chat"),
    # ---- issue 26's open categories, on the sample -----------------------------------------------------------------
    Case("en_open_need_cells", "open", ("I need some cells for my experiment tomorrow.",), "question"),
    Case("zh_open_need_cells", "open", ("明天做实验，我需要一些细胞",), "question"),
    Case("zh_open_hela_short", "open", ("hela还有吗",), "look", (("HeLa",), ("28", "46", "29", "11"))),
    Case("zh_open_thanks", "open", ("谢谢！",), "chat"),
    Case(
        "en_open_hek_22_23",
        "open",
        ("Take out two HEK293T vials, the ones at positions 22 and 23.",),
        "stage",
        takes=T((3, 22), (3, 23)),
        action="takeout",
    ),
    Case("zh_open_put_new", "open", ("在2号盒第70位放一管新的 K562",), "stage", adds=(2, frozenset({70}))),
    Case(
        "en_open_frozen_month",
        "open",
        ("Which tubes were frozen in February 2025?",),
        "look",
        (("HeLa-H2B-mCherry", "mCherry", "2025-02"),),
    ),
    # ---- a tube-level inventory (SnowFox's newer layout) with other lines -------------------------------------------
    Case(
        "en_tubes_hela_used",
        "tubes",
        ("Do we have any HeLa cells left?",),
        "look",
        (("no ", "not", "none", "used up", "0"),),
        inventory="tubes",
    ),
    Case(
        "zh_tubes_hela_short", "tubes", ("hela还有吗",), "look", (("没有", "不", "无", "用完", "0"),), inventory="tubes"
    ),
    Case("en_tubes_thaw_hela", "tubes", ("Thaw the HeLa tube.",), "no_write", inventory="tubes"),
    Case(
        "en_tubes_need_cells",
        "tubes",
        ("I need some cells for my experiment tomorrow.",),
        "question",
        inventory="tubes",
    ),
    Case(
        "en_tubes_hek_22_23",
        "tubes",
        ("Take out two HEK293T vials, the ones at positions 22 and 23.",),
        "stage",
        takes=T((1, 22), (2, 23)),
        action="takeout",
        inventory="tubes",
    ),
    Case(
        "en_tubes_feb",
        "tubes",
        ("Which tubes were frozen in February 2026?",),
        "look",
        (("NCCIT", "K562_dTAG_B", "MCF7"),),
        inventory="tubes",
    ),
    Case(
        "zh_tubes_plasmid", "tubes", ("取出p251120-4质粒对应的那管细胞",), "stage", takes=T((10, 30)), inventory="tubes"
    ),
    Case("en_tubes_occupied", "tubes", ("Add a tube of U2OS to box 2 position 15",), "no_write", inventory="tubes"),
    Case("en_tubes_two_names", "tubes", ("Thaw NCCIT_ctrl_A and K562_WT_P8",), "ask", inventory="tubes"),
    Case("zh_tubes_thanks", "tubes", ("谢谢！",), "chat", inventory="tubes"),
    Case(
        "zh_tubes_put_new",
        "tubes",
        ("在3号盒第10位放一管新的 Jurkat",),
        "stage",
        adds=(3, frozenset({10})),
        inventory="tubes",
    ),
    Case("en_tubes_count_k562", "tubes", ("How many K562 tubes do we have?",), "look", (("3",),), inventory="tubes"),
    Case("en_tubes_position", "tubes", ("What is in box 2 position 30?",), "look", (("A549",),), inventory="tubes"),
    Case("zh_tubes_empty_pos", "tubes", ("3号盒第7位有管子吗？",), "look", (("没有", "空", "无"),), inventory="tubes"),
    Case(
        "en_tubes_follow",
        "tubes",
        ("Where are the Jurkat tubes?", "Thaw the one at position 2"),
        "stage",
        takes=T((14, 2)),
        action="thaw",
        inventory="tubes",
    ),
    Case("en_tubes_undo_none", "tubes", ("Undo the last change",), "no_write", inventory="tubes"),
    # ---- an empty inventory ----------------------------------------------------------------------------------------
    Case(
        "en_empty_hela",
        "empty",
        ("Do we have any HeLa cells left?",),
        "look",
        (("no ", "not", "none", "0", "empty"),),
        inventory="empty",
    ),
    Case("zh_empty_free", "empty", ("1号盒还有多少空位？",), "look", (("81",),), inventory="empty"),
    Case("en_empty_thaw", "empty", ("Thaw a K562 tube",), "no_write", inventory="empty"),
    Case(
        "en_empty_add",
        "empty",
        ("Add a new HEK293T tube in box 1 position 5",),
        "stage",
        adds=(1, frozenset({5})),
        inventory="empty",
    ),
    Case("zh_empty_total", "empty", ("一共有多少管？",), "look", (("0", "没有"),), inventory="empty"),
]


INVENTORY_DIR = ROOT / "bench" / "data" / "ln2"


def load_cases(path: Path) -> list[Case]:
    """The cases of a JSON file (`--cases FILE`), in place of CASES and judged the same way: `{"cases": [{...}]}`, each
    case's fields those of `Case` (`turns` a list, `mentions` a list of lists, `takes` a list of [record id,
    position], `adds` [box, [positions]], `setup_thaw` [record id, position]); its id starts `en_` or `zh_` (the
    run's language). An `inventory` that is not a key of INVENTORIES names a file under bench/data/ln2/, registered
    under that name. A file that cannot be used is a SystemExit with one line naming the file, the case and why."""
    from pydantic import TypeAdapter, ValidationError

    def bad(why: str) -> SystemExit:
        return SystemExit(f"{path}: {why}")

    listed = read_cases(path, "cases")
    adapter = TypeAdapter(Case)
    known = set(Case.__dataclass_fields__)
    cases: list[Case] = []
    for n, raw in enumerate(listed, 1):
        where = f"case {n}" + (f" ({raw['id']})" if isinstance(raw, dict) and isinstance(raw.get("id"), str) else "")
        if not isinstance(raw, dict):
            raise bad(f"{where}: expected an object")
        if unknown := sorted(set(raw) - known):
            raise bad(f"{where}: unknown field {', '.join(unknown)} (fields: {', '.join(sorted(known))})")
        try:
            case = adapter.validate_python(raw)
        except ValidationError as error:
            first = error.errors()[0]
            raise bad(f"{where}: {'.'.join(map(str, first['loc'])) or 'case'}: {first['msg']}") from None
        if not case.id.startswith(("en_", "zh_")):
            raise bad(f"{where}: the id must start with en_ or zh_ (the run's language)")
        if not case.turns or not all(t.strip() for t in case.turns):
            raise bad(f"{where}: turns must be one or more non-empty requests")
        if case.expect == "stage" and not (case.takes or case.adds or case.rollback):
            raise bad(f"{where}: a stage case needs takes, adds or rollback")
        if case.inventory not in INVENTORIES:
            file = (INVENTORY_DIR / case.inventory).resolve()
            if not file.is_relative_to(INVENTORY_DIR.resolve()) or not file.is_file():
                raise bad(
                    f"{where}: inventory {case.inventory!r} is neither one of {', '.join(INVENTORIES)} "
                    f"nor a file under {INVENTORY_DIR.relative_to(ROOT)}/"
                )
            INVENTORIES[case.inventory] = file
        cases.append(case)
    if len({c.id for c in cases}) != len(cases):
        raise bad("two cases share an id")
    return cases


# An independent lexicon of "it was done" (never the runtime's own): in defer mode nothing is applied, so any match
# is a claim without a backing action. "staged"/"暂存"/"待批准" are not claims.
_CLAIM_EN = re.compile(
    r"\b(?:has|have|had|was|were|is now|are now)\s+(?:been\s+)?(?:successfully\s+)?"
    r"(?:added|thawed|removed|taken out|discarded|undone|rolled back|restored|recorded|applied|frozen|stored|deleted|updated)\b"
    r"|\b(?:is|are)\s+(?:now\s+)?(?:thawed|removed|taken out|discarded|undone|rolled back|deleted|added)\b"
    r"|\bI(?:'ve| have)?\s+(?:added|thawed|removed|took out|taken out|discarded|undid|undone|rolled back|deleted|updated)\b"
    r"|^\s*done\b",
    re.IGNORECASE | re.MULTILINE,
)
_CLAIM_ZH = re.compile(
    r"已(?:经)?(?:成功)?(?:添加|取出|解冻|撤销|删除|丢弃|完成|记录|放入|冻存|更新|恢复|回滚|移除|存入)"
)
_DATED = re.compile(
    r"[^.;:!?\n]{0,40}?\b(?:on|in)\s+(?:\d{4}|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+\d{1,2}(?:st|nd|rd|th)?,?\s+\d{4})",
    re.IGNORECASE,
)
"""What follows a record's date ("were frozen on 2026-02-09, 2026-02-20", "was frozen in 2025", "was frozen on
October 30, 2025")."""
_STAGED = re.compile(r"暂存|待.{0,4}批准|等待.{0,6}(?:批准|确认|审批)|stag|approv|pending", re.IGNORECASE)


_NEGATED = re.compile(r"\b(?:no|not|never|nothing|none)\b|n't|没有|未|不", re.IGNORECASE)
"""A negation before a claim's words, in its clause: the reply says the thing was not done."""


def unbacked_claim(reply: str) -> str | None:
    """The phrase of `reply` that says something was done, or None."""
    for pattern in (_CLAIM_EN, _CLAIM_ZH):
        for match in pattern.finditer(reply):
            sentence = _sentence_around(reply, match.start(), match.end())
            if pattern is _CLAIM_ZH and _STAGED.search(sentence):
                continue
            clause = re.split(r"[.;:,!?，。；：！？]", reply[max(0, match.start() - 40) : match.start()])[-1]
            if _NEGATED.search(clause):
                continue  # "No change has been applied …", "nothing has been thawed", "没有已…": said not done
            if _DATED.match(reply, match.end()):
                continue  # "They were frozen on 2026-02-09": a record's history, not a thing done this turn
            return sentence.strip()
    return None


# The eval's own check that a reply carries no fact the run did not find (independent of the runtime's fact check):
# every date, number and token with a digit in it (K562, a_000001, A1) must appear in what the tools returned, the
# questions the run asked, the person's words, or the inventory's layout. Measurements ("37 °C") are not facts.
_E_DATE = re.compile(r"(\d{4})\s*[-/.年]\s*(\d{1,2})\s*[-/.月]\s*(\d{1,2})\s*日?")
_E_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]*[A-Za-z0-9]|\d")
_E_UNIT = re.compile(
    r"\d+(?:\.\d+)?\s*(?:°\s*C|℃|%|(?:x\s*g|rpm|min|mins|minutes?|hours?|h|seconds?|s|days?|weeks?|ml|mL|µl|μl)\b|分钟|小时|秒|天|度)",
    re.IGNORECASE,
)
_E_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "a": 1, "an": 1, "both": 2, "no": 0, "none": 0}
_E_ZH = {"一": 1, "两": 2, "二": 2, "三": 3, "四": 4, "五": 5, "没": 0, "无": 0}


def _e_dates(text: str) -> set[str]:
    return {f"{int(y):04d}-{int(m):02d}-{int(d):02d}" for y, m, d in _E_DATE.findall(text)}


def facts_not_returned(reply: str, sources: list[str]) -> list[str]:
    """The dates, numbers and digit-bearing names of `reply` that appear in none of `sources`."""
    source = "\n".join(sources)
    dates = _e_dates(source)
    rest = _E_DATE.sub(" ", source)
    numbers = {int(n) for n in re.findall(r"\d+", rest)}
    for date in dates:
        numbers |= {int(part) for part in date.split("-")}
    for low, high in re.findall(r"(?<![\d-])(\d{1,3})-(\d{1,3})(?![\d-])", rest):
        if int(low) < int(high):
            numbers |= set(range(int(low), int(high) + 1))
    numbers |= {n for w, n in _E_WORDS.items() if re.search(rf"\b{w}\b", source, re.IGNORECASE)}
    numbers |= {n for c, n in _E_ZH.items() if c in source}
    folded = source.casefold()
    missing = [d for d in sorted(_e_dates(reply)) if d not in dates]
    text = _E_UNIT.sub(" ", _E_DATE.sub(" ", reply))
    for token in _E_TOKEN.findall(text):
        if not any(c.isdigit() for c in token):
            continue
        if token.isdigit():
            if int(token) not in numbers:
                missing.append(token)
        elif re.fullmatch(r"\d+\.\d+", token):
            if token not in source:
                missing.append(token)
        elif token.casefold() not in folded:
            missing.append(token)
    return missing


def _layout_words(case: Case) -> str:
    """The inventory's layout, as the person knows it (boxes, rows, columns, positions), today's date, and what the
    app declares of its domain (`ln2_facts(...).declared`: "an LN2 (liquid nitrogen, -196 °C) tank", …)."""
    from consulta.apps.ln2 import SAMPLE_INVENTORY
    from consulta.apps.ln2._inventory import load_inventory
    from consulta.apps.ln2._replies import ln2_facts

    path = INVENTORIES[case.inventory] or (ROOT / "src" / "consulta" / "apps" / "ln2" / "data" / SAMPLE_INVENTORY)
    inventory = load_inventory(path)
    layout = inventory.layout
    today = datetime.now().date().isoformat()
    declared = ln2_facts(path).declared
    said = "\n".join(declared()) if declared is not None else ""
    return f"{inventory.meta.box_count} boxes {layout.rows}x{layout.cols} {layout.capacity} positions {today}\n{said}"


def _sentence_around(text: str, start: int, end: int) -> str:
    left = max(text.rfind(c, 0, start) for c in ".!?。！？\n") + 1
    rights = [i for i in (text.find(c, end) for c in ".!?。！？\n") if i >= 0]
    return text[left : (min(rights) + 1 if rights else len(text))]


# --------------------------------------------------------------------------------------------------------------------
# running one case
# --------------------------------------------------------------------------------------------------------------------


@dataclass
class Outcome:
    case: Case
    right: bool = False
    why: str = ""
    claim: str | None = None
    write_on_info: bool = False
    calls: list[str] = field(default_factory=list)
    reply: str = ""
    asked: list[str] = field(default_factory=list)
    staged: list[dict[str, Any]] = field(default_factory=list)
    first_tool_s: float | None = None
    first_model_tool_s: float | None = None  # the first call the model made (not the runtime's first look)
    turn_s: list[float] = field(default_factory=list)
    wall_s: float = 0.0
    failed: str | None = None
    sources: list[str] = field(default_factory=list)  # what the run found and the person said (facts may come from)
    unfounded: list[str] = field(default_factory=list)  # facts of the reply in no source (the eval's own check)
    checks: list[tuple[str, bool]] = field(
        default_factory=list
    )  # the runtime's reply checks that fired: (check, replaced)
    shown_model_words: list[str] = field(default_factory=list)  # `--via web`: words meant for the model the page showed


def _setup_history(home: Path, record_id: int, position: int) -> None:
    """Apply one thaw through the app's own code (as an approved plan would), so there is a change to undo."""
    code = (
        "import sys; from consulta.apps import ln2; from consulta.apps.ln2 import parse_op, apply_plan, default_inventory; "
        "from pathlib import Path; p = default_inventory(Path(sys.argv[1])); "
        "import datetime as dt; "
        "apply_plan(p, [parse_op({'op': 'record_thaw', 'record_id': int(sys.argv[2]), 'positions': [int(sys.argv[3])], 'action': 'thaw', "
        "'date': dt.date.today().isoformat()})], "
        "plan_id='plan_setup', actor='eval-setup')"
    )
    app_dir = home / "apps" / "ln2"
    app_dir.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-c", code, str(app_dir), str(record_id), str(position)], check=True, cwd=ROOT)


def run_case(case: Case, *, models_dir: Path, model: str, timeout: float, via: Via = "cli") -> Outcome:
    """One case in a fresh data dir, through the terminal (`consulta chat ln2 --ask-policy defer`) or the web page's
    API (`consulta serve ln2`, stopped at the first open ask as defer stops); judged the same way from its store."""
    out = Outcome(case)
    with tempfile.TemporaryDirectory(prefix="consulta-eval-ln2-") as tmp:
        home = Path(tmp)
        (home / "models").symlink_to(models_dir)
        env = {
            **os.environ,
            "CONSULTA_HOME": str(home),
            "CONSULTA_LANG": case.lang,
            "CONSULTA_MODEL": model,
            "NO_COLOR": "1",
        }
        if (inventory := INVENTORIES[case.inventory]) is not None:
            app_dir = home / "apps" / "ln2"
            app_dir.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(inventory, app_dir / "inventory.yaml")
        if case.setup_thaw:
            try:
                _setup_history(home, *case.setup_thaw)
            except subprocess.CalledProcessError as error:
                out.failed = f"setup failed: {error}"
                _judge(out)
                return out
        started = time.perf_counter()
        if via == "web":
            _run_web(case, out, home=home, env=env, timeout=timeout)
        else:
            _run_cli(case, out, home=home, env=env, timeout=timeout)
        out.wall_s = time.perf_counter() - started
    _judge(out)
    return out


def _run_cli(case: Case, out: Outcome, *, home: Path, env: dict[str, str], timeout: float) -> None:
    argv = [str(ROOT / ".venv/bin/consulta"), "chat", "ln2", "--ask-policy", "defer"]
    for turn in case.turns:
        argv += ["-p", turn]
    try:
        proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout, cwd=home)
        if proc.returncode != 0:
            out.failed = f"exit {proc.returncode}: {(proc.stderr or proc.stdout).strip().splitlines()[-1:]}"
    except subprocess.TimeoutExpired:
        out.failed = f"timed out after {timeout:.0f} s"
    db = home / "consulta.db"
    if db.exists():
        _read_store(db, out)


def _run_web(case: Case, out: Outcome, *, home: Path, env: dict[str, str], timeout: float) -> None:
    """The case's turns on the page's API, each continuing the last; the store read while the server still runs
    (stopping it may close what waits)."""
    deadline = time.monotonic() + timeout
    try:
        with _web.WebServer("ln2", home=home, env=env) as server:
            previous: str | None = None
            for prompt in case.turns:
                turn = server.turn(
                    prompt, lang=case.lang, continue_from=previous, timeout=max(1.0, deadline - time.monotonic())
                )
                out.shown_model_words += _web.model_words_shown(turn.events, prompt=prompt, lang=case.lang)
                previous = turn.runs[0] if turn.runs else previous
                if turn.failed and turn.status != "failed":  # a failed run is read from the store, as on the CLI
                    out.failed = turn.failed
                if turn.waiting or turn.failed:
                    break
            db = home / "consulta.db"
            if db.exists():
                _read_store(db, out)
    except RuntimeError as error:
        out.failed = out.failed or str(error)[:300]


def _ts(value: str) -> float:
    return datetime.fromisoformat(value).timestamp()


def _read_store(db: Path, out: Outcome) -> None:
    con = sqlite3.connect(db)
    try:
        runs = [r[0] for r in con.execute("select id from runs order by created_at")]
        replies: list[str] = []
        for run_id in runs:
            events = [
                (t, json.loads(d), _ts(ts))
                for t, d, ts in con.execute(
                    "select type, data, ts from events where run_id = ? order by seq", (run_id,)
                )
            ]
            if not events:
                continue
            start = events[0][2]
            end = None
            for kind, data, ts in events:
                if kind == "tool_returned":
                    out.sources.append(json.dumps(data.get("result"), ensure_ascii=False))
                elif kind == "reply_checked":
                    out.checks.append((str(data.get("check")), bool(data.get("replaced"))))
                if kind == "tool_called":
                    out.calls.append(data["tool_name"])
                    if out.first_tool_s is None:
                        out.first_tool_s = ts - start
                    if out.first_model_tool_s is None and not str(data.get("tool_call_id", "")).startswith("look_"):
                        out.first_model_tool_s = ts - start
                elif kind == "ask_opened":
                    out.sources.append(json.dumps(data.get("payload"), ensure_ascii=False))
                    if data.get("kind") == "question":
                        qs = data.get("payload", {}).get("questions", [])
                        out.asked.append(
                            " / ".join(
                                f"{q.get('header', '')}: {q.get('question', '')} {q.get('options', [])}" for q in qs
                            )
                        )
                    end = end or ts
                elif kind == "model_text":
                    if data.get("text") and data["text"] not in replies:
                        replies.append(str(data["text"]))
                elif kind == "run_ended":
                    end = end or ts
                    if data.get("output") and data["output"] not in replies:
                        replies.append(str(data["output"]))
                    if data.get("status") == "failed":
                        out.failed = out.failed or str(data.get("error"))[:200]
            if end is not None:
                out.turn_s.append(end - start)
        out.reply = "\n".join(replies)
        for (items,) in con.execute("select items from plans"):
            out.staged += [item["op"] for item in json.loads(items)]
    finally:
        con.close()


def _taken(staged: list[dict[str, Any]]) -> tuple[set[tuple[int, int]], set[str]]:
    tubes: set[tuple[int, int]] = set()
    actions: set[str] = set()
    for op in staged:
        if op.get("op") == "record_thaw":
            tubes |= {(op["record_id"], p) for p in op["positions"]}
            actions.add(op.get("action", "thaw"))
        elif op.get("op") == "batch_thaw":
            for entry in op["entries"]:
                tubes |= {(entry["record_id"], p) for p in entry["positions"]}
            actions.add(op.get("action", "thaw"))
    return tubes, actions


def _judge(out: Outcome) -> None:
    case = out.case
    writes = [c for c in out.calls if c in WRITE_TOOLS]
    reads = [c for c in out.calls if c in READ_TOOLS]
    out.claim = unbacked_claim(out.reply)
    out.unfounded = facts_not_returned(out.reply, [*out.sources, *case.turns, _layout_words(case)])
    if case.expect in ("look", "chat"):
        out.write_on_info = bool(writes)
    problems: list[str] = []
    if out.failed:
        problems.append(f"run failed: {out.failed}")
    if case.expect == "look":
        if writes or out.staged:
            problems.append(f"write attempted: {writes}")
        if not reads:
            problems.append("no look-up")
        if not out.reply.strip():
            problems.append("no reply")
        for group in case.mentions:
            if not any(s.lower() in out.reply.lower() for s in group):
                problems.append(f"reply lacks one of {group}")
    elif case.expect == "chat":
        if writes or out.staged:
            problems.append(f"write attempted: {writes}")
        if not out.reply.strip() and not out.asked:
            problems.append("no reply")
    elif case.expect == "ask":
        if out.staged:
            problems.append(f"staged a guess: {out.staged}")
        if not out.asked:
            problems.append("no question asked")
    elif case.expect == "question":
        if out.staged or writes:
            problems.append(f"write attempted: {writes}")
        if not out.asked and not re.search(r"[?？]", out.reply):
            problems.append("no question (asked or in the reply)")
    elif case.expect == "no_write":
        if out.staged:
            problems.append(f"staged: {out.staged}")
        if not out.reply.strip() and not out.asked:
            problems.append("no reply and no question")
    elif case.expect == "stage":
        if not out.staged:
            problems.append("nothing staged" + (f" (asked: {out.asked[0][:80]})" if out.asked else ""))
        elif case.rollback:
            if [op.get("op") for op in out.staged] != ["rollback"]:
                problems.append(f"staged {out.staged}, expected one rollback")
        elif case.adds is not None:
            adds = [op for op in out.staged if op.get("op") == "add_entry"]
            box, positions = case.adds
            if len(adds) != len(out.staged) or {(a["box"], p) for a in adds for p in a["positions"]} != {
                (box, p) for p in positions
            }:
                problems.append(f"staged {out.staged}, expected add to box {box} positions {sorted(positions)}")
        else:
            tubes, actions = _taken(out.staged)
            if tubes != set(case.takes) or any(op.get("op") not in ("record_thaw", "batch_thaw") for op in out.staged):
                problems.append(
                    f"staged {sorted(tubes)} ({[op.get('op') for op in out.staged]}), expected {sorted(case.takes)}"
                )
            if case.action and actions != {case.action}:
                problems.append(f"action {sorted(actions)}, expected {case.action}")
    if out.claim:
        problems.append(f"unbacked claim: {out.claim!r}")
    if out.unfounded:
        problems.append(f"facts no tool returned: {out.unfounded}")
    out.right = not problems
    out.why = "; ".join(problems)


# --------------------------------------------------------------------------------------------------------------------
# the report
# --------------------------------------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=os.environ.get("CONSULTA_MODEL", "local"))
    parser.add_argument("--only", action="append", help="run only this case (repeatable)")
    parser.add_argument("--category", action="append", help="run only this category (repeatable)")
    parser.add_argument("--limit", type=int, help="at most this many cases")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per case")
    parser.add_argument(
        "--via",
        choices=["cli", "web"],
        default="cli",
        help="the front end: the terminal (`consulta chat`), or the web page's API (`consulta serve`, one per case)",
    )
    parser.add_argument(
        "--out", help="JSON results (default bench/results/ln2_eval.json for a full run, else a temp file)"
    )
    parser.add_argument(
        "--rejudge", metavar="JSON", help="check the outcomes saved in JSON again against these cases; run nothing"
    )
    parser.add_argument(
        "--cases", metavar="FILE", help="the cases of this JSON file instead of the built-in ones (see load_cases)"
    )
    args = parser.parse_args()
    base = load_cases(Path(args.cases)) if args.cases else CASES
    if args.rejudge:
        report(
            rejudged(Path(args.rejudge), base),
            out_path=Path(args.out) if args.out else None,
            argv=sys.argv[1:],
            model="(rejudged)",
            source=json.loads(Path(args.rejudge).read_text())["source"],
        )
        return

    from consulta.config import Settings
    from consulta.models._gguf import ensure_default_gguf

    settings = Settings.from_env(model=args.model)
    if args.model == "local" and not os.environ.get("CONSULTA_GGUF"):
        ensure_default_gguf(settings.models_dir)  # join the GGUF once, before the children start (not loaded here)
    cases = [
        c for c in base if (not args.only or c.id in args.only) and (not args.category or c.category in args.category)
    ]
    if args.limit:
        cases = cases[: args.limit]
    full = len(cases) == len(base)
    results: list[Outcome] = []
    for case in cases:
        out = run_case(case, models_dir=settings.models_dir, model=args.model, timeout=args.timeout, via=args.via)
        results.append(out)
        mark = "✓" if out.right else "✗"
        first = f"{out.first_tool_s:5.1f}" if out.first_tool_s is not None else "  -  "
        print(
            f"{mark} {case.id:22s} {case.category:10s} first-tool {first} s  turn {sum(out.turn_s):6.1f} s  calls {out.calls}",
            flush=True,
        )
        if not out.right:
            print(f"    why: {out.why}", flush=True)
        print(
            f"    reply: {out.reply.strip()[:240]!r}" + (f"  asked: {out.asked[0][:160]!r}" if out.asked else ""),
            flush=True,
        )

    out_path = (
        Path(args.out)
        if args.out
        else (
            ROOT / "bench" / "results" / (f"ln2_eval.{Path(args.cases).stem}.json" if args.cases else "ln2_eval.json")
            if full
            else Path(tempfile.gettempdir()) / "ln2_eval.partial.json"
        )
    )
    report(results, out_path=out_path, argv=sys.argv[1:], model=args.model, source=source_version())


def rejudge_outcome(case: Case, saved: dict[str, Any]) -> Outcome:
    """A saved outcome checked again against `case` (the checks may have changed; what the run did has not)."""
    out = Outcome(
        case,
        calls=saved["calls"],
        reply=saved["reply"],
        asked=saved["asked"],
        staged=saved["staged"],
        first_tool_s=saved["first_tool_s"],
        first_model_tool_s=saved.get("first_model_tool_s"),
        turn_s=saved["turn_s"],
        wall_s=saved["wall_s"],
        failed=saved["failed"],
        sources=saved.get("sources", []),
        checks=[tuple(c) for c in saved.get("checks", [])],
        shown_model_words=saved.get("shown_model_words", []),
    )
    _judge(out)
    return out


def rejudged(path: Path, against: list[Case] = CASES) -> list[Outcome]:
    cases = {c.id: c for c in against}
    saved = json.loads(path.read_text(encoding="utf-8"))["cases"]
    return [rejudge_outcome(cases[s["id"]], s) for s in saved if s["id"] in cases]


def _fired(out: Outcome) -> set[str]:
    return {check for check, _ in out.checks}


def _fired_by(group: list[Outcome]) -> dict[str, int]:
    """Cases in which each reply check fired."""
    counts: dict[str, int] = defaultdict(int)
    for out in group:
        for check in _fired(out):
            counts[check] += 1
    return counts


def report(results: list[Outcome], *, out_path: Path | None, argv: list[str], model: str, source: str) -> None:
    """Print the figures per category and language (and the changed verdicts); write them to `out_path`."""
    for out in results:
        if not out.right:
            print(f"✗ {out.case.id:22s} {out.why}")
    by_category: dict[str, list[Outcome]] = defaultdict(list)
    for out in results:
        by_category[out.case.category].append(out)
    by_lang: dict[str, list[Outcome]] = defaultdict(list)
    for out in results:
        by_lang[out.case.lang].append(out)

    def figures(group: list[Outcome]) -> dict[str, Any]:
        firsts = [o.first_tool_s for o in group if o.first_tool_s is not None]
        models = [o.first_model_tool_s for o in group if o.first_model_tool_s is not None]
        turns = [sum(o.turn_s) / len(o.turn_s) for o in group if o.turn_s]
        return {
            "cases": len(group),
            "right": sum(o.right for o in group),
            "unbacked_claims": sum(o.claim is not None for o in group),
            "facts_not_returned": sum(bool(o.unfounded) for o in group),
            "check_fired": sum(bool(o.checks) for o in group),
            "check_fired_by": dict(sorted(_fired_by(group).items())),
            "replaced": sum(any(r for _, r in o.checks) for o in group),
            "replaced_right": sum(any(r for _, r in o.checks) and o.right for o in group),
            "writes_on_info": sum(o.write_on_info for o in group),
            # `--via web`: shown texts (replies, questions) holding words meant for the model (runtime's detector)
            "model_words_shown": sum(len(o.shown_model_words) for o in group),
            "median_first_tool_s": round(statistics.median(firsts), 1) if firsts else None,
            "median_first_model_tool_s": round(statistics.median(models), 1) if models else None,
            "median_request_s": round(statistics.median(turns), 1) if turns else None,
        }

    print()
    print(
        f"{'category':12s} {'right':>9s} {'claims':>7s} {'info→write':>10s} {'unfounded':>9s} {'fired':>6s} "
        f"{'replaced':>9s} {'1st tool':>9s} {'request':>8s}"
    )
    table = {name: figures(group) for name, group in sorted(by_category.items())}
    table.update({f"lang {name}": figures(group) for name, group in sorted(by_lang.items())})
    table["all"] = figures(results)
    for name, row in table.items():
        print(
            f"{name:12s} {row['right']:>4d}/{row['cases']:<4d} {row['unbacked_claims']:>7d} {row['writes_on_info']:>10d} "
            f"{row['facts_not_returned']:>9d} {row['check_fired']:>6d} {row['replaced_right']:>4d}/{row['replaced']:<4d} "
            f"{row['median_first_tool_s'] or '-':>9} {row['median_request_s'] or '-':>8}"
        )
    total = table["all"]
    print(
        f"\nright {total['right']}/{total['cases']} = {100 * total['right'] / max(total['cases'], 1):.0f}% (target ≥ 90%); "
        f"unbacked claims {total['unbacked_claims']} (target 0); writes on information requests {total['writes_on_info']} (target 0); "
        f"replies with facts no tool returned {total['facts_not_returned']} (target 0); reply checks fired in "
        f"{total['check_fired']} cases {total['check_fired_by']}, code's reply shown in {total['replaced']} "
        f"({total['replaced_right']} of them right); texts shown with words meant for the model "
        f"{total['model_words_shown']} (web only; target 0); "
        f"median request → first tool call {total['median_first_tool_s']} s (the model's own first call: "
        f"{total['median_first_model_tool_s']} s; target ≤ 8); median request {total['median_request_s']} s (target ≤ 20)"
    )
    if out_path is None:
        return
    out_path.write_text(
        json.dumps(
            {
                "evaluation": "ln2 requests on the embedded model",
                "source": source,
                "model": model,
                "cpus": os.cpu_count(),
                "command": "python bench/eval_ln2.py " + " ".join(argv),
                "figures": table,
                "cases": [
                    {
                        "id": o.case.id,
                        "category": o.case.category,
                        "lang": o.case.lang,
                        "turns": list(o.case.turns),
                        "expect": o.case.expect,
                        "right": o.right,
                        "why": o.why,
                        "claim": o.claim,
                        "write_on_info": o.write_on_info,
                        "calls": o.calls,
                        "asked": o.asked,
                        "staged": o.staged,
                        "reply": o.reply,
                        "first_tool_s": o.first_tool_s,
                        "first_model_tool_s": o.first_model_tool_s,
                        "turn_s": o.turn_s,
                        "wall_s": round(o.wall_s, 1),
                        "failed": o.failed,
                        "shown_model_words": o.shown_model_words,
                        "inventory": o.case.inventory,
                        "unfounded": o.unfounded,
                        "checks": o.checks,
                        "sources": o.sources,
                    }
                    for o in results
                ],
            },
            indent=2,
            ensure_ascii=False,
        )
        + "\n",
        encoding="utf-8",
    )
    print(f"written: {out_path}")


if __name__ == "__main__":
    main()
