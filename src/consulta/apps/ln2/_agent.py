"""The ln2 agent: the seed's system prompt (rule 10 included), the tools, and where the inventory lives."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from importlib import resources
from pathlib import Path

from ..._files import create_once
from ...asks import question_tool
from ...runtime import Agent, RunRecord, all_checks
from ._inventory import load_inventory
from ._replies import asks_which_cells, check_ln2_reply, ln2_facts, stages_every_place
from ._tools import Ln2Plans, ln2_tools
from ._turns import asks_for_change, first_look_for, one_change_for, plain_look_up_for, writes_asked

__all__ = ["AGENT", "SAMPLE_INVENTORY", "build_agent", "default_inventory", "instructions"]

AGENT = "assistant"
"""ln2's one agent."""

SAMPLE_INVENTORY = "sample_inventory.yaml"

_PROMPT = """You are an LN2 inventory assistant for a liquid-nitrogen tank: {boxes} boxes of {rows}x{cols} positions, \
numbered 1..{n} row by row (1 = A1). Today is {today}.

Rules:
1) Look things up with query_inventory, search_records, empty_positions, inventory_stats, audit_history. Never invent \
records, ids, positions or dates.
2) add_entry, record_thaw, batch_thaw and rollback only STAGE changes; the user approves the plan afterwards.
3) Stage a write only when the user's words (or answers) say which tubes. Name tubes as the user did (box + positions, \
cell line, short name); record ids are optional.
4) If several records match what the user said (e.g. K562, K562-dTAG, K562-RTCB), ask which one.
5) After staging, reply with one short sentence saying what is staged.
6) Keep replies short and in the user's language.
7) Tool results with "ok": false explain the problem and a hint; follow the hint.
8) Questions about what we have, where, how many: look up, then answer from the result. Never write for them.
9) After a tool result, answer the user from it in one or two sentences, unless another call is needed.
10) You have a `question` tool to ask the user clarifying questions.
    Use it ONLY when you cannot determine the answer from inventory data.
    Always try query/search tools first before asking the user.
    Call `question` alone — never in parallel with other tools.

Examples (made-up lines, not in this tank):
- "Do we still have MCF7?" / "还有 MCF7 吗？" → query_inventory(cell_line="MCF7"), then answer from its records: how many \
tubes, and where (box and positions).
- "How many U2OS tubes are left?" → query_inventory(cell_line="U2OS"), then answer with its "tubes" count.
- "What is in box 3 position 12?" → query_inventory(box=3, position=12).
- "How many free positions in box 2?" / "2号盒还有几个空位？" → empty_positions(box=2).
- "Thaw the tube in box 4 position 7" → record_thaw(box=4, positions=[7], action="thaw").
- "取出3号盒12、13号位" → record_thaw(box=3, positions=[12, 13], action="takeout").
- "Discard one A549 tube" → record_thaw(cell_line="A549", action="discard") (if several fit, you will be asked which).
- "Put a new CHO tube in box 2 position 40" → add_entry(parent_cell_line="CHO", box=2, positions=[40]).
- "Undo the last change" / "撤销上一步" → audit_history(), then rollback(audit_id=<the newest id it lists>).
- "Hello" / "谢谢" → inventory_stats(), then a short friendly reply.
"""


def instructions(inventory_path: Path, *, today: str | None = None) -> str:
    """The system prompt over the inventory as it is now; `today` (ISO date) defaults to the clock's."""
    inventory = load_inventory(inventory_path)
    layout = inventory.layout
    return _PROMPT.format(
        boxes=inventory.meta.box_count,
        rows=layout.rows,
        cols=layout.cols,
        n=layout.rows * layout.cols,
        today=today or dt.date.today().isoformat(),
    )


def _per_run(path: Path) -> Callable[[RunRecord], str]:
    """The prompt of each run: the inventory's layout when the run is taken up, the date the run started on (a
    server running past midnight tells each run its own day; a resumed run is told what it was told before)."""
    return lambda run: instructions(path, today=run.created_at[:10])


def default_inventory(app_dir: Path) -> Path:
    """The user's inventory in the data dir; the first time, a copy of the sample inventory shipped with the app,
    made whole before it appears (servers starting together on one data dir see all of it or none; the first stands)."""
    path = app_dir / "inventory.yaml"
    if not path.exists():  # never over a copy another process made meanwhile
        create_once(path, resources.files(__package__).joinpath("data", SAMPLE_INVENTORY).read_bytes(), mode=0o644)
    return path


def build_agent(*, inventory: Path | str, question_timeout: float = 300.0) -> Agent:
    """The ln2 agent over the inventory file `inventory` (options are recorded on each run to rebuild it)."""
    path = Path(inventory).expanduser().resolve()
    load_inventory(path)  # an unreadable file is refused now, with its line and fix, not at the first run
    return Agent(
        app="ln2",
        name=AGENT,
        instructions=_per_run(path),
        tools=(*ln2_tools(path), question_tool()),
        executor=Ln2Plans(path),
        first_step_tool=True,  # an inventory turn looks up or acts before it says anything
        asks_for_change=asks_for_change,  # a question about the tank never writes
        writes_asked=writes_asked,  # putting tubes in is never offered the take-out tools, and the other way round
        first_look=first_look_for(path),  # the records the words point at, before the model's first step
        answered_by_first_look=plain_look_up_for(path),  # "Do we have HeLa left?": code says what the look found
        answered_by_staging=one_change_for(path),  # "Thaw box 1 position 28": code says the plan once it is staged
        # a look-up turn is answered from its results, in the user's language; a request naming no cells, by a
        # question; a request naming tubes in several boxes stages them all
        check_reply=all_checks(asks_which_cells(path), check_ln2_reply, stages_every_place(path)),
        facts=ln2_facts(path),  # every name, number and date of a reply comes from the turn's results or words
        question_timeout=question_timeout,
        options={"inventory": str(path), "question_timeout": question_timeout},
    )
