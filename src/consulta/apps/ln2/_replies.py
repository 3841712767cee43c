"""ln2's own check of a final reply: a look-up turn is answered from its results, in the user's language, with the
counts code made.

The runtime's claim check (every agent) keeps a reply from saying something was done that was not. This check adds
what an inventory user needs on a turn that only looked things up: a reply that gives up ("I'm sorry, I can't assist
with that"), repeats the request back, answers a Chinese request in English, or answers "how many" with none of the
counts the tools made is written again with the reason, and if the rewrite fails too,
code says what the first look-up of the turn returned (its records, free positions, counts or audit entries).
"""

from __future__ import annotations

import json
import re
from typing import Any

from ...i18n import t
from ...runtime import ReplyRefused, ToolOutcome, TurnFacts

__all__ = ["answer_from_results", "check_ln2_reply", "summarize"]

_HELPLESS = re.compile(
    r"\b(?:sorry|apologi[sz]e|can(?:no|')t\s+(?:assist|help)|unable\s+to\s+(?:assist|help)|try\s+again\s+later|"
    r"I\s+don'?t\s+know)\b|抱歉|对不起|无法(?:协助|帮助|继续|完成|提供)|请稍后",
    re.IGNORECASE,
)
_CJK = re.compile(r"[\u4e00-\u9fff]")
_HOW_MANY = re.compile(r"\bhow\s+many\b|\bcount\b|\bnumber\s+of\b|多少|几管|几支|几个|几只|数量", re.IGNORECASE)


def _result(call: ToolOutcome) -> dict[str, Any] | None:
    """A successful read call's result as a dict (None for anything else)."""
    if not (call.kind == "read" and call.ok and call.data):
        return None
    try:
        data = json.loads(call.data)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def counted(facts: TurnFacts) -> set[int]:
    """The counts code made in the turn's look-ups (tubes listed, free positions of one box): what a reply to "how
    many" must say one of."""
    numbers: set[int] = set()
    for data in filter(None, map(_result, facts.calls)):
        if isinstance(data.get("tubes"), int):
            numbers.add(data["tubes"])
        boxes = data.get("boxes")
        if (
            isinstance(boxes, list)
            and len(boxes) == 1
            and isinstance(boxes[0], dict)
            and isinstance(boxes[0].get("free"), int)
        ):
            numbers.add(boxes[0]["free"])
        if isinstance(data.get("occupied"), int):
            numbers.add(data["occupied"])
    return numbers


def summarize(call: ToolOutcome, lang: str) -> str | None:
    """What one read call returned, said by code in `lang` (None for a result it does not know the shape of)."""
    data = _result(call)
    if data is None:
        return None
    sep = "；" if lang == "zh-CN" else "; "
    if isinstance(data.get("records"), list):
        lines = [str(r) for r in data["records"]]
        if not lines:
            return str(data.get("note") or t("ln2.reply.none", lang))
        total = data.get("total", len(lines))
        tubes = data.get("tubes", None)
        key = "ln2.reply.records" if tubes is not None else "ln2.reply.records_only"
        return t(key, lang, total=total, tubes=tubes, records=sep.join(lines))
    if isinstance(data.get("entries"), list):
        entries = [f"{e.get('audit_id')}: {e.get('summary')}" for e in data["entries"] if isinstance(e, dict)]
        return t("ln2.reply.audit", lang, entries=sep.join(entries[-5:])) if entries else t("ln2.reply.no_audit", lang)
    boxes = data.get("boxes")
    if isinstance(boxes, list) and boxes and isinstance(boxes[0], dict):
        if "positions" in boxes[0]:
            parts = [
                t("ln2.reply.free", lang, box=b.get("box"), free=b.get("free"), positions=b.get("positions"))
                for b in boxes
            ]
        else:
            parts = [
                t("ln2.reply.box", lang, box=b.get("box"), occupied=b.get("occupied"), free=b.get("free"))
                for b in boxes
            ]
        return sep.join(parts) + ("。" if lang == "zh-CN" else ".")
    return None


def answer_from_results(facts: TurnFacts) -> str | None:
    """The turn's first successful look-up, said by code; None when the turn looked nothing up."""
    return next((summary for call in facts.calls if (summary := summarize(call, facts.lang))), None)


def _words(text: str) -> str:
    return re.sub(r"[\W_]+", "", text.casefold())


def check_ln2_reply(text: str, facts: TurnFacts) -> None:
    """Refuse a reply that gives up, repeats the user's words back, or is not in the user's language, on a turn that
    looked something up and changed nothing (its replacement: the look-up's result, said by code)."""
    if facts.staged or facts.applied or facts.questions:
        return
    helpless = _HELPLESS.search(text)
    echo = facts.prompt is not None and bool(_words(text)) and _words(text) in _words(facts.prompt)
    wrong_language = facts.lang == "zh-CN" and not _CJK.search(text)
    counts = counted(facts) if facts.prompt and _HOW_MANY.search(facts.prompt) else set()
    said = {int(n) for n in re.findall(r"\d+", text)}
    miscounted = bool(counts) and not (counts & said)
    if not (helpless or echo or wrong_language or miscounted):
        return
    answer = answer_from_results(facts)
    if answer is None:
        return
    if helpless:
        reason = f'Your reply says "{helpless.group(0)}", but the tool results above answer the request.'
    elif echo:
        reason = "Your reply repeats the user's words; answer them."
    elif miscounted:
        reason = f"The user asked how many; the tool results counted {sorted(counts)}: say that number, do not count yourself."
    else:
        reason = "The user writes Chinese: reply in Chinese."
    raise ReplyRefused(
        f"{reason} Say what the results show, in one or two short sentences, in the user's language.",
        replacement=answer,
    )
