"""The runtime's fact check and its guard against words meant for the model (issue 26), on a test double model.

A reply stating a number, id, date or domain name no source of the turn holds is written again with the reason, and
refused again is replaced by code's statement of what the tools found; a reply repeating a tool's hint, an error
code or talking of "the user" never reaches the person; a turn whose writes keep being refused ends with a reply
within its step budget. Each refusal is a `reply_checked` event (what the evaluations count).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from consulta.runtime import (
    Agent,
    FactRules,
    RunStatus,
    Store,
    ToolError,
    ToolOutcome,
    TurnFacts,
    echoes,
    false_comparisons,
    model_words,
    read_tool,
    unfounded,
    unfounded_names,
    write_tool,
    wrong_language,
)

from ._support import FakeExecutor


def facts_of(data: str, *, prompt: str = "", **kw: Any) -> TurnFacts:
    call = ToolOutcome(name="count", kind="read", ok=True, data=data)
    return TurnFacts(lang="en", prompt=prompt, calls=(call,), **kw)


RULES = FactRules(names=lambda: ["HeLa", "HeLa-Kyoto", "K562"])


@pytest.mark.parametrize(
    ("reply", "missing"),
    [
        ("We have 11 HeLa tubes.", []),
        ("We have 30 HeLa tubes.", ["30"]),  # an invented count
        ("The tubes are in box 3, positions 46 and 47.", []),  # 47 lies in the range 46-48 the tool gave
        ("Box 3 position 49 holds one.", ["49"]),
        ("It was frozen on 2025-03-02.", []),
        ("It was frozen on 2025-03-09.", ["2025-03-09"]),
        ("记录 5 于 2025年3月2日 冻存。", []),
        ("There are K562 tubes too.", ["K562"]),  # a name of the domain no tool returned
        ("HeLa-Kyoto is in box 7.", ["HeLa-Kyoto", "7"]),
        ("Record a_000007 undid it.", ["a_000007"]),
        ("Thaw at 37 °C for 9 minutes.", ["37", "9"]),  # without the app's `ignore`, a measurement is a number
    ],
)
def test_unfounded_names_the_facts_no_source_holds(reply: str, missing: list[str]) -> None:
    data = '{"tubes": 11, "records": ["id 5: HeLa; box 3 positions 46-48; frozen 2025-03-02"]}'
    assert sorted(unfounded(reply, facts_of(data, prompt="Do we have HeLa?"), RULES)) == sorted(missing)


def test_unfounded_names_leaves_numbers_a_question_may_offer() -> None:
    data = '{"tubes": 11, "records": ["id 5: HeLa; box 3 positions 46-48; frozen 2025-03-02"]}'
    facts = facts_of(data, prompt="Thaw a HeLa")
    assert unfounded_names("HeLa, box 3 position 46 / 47 / 48; or 2 tubes?", facts, RULES) == []
    # a name of the domain may be offered before it was looked up; an identifier no source holds may not
    assert unfounded_names("HeLa-Kyoto or HeLa a_000009?", facts, RULES) == ["a_000009"]


def test_the_persons_words_and_declared_facts_are_sources() -> None:
    rules = FactRules(declared=lambda: ["5 boxes of 9x9"], ignore=re.compile(r"\d+\s*°C"))
    facts = facts_of("{}", prompt="What is in box 4 position 28?")
    assert unfounded("Box 4 position 28 is one of 81 in 9x9 boxes; store at -196 °C.", facts, rules) == ["81"]
    assert unfounded("Box 4 position 28 is one of 5 boxes.", facts, rules) == []


# ---- on a run ---------------------------------------------------------------------------------------------------


def scripted(replies: list[str], *, first: list[ToolCallPart] | None = None) -> tuple[FunctionModel, list[Any]]:
    """A test double: the first step makes `first` calls, then each step says the next reply; it records what each
    request told it back (the refusals' reasons) and which tools each step offered."""
    seen: list[Any] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append((info.model_settings or {}).get("tool_choice"))
        steps = sum(isinstance(m, ModelResponse) for m in messages)
        if first and steps == 0:
            return ModelResponse(parts=list(first))
        index = steps - (1 if first else 0)
        return ModelResponse(parts=[TextPart(replies[min(index, len(replies) - 1)])])

    return FunctionModel(model), seen


@read_tool
def count_tubes(name: str) -> dict[str, Any]:
    """Count a cell line's tubes."""
    return {"name": name, "tubes": 11, "boxes": [1, 3, 5]}


def found(facts: TurnFacts) -> str:
    return "Code: 11 tubes in boxes 1, 3 and 5."


def agent_with(*tools: Any, **kw: Any) -> Agent:
    return Agent(
        app="t",
        instructions="Answer about the tank. Never invent counts.",
        tools=tools,
        facts=FactRules(names=lambda: ["HeLa", "K562"], say_found=found),
        **kw,
    )


def checked(store: Store, run_id: str) -> list[tuple[str, bool]]:
    return [(e.data["check"], e.data["replaced"]) for e in store.list_events(run_id) if e.type == "reply_checked"]


@pytest.mark.parametrize(
    ("reply", "wrong"),
    [
        (
            "Your file has 569 rows, which is less than the required 100 rows.",
            ["569 rows, which is less than the required 100"],
        ),
        ("只有569行，少于要求的100行。", ["569行，少于要求的100"]),
        ("The mean is 12.5, greater than 13.", ["12.5, greater than 13"]),
        ("Your file has 40 rows, which is less than the required 100.", []),
        ("你的文件有 40 行，不足 100 行。", []),
        ("3 boxes have more than 10 free positions.", []),  # said of other things, not of the number
        ("Box 3 has 2 tubes, more than box 10.", []),  # a label, not a quantity
        ("只有 20 行，这个任务至少需要 100 行。", []),
    ],
)
def test_false_comparisons_finds_two_numbers_compared_wrongly(reply: str, wrong: list[str]) -> None:
    assert false_comparisons(reply) == wrong


def test_a_false_comparison_is_rewritten(tmp_path: Path, run_once) -> None:  # noqa: ANN001
    store = Store(f"sqlite:///{tmp_path}/c.db")
    model, _ = scripted(
        ["We have 11 HeLa tubes, fewer than 5.", "We have 11 HeLa tubes, in boxes 1, 3 and 5."],
        first=[ToolCallPart("count_tubes", {"name": "HeLa"})],
    )
    run = run_once(store, agent_with(count_tubes), "Do we have any HeLa cells left?", model)
    assert run.output == "We have 11 HeLa tubes, in boxes 1, 3 and 5."
    assert checked(store, run.id) == [("facts", False)]


def test_an_invented_count_is_rewritten_then_replaced(tmp_path: Path, run_once) -> None:  # noqa: ANN001
    store = Store(f"sqlite:///{tmp_path}/c.db")
    model, _ = scripted(
        ["The tank has 30 HeLa tubes in box 1.", "There are 7 boxes with 30 tubes each."],
        first=[ToolCallPart("count_tubes", {"name": "HeLa"})],
    )
    run = run_once(store, agent_with(count_tubes), "Do we have any HeLa cells left?", model)
    assert run.status == RunStatus.finished and run.output == "Code: 11 tubes in boxes 1, 3 and 5."
    assert checked(store, run.id) == [("facts", False), ("facts", True)]
    shown = [e.data["text"] for e in store.list_events(run.id) if e.type == "model_text"]
    assert shown == [run.output]  # the invented counts never reached a front end


def test_a_rewrite_stating_what_the_tool_found_passes(tmp_path: Path, run_once) -> None:  # noqa: ANN001
    store = Store(f"sqlite:///{tmp_path}/c.db")
    model, _ = scripted(
        ["We have 30 HeLa tubes.", "We have 11 HeLa tubes, in boxes 1, 3 and 5."],
        first=[ToolCallPart("count_tubes", {"name": "HeLa"})],
    )
    run = run_once(store, agent_with(count_tubes), "Do we have any HeLa cells left?", model)
    assert run.output == "We have 11 HeLa tubes, in boxes 1, 3 and 5."
    assert checked(store, run.id) == [("facts", False)]


@read_tool
def find_tube(box: int, position: int) -> dict[str, Any]:
    """Find the tube at a box and position."""
    raise ToolError(
        "ambiguous_tube",
        "Not staged: several records fit.",
        hint="Pass box and positions as the user said them, or ask the user with ONE question listing the matches as options.",
    )


@pytest.mark.parametrize(
    "leak",
    [
        "Please provide the box and positions as the user said them, or ask the user with ONE question listing the matches as options.",
        "The call failed with ambiguous_tube.",
        "I will call find_tube again.",
        "Please tell me the box; I must ask the user first.",
    ],
)
def test_words_meant_for_the_model_never_reach_the_person(tmp_path: Path, run_once, leak: str) -> None:  # noqa: ANN001
    store = Store(f"sqlite:///{tmp_path}/c.db")
    model, _ = scripted([leak, leak], first=[ToolCallPart("find_tube", {"box": 1, "position": 1})])
    run = run_once(store, agent_with(find_tube), "What is in box 1 position 1?", model)
    assert run.status == RunStatus.finished and run.output == "Code: 11 tubes in boxes 1, 3 and 5."
    assert checked(store, run.id) == [("model_words", False), ("model_words", True)]
    assert all(e.data["text"] != leak for e in store.list_events(run.id) if e.type == "model_text")


@pytest.mark.parametrize(
    ("replies", "output", "checks"),
    [
        (["", ""], "Code: 11 tubes in boxes 1, 3 and 5.", [("empty", False), ("empty", True)]),
        (["", "We have 11 HeLa tubes."], "We have 11 HeLa tubes.", [("empty", False)]),
    ],
)
def test_an_empty_response_is_asked_again_once_then_code_says_what_was_found(
    tmp_path: Path,
    run_once,  # noqa: ANN001
    replies: list[str],
    output: str,
    checks: list[tuple[str, bool]],
) -> None:
    """A model (or its server) may answer with no text and no call: pydantic-ai alone asks again for as long as the
    run's retries last (seen: 15 requests to a server whose every answer was empty)."""
    store = Store(f"sqlite:///{tmp_path}/c.db")
    model, _ = scripted(replies, first=[ToolCallPart("count_tubes", {"name": "HeLa"})])
    agent = agent_with(count_tubes, asks_for_change=lambda words: False)  # a look-up: code says what was found
    run = run_once(store, agent, "Do we have any HeLa cells left?", model)
    assert run.status == RunStatus.finished and run.output == output
    assert checked(store, run.id) == checks


def test_model_words_finds_the_instructions_repeated() -> None:
    facts = TurnFacts(lang="en", model_meant=("Keep replies short and always in the user's own language please.",))
    assert model_words("I keep replies short and always in the user's own language please.", facts) is not None
    assert model_words("Box 1 holds 11 HeLa tubes.", facts) is None


@write_tool
def take_out(box: int, position: int) -> dict[str, Any]:
    """Stage taking a tube out."""
    return {"op": "take_out", "box": box, "position": position}


def test_a_write_turn_whose_writes_are_refused_ends_with_a_reply(tmp_path: Path, run_once) -> None:  # noqa: ANN001
    """The HEK293T case: the model keeps calling a write the grounding refuses; after two refusals its next step
    may only reply, and the turn ends with that reply, well within its step budget."""
    store = Store(f"sqlite:///{tmp_path}/c.db")
    executor = FakeExecutor(grounding_error=ToolError("ungrounded_argument", "Not staged: box 1 was not said."))
    offered: list[Any] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        choice = (info.model_settings or {}).get("tool_choice")
        offered.append(choice)
        if choice == "none":
            return ModelResponse(parts=[TextPart("Which box are positions 22 and 23 in?")])
        n = sum(isinstance(m, ModelResponse) for m in messages)
        return ModelResponse(parts=[ToolCallPart("take_out", {"box": n + 1, "position": 22})])

    agent = Agent(app="t", instructions="Stage take-outs.", tools=(take_out,), executor=executor, max_steps=25)
    run = run_once(store, agent, "Take out the vials at positions 22 and 23.", FunctionModel(model))
    assert run.status == RunStatus.finished and run.output == "Which box are positions 22 and 23 in?"
    assert offered[-1] == "none" and len(offered) == 3  # two refused writes, then the reply


def test_a_turn_whose_questions_are_refused_ends_with_a_reply(tmp_path: Path, run_once) -> None:  # noqa: ANN001
    """Seen on the embedded model (heldout5, "在6号盒第3位放两管 B16"): 22 English questions to a person writing
    Chinese, each refused, for 169 s. After two refused questions the next step may only reply."""
    from consulta.asks import question_tool

    store = Store(f"sqlite:///{tmp_path}/c.db")
    english = {"questions": [{"header": "Box", "question": "Which box?", "options": ["1", "2"], "multiple": False}]}
    offered: list[Any] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        choice = (info.model_settings or {}).get("tool_choice")
        offered.append(choice)
        if choice == "none":
            return ModelResponse(parts=[TextPart("没有 6 号盒：罐里只有 1–5 号盒。")])
        return ModelResponse(parts=[ToolCallPart("question", english)])

    agent = agent_with(take_out, question_tool(), executor=FakeExecutor())
    run = run_once(store, agent, "在6号盒第3位放两管 B16", FunctionModel(model))
    assert run.status == RunStatus.finished and store.list_asks(status=None, run_id=run.id) == []
    assert offered[:3] == [None, None, "none"] and set(offered[2:]) == {"none"}  # then only replies (and rewrites)


def test_a_request_for_a_change_answered_without_trying_it_is_tried_or_asked(tmp_path: Path, run_once) -> None:  # noqa: ANN001
    """Seen on the embedded model (heldout6, "给我取一管HCT116", two lines fit): it looked up and listed the lines,
    no write and no question. Such a reply goes back once, and the next step may only write or ask; a request for
    information answered in text is not touched."""
    from consulta.asks import question_tool

    store = Store(f"sqlite:///{tmp_path}/c.db")
    offered: list[Any] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        choice = (info.model_settings or {}).get("tool_choice")
        offered.append(choice)
        if isinstance(choice, list) and "question" in choice:
            return ModelResponse(parts=[ToolCallPart("take_out", {"box": 1, "position": 4})])
        return ModelResponse(parts=[TextPart("HCT116 is held in the tank.")])

    agent = agent_with(
        count_tubes,
        take_out,
        question_tool(),
        executor=FakeExecutor(),
        asks_for_change=lambda w: "取" in w or "take" in w,
    )
    run = run_once(store, agent, "给我取一管HCT116", FunctionModel(model))
    assert offered[1] == ["take_out", "question"] and checked(store, run.id)[0] == ("change_not_tried", False)
    assert run.status == RunStatus.waiting and len(store.list_plans(run_id=run.id)) == 1  # staged, for approval

    offered.clear()
    run = run_once(store, agent, "Is there any HCT116 left?", FunctionModel(model))
    assert run.output == "HCT116 is held in the tank." and checked(store, run.id) == []


@pytest.mark.parametrize(
    ("prompt", "asked", "said"),
    [
        ("What is in the tank?", "Answer about the tank. Never invent counts?", "meant for you"),
        # eleventh set, through the page: the person's own request asked back of them, after a look-up that answered it
        (
            "What did we put into the dewar last month?",
            "What did we put into the dewar last month?",
            "the user's own request back",
        ),
    ],
)
def test_a_question_repeating_words_meant_for_the_model_is_not_asked(
    tmp_path: Path,
    run_once,  # noqa: ANN001
    prompt: str,
    asked: str,
    said: str,
) -> None:
    """Seen on the embedded model (heldout7, through the page): "What was found or done?" — a refusal's reason — was
    asked of the person. A question holding words meant for the model, or only the person's own words, goes back to
    it; no question is opened."""
    from consulta.asks import question_tool

    store = Store(f"sqlite:///{tmp_path}/c.db")
    parroted = {"questions": [{"header": "Tank", "question": asked, "options": []}]}
    results: list[str] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        last = messages[-1]
        if isinstance(last, ModelRequest):
            results.extend(str(getattr(p, "content", "")) for p in last.parts if getattr(p, "tool_name", None))
        if sum(isinstance(m, ModelResponse) for m in messages) == 0:
            return ModelResponse(parts=[ToolCallPart("question", parroted)])
        return ModelResponse(parts=[TextPart("Which box do you mean?")])

    run = run_once(store, agent_with(question_tool()), prompt, FunctionModel(model))
    assert run.status == RunStatus.finished and run.output == "Which box do you mean?"
    assert store.list_asks(status=None, run_id=run.id) == []
    assert "invalid_question_format" in results[0] and said in results[0]


def test_a_question_offering_names_no_tool_returned_is_not_asked(tmp_path: Path, run_once) -> None:  # noqa: ANN001
    """Seen on the embedded model (heldout16): "What is the tube in box 4?" with options NA1000 … NA1009, where the
    look-up had found NA1000 alone. A question naming what no source holds goes back to the model; none is opened."""
    from consulta.asks import question_tool

    store = Store(f"sqlite:///{tmp_path}/c.db")
    invented = {"questions": [{"header": "Line", "question": "Which one?", "options": ["HeLa", "K562", "HEK293T"]}]}
    # (K562 is a name of the domain: offered before it was looked up, it passes; HEK293T is in no source)
    results: list[str] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        last = messages[-1]
        if isinstance(last, ModelRequest):
            results.extend(str(getattr(p, "content", "")) for p in last.parts if getattr(p, "tool_name", None))
        steps = sum(isinstance(m, ModelResponse) for m in messages)
        if steps == 0:
            return ModelResponse(parts=[ToolCallPart("count_tubes", {"name": "HeLa"})])
        if steps == 1:
            return ModelResponse(parts=[ToolCallPart("question", invented)])
        return ModelResponse(parts=[TextPart("There are 11 HeLa tubes.")])

    run = run_once(store, agent_with(count_tubes, question_tool()), "Which cells do we have?", FunctionModel(model))
    assert run.status == RunStatus.finished and run.output == "There are 11 HeLa tubes."
    assert store.list_asks(status=None, run_id=run.id) == []
    assert "invalid_question_format" in results[1] and "names HEK293T," in results[1]


def test_a_question_saying_a_refusals_reason_back_is_not_asked(tmp_path: Path, run_once) -> None:  # noqa: ANN001
    """Seen on the embedded model (heldout8, after a reply refused for words meant for it): "What was found or
    done?" — five words of the refusal's reason, too short for the check of repeated runs — as the question."""
    from consulta.asks import question_tool

    store = Store(f"sqlite:///{tmp_path}/c.db")
    asked = {"questions": [{"header": "What was found or done?", "question": "What was found or done?", "options": []}]}

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        steps = sum(isinstance(m, ModelResponse) for m in messages)
        if steps == 0:
            return ModelResponse(parts=[TextPart("The user asked about the tank; the tool results show it.")])
        if steps == 1:
            return ModelResponse(parts=[ToolCallPart("question", asked)])
        return ModelResponse(parts=[TextPart("Which box do you mean?")])

    run = run_once(store, agent_with(question_tool()), "What is in the tank?", FunctionModel(model))
    assert store.list_asks(status=None, run_id=run.id) == []
    assert run.status == RunStatus.finished


def test_a_claim_on_a_request_for_information_is_replaced_by_what_the_tools_found(tmp_path: Path, run_once) -> None:  # noqa: ANN001
    """Seen on the embedded model (heldout8: "what have we frozen down so far this month"): a reply read as a claim
    was replaced by "Nothing was changed in this turn …". On a turn that asks for no change, code says what the tools
    found."""
    store = Store(f"sqlite:///{tmp_path}/c.db")
    model, _ = scripted(
        ["We have thawed 11 HeLa tubes.", "We have thawed 11 HeLa tubes."],
        first=[ToolCallPart("count_tubes", {"name": "HeLa"})],
    )
    agent = agent_with(count_tubes, take_out, executor=FakeExecutor(), asks_for_change=lambda w: "take" in w)
    run = run_once(store, agent, "How many HeLa have we got?", model)
    assert run.output == "Code: 11 tubes in boxes 1, 3 and 5." and ("claims", True) in checked(store, run.id)


def test_the_last_step_of_the_budget_is_a_reply_and_a_refused_one_is_replaced(tmp_path: Path, run_once) -> None:  # noqa: ANN001
    store = Store(f"sqlite:///{tmp_path}/c.db")
    model, offered = scripted(["We have 99 tubes."], first=[ToolCallPart("count_tubes", {"name": "HeLa"})])
    agent = agent_with(count_tubes, take_out, executor=FakeExecutor(), max_steps=2)
    run = run_once(store, agent, "How many HeLa?", model)
    assert run.status == RunStatus.finished and run.output == "Code: 11 tubes in boxes 1, 3 and 5."
    assert offered[-1] == "none" and checked(store, run.id) == [("facts", True)]


def test_an_agent_without_rules_is_not_fact_checked(tmp_path: Path, run_once) -> None:  # noqa: ANN001
    store = Store(f"sqlite:///{tmp_path}/c.db")
    model, _ = scripted(["Pandas 2.2 has 3 ways to read a CSV."])
    run = run_once(store, Agent(app="t", instructions="Tutor.", tools=()), "How do I read a CSV?", model)
    assert run.output == "Pandas 2.2 has 3 ways to read a CSV." and checked(store, run.id) == []


def test_a_refusal_the_model_reads_is_told_once_per_try(tmp_path: Path, run_once) -> None:  # noqa: ANN001
    store = Store(f"sqlite:///{tmp_path}/c.db")
    reasons: list[str] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        last = messages[-1]
        if isinstance(last, ModelRequest):
            reasons.extend(str(p.content) for p in last.parts if "no tool result" in str(getattr(p, "content", "")))
        steps = sum(isinstance(m, ModelResponse) for m in messages)
        if steps == 0:
            return ModelResponse(parts=[ToolCallPart("count_tubes", {"name": "HeLa"})])
        return ModelResponse(parts=[TextPart("12 tubes." if steps == 1 else "11 tubes.")])

    run = run_once(store, agent_with(count_tubes), "How many HeLa?", FunctionModel(model))
    assert run.output == "11 tubes." and len(reasons) == 1 and "12" in reasons[0]


def test_a_writing_agent_looping_on_look_ups_replies_after_four_calls(tmp_path: Path, run_once) -> None:  # noqa: ANN001
    """The HeLa case: query, free positions, query, free positions … — the fifth step may only reply."""
    store = Store(f"sqlite:///{tmp_path}/c.db")
    offered: list[Any] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        choice = (info.model_settings or {}).get("tool_choice")
        offered.append(choice)
        if choice == "none":
            return ModelResponse(parts=[TextPart("We have 11 tubes.")])
        n = sum(isinstance(m, ModelResponse) for m in messages)
        return ModelResponse(parts=[ToolCallPart("count_tubes", {"name": f"HeLa{n}"})])

    agent = agent_with(count_tubes, take_out, executor=FakeExecutor())
    run = run_once(store, agent, "Do we have any HeLa cells left?", FunctionModel(model))
    assert run.status == RunStatus.finished and run.output == "We have 11 tubes."
    assert len(offered) == 5 and offered[-1] == "none"


def test_an_apps_structured_reply_may_name_the_tools_it_calls() -> None:
    """Seed 003's reply is JSON naming the site's tools: its protocol, not words to the person; its spoken words are
    still held to the rule."""
    from consulta.runtime._facts import model_words

    facts = TurnFacts(lang="zh-CN", tool_names=("update_ranking", "recommend_advisors"))
    reply = (
        '{"voice_response": "已为您找到北京大学计算机的导师", "tool_calls": [{"tool": "update_ranking", "params": {}}]}'
    )
    assert model_words(reply, facts) is None
    assert model_words('{"voice_response": "I called update_ranking", "tool_calls": []}', facts) == "update_ranking"


def test_a_tools_name_said_as_words_as_the_source_of_an_answer_is_words_meant_for_the_model() -> None:
    """Seen in the terminal (issue 22): "The query inventory result shows that …". Its words in a reply of their own
    ("57 empty positions") are the person's words, not a tool's name."""
    facts = TurnFacts(lang="en", tool_names=("query_inventory", "empty_positions"))
    said = "The query inventory result shows that box 1 holds 11 HeLa tubes."
    assert model_words(said, facts) == "query inventory result"
    assert model_words("There are 57 empty positions in box 4.", facts) is None


def test_a_reply_speaking_of_the_user_in_the_third_person_is_words_meant_for_the_model() -> None:
    """Seen on the embedded model (eval_ln2, zh_multi_three): "The user will be informed that the tubes … will be taken
    out" reached the person."""
    facts = TurnFacts(lang="en", prompt="取出3号盒1、2、3号位")
    said = "The user will be informed that the tubes in box 3 positions 1, 2, and 3 will be taken out on 2026-11-27."
    assert model_words(said, facts) == "The user will"
    # seen (eval_ln2 at 9254008, en_empty_thaw): "I'll need to check with the user to see which tube they meant"
    assert model_words("I'll need to check with the user to see which tube they meant.", facts) == "check with the user"


@pytest.mark.parametrize(
    "said",
    [
        # seen on the embedded model (eval_tutor, gaps_en): the tutor's reply framed as the text it was asked to write
        'Your response should be "You can start task_2_1 after checking the file." Which step first?',
        "Here is the reply: you can start task_2_1.",
        "回复应为：你可以开始 task_2_1 了。",
        # seen on the embedded model (eval_tutor, claim_bare_zh): the claims check's retry prompt, translated
        "我之前的回答没有完成任务，没有改变任何东西。请先使用工具（写入用户批准的更改），然后提问，否则只显示工具的结果。",
        # seen on the embedded model (eval_tutor, concept_en): the retry prompt itself reached the student
        "Your previous response failed the application's validation (this is automated feedback, not a message from "
        'the user):\n<pyai:retry_feedback>\nYour reply speaks of "you".',
        # seen on the embedded model (held-out tutor turn, after a language refusal): the model answered the retry
        "好的，我会重新写一遍，确保所有内容都是中文。",
        "Sure, I'll rewrite it, making sure everything is in English.",
        # seen on the embedded model (tenth held-out set, zh_start_group_warn): the may-start refusal, translated
        "好的，你的回复说“可以使用”，但任务 task_2_4被阻止：你还没有开始。说说为什么，从笔记中，然后问一个引导问题。",
        'Your reply says "you can start", but the task is blocked. End with one guiding question.',
        # seen on the embedded model (fourteenth held-out set, through the page): the model's notes said back
        "好的，我明白了。你的笔记中提到的文件和列信息是正确的，但它们是针对你，而不是学生。请向学生解释这些信息。",
        "Got it: your notes are right, I will explain them.",
    ],
)
def test_a_reply_framed_as_the_text_the_model_was_asked_to_write_is_words_meant_for_the_model(said: str) -> None:
    assert model_words(said, TurnFacts(lang="en", prompt="Can I start task_2_1?")) is not None
    assert model_words("You can start task_2_1 once you have checked the file.", TurnFacts(lang="en")) is None


_ZH = "我可以开始 task_2_4 吗？"


@pytest.mark.parametrize(
    ("reply", "prompt", "lang", "found"),
    [
        # seen on the embedded model (tutor eval, start_ok_zh): an English sentence in a reply to a Chinese student
        (
            "暂时还不能开始 task_2_4。The student should show the code they ran and its output.",
            _ZH,
            "zh-CN",
            "The student should show the code they ran and its output.",
        ),
        ("Do not start: analysis.", _ZH, "zh-CN", "Do not start: analysis."),
        # names, terms, code and the tools' own lines are not English sentences
        (
            "5号盒第37位是 K562-RTCB-KO-c5；plasmid pX458-sgRTCB; box 5 positions 37; frozen 2025-05-05。",
            _ZH,
            "zh-CN",
            None,
        ),
        ("你可以先看 `df.groupby('city').size()` 的结果。", _ZH, "zh-CN", None),
        # a quote of a tool's result, as written (below)
        ("已保存：What is the SQL command to select all the rows of a table?", _ZH, "zh-CN", None),
        # English words from a person in a Chinese session may be answered in English
        ("You can start task_2_4 when you are ready.", "Can I start task_2_4?", "zh-CN", None),
        # Chinese to a person who writes English is not checked (test doubles answer either language)
        ("You can start. 你现在可以开始了", "Can I start?", "en", None),
    ],
)
def test_wrong_language_finds_a_sentence_not_in_the_persons_language(
    reply: str, prompt: str, lang: str, found: str | None
) -> None:
    data = "Saved: What is the SQL command to select all the rows of a table? Note: 细胞状态良好"
    facts = TurnFacts(lang=lang, prompt=prompt, calls=(ToolOutcome(name="save", kind="read", ok=True, data=data),))
    assert wrong_language(reply, facts) == found


@pytest.mark.parametrize(
    ("reply", "words", "echo"),
    [
        ("还有 Hela 吗？", "hela还有吗", True),
        # seen on the embedded model (eval_tutor, key_error_zh): the student's question said back, one word added
        (
            "在做 task_2_2 时，我写了 df['年龄'].mean()，报错 KeyError: '年龄'，这是为什么？",
            "做 task_2_2 时我写了 df['年龄'].mean()，报错 KeyError: '年龄'，这是为什么？",
            True,
        ),
        (
            "KeyError: '年龄' 说明数据里没有 年龄 这一列。你先看看 df.columns？",
            "报错 KeyError: '年龄'，这是为什么？",
            False,
        ),
        ("Box 1 holds 11 HeLa tubes.", "Do we have any HeLa cells left?", False),
        ("What is in box 4 position 28: WTC11.", "What is in box 4 position 28?", False),  # restated, then answered
        ("Jurkat 一共有 17 管。", "Jurkat 一共有几管？", False),
    ],
)
def test_echoes_finds_the_persons_words_said_back(reply: str, words: str, echo: bool) -> None:
    assert echoes(reply, words) is echo
