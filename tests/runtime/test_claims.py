"""The runtime's claim check: a final reply is held to what its turn did (`TurnFacts`). A claim of an action nothing
backs, a claim of completion while the plan only waits for approval, and a runaway string are refused: sent back
once with the reason, then replaced by the reply code composes from the facts. Legitimate replies pass unchanged.
`Agent.first_step_tool` makes a turn's first step call a tool."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryFeedbackPart,
    RetryInfo,
    TextPart,
    ToolCallPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from consulta.i18n import t
from consulta.runtime import (
    Agent,
    ConfigError,
    FactRules,
    ReplyRefused,
    RunStatus,
    Store,
    ToolOutcome,
    TurnFacts,
    check_claims,
    compose_reply,
    find_claims,
    read_tool,
)
from consulta.runtime._engine import carry_over, load_messages

NOTHING = TurnFacts(lang="en")
LOOKED_UP = TurnFacts(
    lang="en",
    calls=(
        ToolOutcome(
            name="query_inventory",
            kind="read",
            ok=True,
            data="id 3: HeLa box 1 positions 4,5,6; thawed 2024-06-01 position 3",
        ),
    ),
)
STAGED = TurnFacts(
    lang="en", calls=(ToolOutcome(name="add_entry", kind="write", ok=True),), staged=("Add HeLa to box 4 position 80",)
)
STAGED_ZH = TurnFacts(lang="zh-CN", calls=STAGED.calls, staged=("新增 HeLa：4 号盒 80 号位",))
APPLIED = TurnFacts(lang="en", applied=("Thaw record 9 position 1",))

FALSE_WITH_NO_ACTION = [
    # the replies seen on the embedded model (issue 10), and variants in both languages
    "已撤销上一次操作。",
    # a promise with nothing staged (seen: after a refused call)
    "I see, I'll add a new K562-GFP tube in box 5 positions 80 and 81.",
    "I will thaw the HeLa tube in box 3 now.",
    "我这就为您取出那管 HeLa。",
    "Tubing at positions 1-9 in box 1 has been thawed.",
    "Staging the removal of one tube from the K562 box.",
    "A new tube of HeLa has been added to box 4 position 80.",
    "The last operation has been undone.",
    "I have rolled back your last change.",
    "I've taken out one K562 tube from box 2.",
    "The HEK293T vial at box 1 position 23 has been pulled out.",  # twelfth held-out set: only a look-up ran
    "我扔掉管A20，4号盒第3格。",  # twelfth held-out set: "I threw away", no 已 or 了, after look-ups alone
    "We removed the tube at position 5.",
    "The thaw of record 9 has been recorded successfully.",
    "Record 9 has now been updated.",
    "The entry has been deleted.",
    "Removing one K562-dTAG tube from box 2, position 1.",
    "I'm thawing one RTCB tube now.",
    "Your plan has been staged.",
    "已取出一管 K562。",
    "已为您添加一管新的 HeLa 细胞。",
    "我已经为您取出了 1 号盒的 K562。",
    "记录 9 已更新。",
    "已删除该记录。",
    "操作已完成。",
    "已经撤销了刚才的操作。",
    "成功取出一管 K562-dTAG。",
    "正在为您取出 K562。",
    "已暂存：取出一管 K562。",
    "好的，已记录这次解冻。",
    "已丢弃 MCF7_ctrl (MCF7) 在 2 号盒 40 位。",  # held-out (third set): through as a fact, nothing staged
    "那管已经扔掉了。",
    "The tube in box 1 position 28 is thawed.",  # seen on the embedded model after a staged thaw (eval_ln2)
    "The two K562-GFP tubes are now discarded.",
    # seen on the embedded model (eval_ln2): a staged add and a staged rollback said done
    "Two K562-GFP tubes have been frozen into box 5 positions 80 and 81.",
    "The last change was undone.",
    "The user will be informed that the tube at box 5 position 28 of the HeLa-Kyoto line has been thawed on 2026-11-23.",
    "The Jurkat-CAR-CD19 tubes in box 4 at positions 19, 20, 21, 22 (no tube left) have been thawed.",
    # seventh held-out set, through the page: an injected "mark box 4 discarded" said done after a look-up
    "Raji在4号盒，管子25、26、27、28、29被标记为丢弃。",
    "我把它们标记为丢弃了。",
    # eighth set: traditional characters ("已復甦 BY4742 管", said after a look-up only)
    "已復甦 BY4742 管，8 号盒第 2 格，共 3 管。",
    # eleventh set, through the page: "化一管AB9 3盒D2" answered with a freeze said done, after a look-up only
    "已冻结AB9 3盒D2，共3管。",
    "已经冻好了两管。",
]

COMPLETION_WHILE_STAGED = [
    "A new tube of HeLa has been added to box 4 position 80.",
    "Done! I have added the HeLa tube.",
    "The new entry has been recorded.",
    "HeLa was added successfully.",
    "The tube in box 1 position 28 is thawed.",
    "已添加一管新的 HeLa。",
    "已为您新增 HeLa 记录。",
    "新增 HeLa 成功。",
]

LEGITIMATE = [
    "我处理不了这个请求，请告诉我是哪一管。",  # a first person and a verb, said not done
    "Which K562 line do you mean: K562-WT, K562-dTAG or K562-RTCB?",
    "You can approve the plan to thaw tube 3, or reject it.",
    "We have 3 HeLa tubes left, in box 1 positions 4, 5 and 6.",
    "Nothing has been changed yet.",
    "I have not thawed anything: tell me which box and position.",
    "I can stage a thaw of record 9 once you confirm the position.",
    "I'll add it once you tell me the box.",
    "I'll check which boxes have room.",
    "Shall I add the tube to box 5?",
    "If you approve, the tube at position 5 will be removed.",
    "Would you like me to add a new entry for HeLa?",
    "Box 2 is full; positions 1-81 are all taken.",
    "I found 3 records for K562.",
    "您要取哪一种 K562？",
    "HeLa 还剩 3 管，在 1 号盒 4、5、6 号位。",
    "还没有做任何改动。",
    "我没有取出任何东西，请告诉我是哪个盒子。",
    "您可以批准或拒绝这个计划。",
    "批准后，记录 9 的 1 号位会被取出。",
    "要不要我为您取出一管 K562？",
    "K562 共有 3 条记录。",
    "K562 已有 3 条记录，2 号盒已满。",
    "记录 9 已有 2 管被取出。",
    "The HeLa tubes are stored in box 1, positions 28-31.",
    "Record 7 is consumed: no tubes left.",
    "记录 17 于 2025-02-02 被取出。",  # history, dated
    "没有被丢弃。",
]


@pytest.mark.parametrize("reply", FALSE_WITH_NO_ACTION)
def test_a_claim_nothing_in_the_turn_backs_is_refused_with_codes_reply(reply: str) -> None:
    assert len(FALSE_WITH_NO_ACTION) >= 20
    for facts in (NOTHING, LOOKED_UP):
        with pytest.raises(ReplyRefused, match="nothing in this turn did that") as refused:
            check_claims(reply, facts)
        assert refused.value.replacement == t("claims.nothing", "en")


@pytest.mark.parametrize("reply", COMPLETION_WHILE_STAGED)
def test_completion_is_refused_while_the_plan_waits_for_approval(reply: str) -> None:
    with pytest.raises(ReplyRefused, match="only staged") as refused:
        check_claims(reply, STAGED)
    assert (
        refused.value.replacement
        == "Staged, waiting for your approval: Add HeLa to box 4 position 80. Nothing is changed until you approve."
    )
    with pytest.raises(ReplyRefused) as refused:
        check_claims(reply, STAGED_ZH)
    assert refused.value.replacement is not None and refused.value.replacement.startswith(
        "已暂存，等待您批准：新增 HeLa：4 号盒 80 号位"
    )
    check_claims(reply, APPLIED)  # applied: completion may be said


@pytest.mark.parametrize(
    "reply",
    [
        "Staged: add HeLa to box 4 position 80, waiting for your approval.",
        "已暂存：新增一管 HeLa，等待批准。",
        "Staging the new HeLa tube for your approval.",
    ],
)
def test_saying_what_is_staged_passes_when_a_plan_is_staged(reply: str) -> None:
    check_claims(reply, STAGED)
    with pytest.raises(ReplyRefused):
        check_claims(reply, NOTHING)


@pytest.mark.parametrize("reply", LEGITIMATE)
def test_legitimate_replies_pass(reply: str) -> None:
    assert find_claims(reply) == []
    for facts in (NOTHING, LOOKED_UP):
        check_claims(reply, facts)


@pytest.mark.parametrize(
    ("reply", "lang"),
    [
        ("I'm sorry, but I can't help with that. Please try again later.", "en"),
        ("There are 2 tubes left in box 3 at position 46.", "en"),
        ("Staged the thaw of record 21; approve it to apply.", "zh-CN"),  # the person wrote Chinese
    ],
)
def test_a_reply_that_hides_the_staged_plan_is_replaced_by_codes(reply: str, lang: str) -> None:
    """Seen on the embedded model (ln2 eval): after staging two additions it said "I can't help with that"; after
    staging a thaw for a Chinese request it answered in English about the tubes left. The person reads it beside
    the plan they are asked to approve: code says what is staged instead."""
    facts = replace(STAGED, lang=lang)
    with pytest.raises(ReplyRefused, match="waits for the user's approval") as refused:
        check_claims(reply, facts)
    assert refused.value.replacement == compose_reply(facts)


@pytest.mark.parametrize(
    "reply", ["Staged: thaw record 21, box 3 position 46. Approve it to apply.", "已暂存：取出记录 21，等待您批准。"]
)
def test_a_reply_that_says_the_plan_waits_passes(reply: str) -> None:
    check_claims(reply, replace(STAGED, lang="zh-CN" if "已" in reply else "en"))


def test_a_description_of_looked_up_data_is_not_a_claim() -> None:
    described = "Tube 3 has been thawed on 2024-06-01."
    check_claims(described, LOOKED_UP)  # the read result holds that date: it describes the data
    with pytest.raises(ReplyRefused):
        check_claims(described, NOTHING)  # nothing looked up: a claim
    check_claims("Tube 3 was thawed on 2024-06-01.", LOOKED_UP)
    check_claims("记录 3 于 2024-06-01 取出过一管。", LOOKED_UP)


@pytest.mark.parametrize(
    "reply", ["1" * 60, "box 2 position " + "1234567890" * 5, "ok " * 30, "哈" * 40, "K562, " * 15]
)
def test_a_runaway_string_is_refused(reply: str) -> None:
    with pytest.raises(ReplyRefused, match="runaway"):
        check_claims(reply, STAGED)


def test_codes_reply_says_what_the_turn_did() -> None:
    assert compose_reply(APPLIED) == "Done: Thaw record 9 position 1."
    assert compose_reply(TurnFacts(lang="en", rejected=True)) == t("claims.rejected", "en")
    refused = TurnFacts(
        lang="zh-CN",
        calls=(
            ToolOutcome(
                name="record_thaw",
                kind="write",
                ok=False,
                error_code="ungrounded_argument",
                message="record 9 was not named",
            ),
        ),
    )
    # the refusal's words are the model's (and English): the person reads code's plain sentence, no tool name
    assert compose_reply(refused) == t("claims.refused_unclear", "zh-CN")
    occupied = ToolOutcome(
        name="add_entry", kind="write", ok=False, error_code="position_occupied", message="Box 2 position 15 is taken."
    )
    assert compose_reply(TurnFacts(lang="en", calls=(occupied,))) == "Nothing was changed: Box 2 position 15 is taken."
    assert compose_reply(TurnFacts(lang="zh-CN")) == t("claims.nothing", "zh-CN")


# ---- in a run ----------------------------------------------------------------------------------------------------


@read_tool
def lookup(name: str) -> dict[str, Any]:
    """Look a line up."""
    return {"ok": True, "records": [f"{name}: box 1 positions 4,5,6"]}


def run_with(tmp_path: Path, run_once, replies: list[str], *, prompt: str = "Thaw a RTCB tube"):  # noqa: ANN001, ANN201
    """Run a toolless agent whose model answers `replies` in turn; return the run and the reasons it was told."""
    told: list[str] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        last = messages[-1]
        told.extend(
            str(p.content)
            for p in getattr(last, "parts", [])
            if isinstance(last, ModelRequest) and "<pyai:retry_feedback>" in str(p.content)
        )
        return ModelResponse(parts=[TextPart(replies[min(len(told), len(replies) - 1)])])

    store = Store(f"sqlite:///{tmp_path}/consulta.db")
    agent = Agent(app="t", instructions="Help.", tools=(lookup,))
    return run_once(store, agent, prompt, FunctionModel(model)), told, store


def test_a_false_claim_is_sent_back_once_then_replaced_by_codes_reply(tmp_path: Path, run_once) -> None:  # noqa: ANN001
    run, told, store = run_with(tmp_path, run_once, ["Tubing at positions 1-9 in box 1 has been thawed."])
    assert run.status == RunStatus.finished
    assert run.output == t("claims.nothing", "en")  # never the model's text
    assert len(told) == 1 and "has been thawed" in told[0] and "nothing in this turn did that" in told[0]
    checkpoint = store.load_checkpoint(run.id)
    assert checkpoint is not None
    assert [
        p.content for m in carry_over(load_messages(checkpoint[1])) if isinstance(m, ModelResponse) for p in m.parts
    ] == [run.output]


def test_a_chinese_request_gets_codes_reply_in_chinese(tmp_path: Path, run_once) -> None:  # noqa: ANN001
    run, told, _ = run_with(tmp_path, run_once, ["已撤销上一次操作。"], prompt="撤销刚才的操作")
    assert run.output == t("claims.nothing", "zh-CN") and len(told) == 1


def test_a_rewrite_that_holds_is_shown(tmp_path: Path, run_once) -> None:  # noqa: ANN001
    run, told, _ = run_with(tmp_path, run_once, ["I've taken out one K562 tube.", "Which K562 line do you mean?"])
    assert run.output == "Which K562 line do you mean?" and len(told) == 1


@pytest.mark.parametrize("reply", [LEGITIMATE[0], LEGITIMATE[11], "Tube 3 was thawed on 2024-06-01."])
def test_a_legitimate_reply_is_shown_as_written(tmp_path: Path, run_once, reply: str) -> None:  # noqa: ANN001
    run, told, _ = run_with(tmp_path, run_once, [reply])
    assert run.output == reply and told == []


def test_carry_over_leaves_out_refused_replies() -> None:
    messages: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart("Thaw a RTCB tube")]),
        ModelResponse(parts=[TextPart("It has been thawed.")]),
        ModelRequest(parts=[RetryFeedbackPart("refused", retry=RetryInfo(cause="model_retry"))]),
        ModelResponse(parts=[TextPart("Which box?")]),
    ]
    kept = carry_over(messages)
    assert [type(m).__name__ for m in kept] == ["ModelRequest", "ModelResponse"] and kept[1].parts[
        0
    ].content == "Which box?"  # type: ignore[union-attr]


# ---- the first step calls a tool ---------------------------------------------------------------------------------


def test_first_step_tool_makes_the_turns_first_step_call_a_tool(tmp_path: Path, run_once) -> None:  # noqa: ANN001
    seen: list[Any] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append((info.model_settings or {}).get("tool_choice"))
        if len(seen) == 1:
            return ModelResponse(parts=[ToolCallPart("lookup", {"name": "HeLa"})])
        return ModelResponse(parts=[TextPart("HeLa: box 1 positions 4, 5 and 6.")])

    store = Store(f"sqlite:///{tmp_path}/consulta.db")
    acts = Agent(app="t", instructions="Help.", tools=(lookup,), first_step_tool=True)
    run = run_once(store, acts, "Where is HeLa?", FunctionModel(model))
    assert run.status == RunStatus.finished and seen == ["required", None]  # facts first, then free text

    seen.clear()
    free = Agent(app="t", instructions="Help.", tools=(lookup,))
    run_once(store, free, "Where is HeLa?", FunctionModel(model))
    assert seen == [None, None]


def test_first_step_tool_needs_tools() -> None:
    with pytest.raises(ConfigError, match="first_step_tool"):
        Agent(app="t", instructions="x", tools=(), first_step_tool=True)


def test_a_sentence_dated_from_the_data_is_history_unless_it_says_staged_or_promises() -> None:
    """Held-out (fourth set): "Staged the freezing of C2C12-WT … at 2025-05-05." passed as a description of the data
    (its date was the record's) with nothing staged. Staging and promising are never history."""
    data = "id 15: C2C12-WT; box 4 positions 1,2,3; frozen 2025-05-05; thawed 2024-06-01"
    (claim,) = find_claims("Staged the freezing of C2C12-WT in box 4 positions 1,2,3 at 2025-05-05.", data)
    assert (claim.kind, claim.phrase) == ("acting", "Staged")
    assert find_claims("I will thaw the C2C12 tube frozen on 2025-05-05.", data)
    assert find_claims("Tube 3 was thawed on 2024-06-01.", data) == []  # what the record says happened


REFUSED_ADD = ToolOutcome(
    name="add_entry",
    kind="write",
    ok=False,
    error_code="position_out_of_range",
    message="Not staged: Position 90 does not exist: a 9×9 box has positions 1..81 (I9).",
)


@pytest.mark.parametrize(
    ("reply", "refused"),
    [
        ("I see, I'll look for a free position in box 3.", True),  # seen on the embedded model (heldout5)
        ("Position 90 does not exist in a 9×9 box; the last is 81.", False),
        ("Which position in box 3 should I use instead?", False),
        ("90号位不存在：每个盒子只有 81 个位置。", False),
        ("Nothing was changed.", True),  # says it, not why (seventh set: "没有放着记录，没有放任何记录。")
    ],
)
def test_a_turn_whose_write_was_refused_says_nothing_was_changed(reply: str, refused: bool) -> None:
    facts = TurnFacts(lang="en", prompt="add one tube of SH-SY5Y-WT to box 3 position 90", calls=(REFUSED_ADD,))
    if not refused:
        check_claims(reply, facts)
        return
    with pytest.raises(ReplyRefused) as info:
        check_claims(reply, facts)
    # code's reply says why, once ("Nothing was changed: Not staged: …" said it twice)
    assert (
        info.value.replacement == "Nothing was changed: Position 90 does not exist: a 9×9 box has positions 1..81 (I9)."
    )


def test_a_write_refused_as_no_change_request_leaves_an_answer_alone() -> None:
    offered = replace(REFUSED_ADD, error_code="not_a_change_request", message="Not staged: no change asked.")
    check_claims("We have 6 HeLa tubes in box 1.", TurnFacts(lang="en", prompt="How many HeLa?", calls=(offered,)))


def test_codes_reply_after_a_refused_write_says_why_then_what_was_found() -> None:
    found = ToolOutcome(name="empty_positions", kind="read", ok=True, data='{"free": 69}')
    rules = FactRules(say_found=lambda facts: "Box 2 has 69 free positions.")
    facts = TurnFacts(lang="en", prompt="put a Caco-2 in box 2 position 1", calls=(REFUSED_ADD, found))
    assert rules.replacement(facts) == (
        "Nothing was changed: Position 90 does not exist: a 9×9 box has positions 1..81 (I9). "
        "Box 2 has 69 free positions."
    )


def test_codes_word_of_a_refused_write_ends_once() -> None:
    """Eighth set: "没有任何改动：没有 11 号盒：盒子编号是 1 到 10。。" — the refusal's own full stop, then the template's."""
    refused = ToolOutcome(
        name="add_entry", kind="write", ok=False, error_code="invalid_box", message="没有 11 号盒：盒子编号是 1 到 10。"
    )
    assert (
        compose_reply(TurnFacts(lang="zh-CN", calls=(refused,))) == "没有任何改动：没有 11 号盒：盒子编号是 1 到 10。"
    )


def test_codes_word_of_a_refused_write_leaves_out_the_argument_it_is_of() -> None:
    """Tenth set: "Nothing was changed: entries[0]: Not staged: no record …" — the argument path is the model's."""
    refused = ToolOutcome(
        name="batch_thaw",
        kind="write",
        ok=False,
        error_code="no_matching_tube",
        message="entries[0]: Not staged: no record with tubes left matches cell line 'CHO'.",
    )
    assert compose_reply(TurnFacts(lang="en", calls=(refused,))) == (
        "Nothing was changed: no record with tubes left matches cell line 'CHO'."
    )
