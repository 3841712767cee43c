"""Mode 1's drafts between the model and validation: what code can fix, code fixes (`tidy`); what code can see is
wrong, code names as one precise reason (`first_problem`, `reason_of`), which goes back to the model with the draft
(`rewrite_prompt`) so that its rewrite fixes that.

`tidy` changes only the form, never what an item asks or which option is right: whitespace; option labels the model
wrote into the options ("A. …"); a key given as the option's letter or with other spacing or case, as the option's
text; the key missing from three options, added as the fourth; a true/false key in any of its spellings; options in
order (numbers ascending, else the key at a position drawn from the stem, so keys spread over A-D whatever the model's
habit); a true/false statement the model wrote as a yes/no question whose answer is the key ("Is it true that X?",
"X, right?", "X吗？", "A是否是B？"), as the statement; short-answer keywords trimmed and unique (kept even when the question
says them: "What was the capital of Ancient Rome?" is answered by a word of its stem; the rule `keywords_in_stem`
refuses a key whose words the stem says, all of them).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ...i18n import language_name, t
from ._item_rules import FALSE_WORDS, TRUE_WORDS, Item, check_item, has_cjk, rule_score

__all__ = ["Problem", "first_problem", "key_of", "reason_of", "rewrite_prompt", "tidy"]

_LABEL = re.compile(r"^\s*(?:[(（]\s*([A-Ea-e])\s*[)）]|([A-Ea-e])\s*[.)．、:：）])\s*")
_LETTER_KEY = re.compile(
    r"^\s*(?:(?:option|choice|answer|选项|答案)\s*[:：]?\s*)?"
    r"(?:[(（]\s*([A-Ea-e])\s*[)）]|([A-Ea-e])(?=\s*$|\s*[)）.．、:：]|\s+\S))\s*[)）.．、:：]?\s*(.*)$",
    re.IGNORECASE,
)
_NUMBER = re.compile(r"^[-+−]?\d+(?:[.,]\d+)?\s*%?$")
_REFERS_BY_LETTER = re.compile(r"\b[A-E]\s*(?:and|or|&|和|与|或)\s*[A-E]\b")
_EDGE_PUNCT = " .。,，;；:：!！?？'\"“”‘’`"
_TRUE = TRUE_WORDS | {"correct", "right", "√", "✓", "真的", "对的"}
_FALSE = FALSE_WORDS | {"incorrect", "wrong", "×", "✗", "假的", "不对", "不正确"}


def _space(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def _norm(text: str) -> str:
    return _space(text).strip(_EDGE_PUNCT).casefold()


def _unlabelled(choices: list[str]) -> list[str]:
    """The options without the letters the model wrote before them, when every option has its letter in order."""
    letters = []
    for choice in choices:
        match = _LABEL.match(choice)
        if match is None:
            return choices
        letters.append((match.group(1) or match.group(2)).upper())
    if letters != [chr(ord("A") + i) for i in range(len(choices))]:
        return choices
    stripped = [_LABEL.sub("", c, count=1).strip() for c in choices]
    return stripped if all(stripped) else choices


def key_of(key: str, choices: Sequence[str]) -> str | None:
    """The option `key` names: the option itself (spacing, case and edge punctuation aside), its letter ("B", "(B)",
    "Option B", "B. text"), or the one option containing it or contained in it; None when it names none or several."""
    wanted = _norm(key)
    if not wanted:
        return None
    normed = [_norm(c) for c in choices]
    if wanted in normed:
        return choices[normed.index(wanted)]
    letter = _LETTER_KEY.match(key.strip())
    if letter is not None:
        index = ord((letter.group(1) or letter.group(2)).upper()) - ord("A")
        rest = _norm(letter.group(3))
        if index < len(choices) and (not rest or rest == normed[index]):
            return choices[index]
        if rest in normed:
            return choices[normed.index(rest)]
    shortest = 2 if has_cjk(wanted) else 3
    if len(wanted) < shortest:
        return None
    holding = [c for c, n in zip(choices, normed, strict=True) if wanted in n or (len(n) >= shortest and n in wanted)]
    return holding[0] if len(holding) == 1 else None


def _true_false(key: str) -> str | None:
    folded = _norm(key)
    return "True" if folded in _TRUE else "False" if folded in _FALSE else None


def _spot(stem: str, n: int) -> int:
    """Where the key goes among `n` options: drawn from the stem (the same item always gets the same order)."""
    return int(hashlib.sha256(stem.encode("utf-8")).hexdigest()[:8], 16) % n


def _ordered(choices: list[str], key: str, stem: str) -> list[str]:
    """Numbers ascending; else the distractors in the model's order with the key at `_spot` (options that name
    others by letter keep their order)."""
    values = [c.replace("−", "-").replace(",", ".").rstrip("%").strip() for c in choices]
    if all(_NUMBER.match(c) for c in choices):
        return [c for _, c in sorted(zip((float(v) for v in values), choices, strict=True), key=lambda p: p[0])]
    if any(_REFERS_BY_LETTER.search(c) for c in choices):
        return choices
    others = [c for c in choices if c != key]
    others.insert(_spot(stem, len(choices)), key)
    return others


_CLAIM_ASKED_EN = re.compile(
    r"^\s*(?:(?:is\s+it|it\s+is)\s+true\s+(?:or\s+false\s+)?that|(?:is\s+it\s+)?true\s+or\s+false\s*(?:that|[:：,，?？-])"
    r"|is\s+the\s+following\s+(?:statement\s+)?true\s*[:：?？])\s*(.+?)\s*[?？.]?\s*$",
    re.IGNORECASE | re.DOTALL,
)
_TAG_EN = re.compile(
    r"^(.+?)\s*,\s*(?:right|true|correct|isn'?t\s+it|is\s+that\s+(?:right|true|correct)|true\s+or\s+false)\s*[?？]\s*$",
    re.IGNORECASE | re.DOTALL,
)
_TAG_ZH = re.compile(r"^(.+?)[，,]\s*(?:对吗|是吗|对不对|是不是|正确吗|对么)\s*[?？]?\s*$", re.DOTALL)
_MA_ZH = re.compile(r"^(.+?)[吗么]\s*[?？]?\s*$", re.DOTALL)
_ASKS_WHICH_ZH = re.compile(r"什么|哪|谁|怎么|怎样|如何|为什么|为何|多少|几[个种次]")
_WHETHER_ZH = re.compile(r"是否|是不是")


def _as_statement(stem: str) -> str:
    """A true/false stem written as a yes/no question whose answer is the claim's truth, as that claim; any other
    stem as it is. Only the wrapping goes: "Is it true that X?" and "X, right?" become "X."; "X吗？", "X，对吗？" and
    "A是否(是)B？" become "X。" and "A是B。" (no question word: "哪个…吗" asks which, and stays)."""
    for pattern in (_CLAIM_ASKED_EN, _TAG_EN):
        match = pattern.match(stem)
        if match is not None:
            claim = match.group(1).strip().rstrip(",，")
            return claim[:1].upper() + claim[1:] + ("" if claim.endswith(".") else ".")
    if not has_cjk(stem) or _ASKS_WHICH_ZH.search(stem):
        return stem
    match = _TAG_ZH.match(stem) or _MA_ZH.match(stem)
    if match is not None and not _WHETHER_ZH.search(match.group(1)):
        return match.group(1).strip().rstrip("，,") + "。"
    if re.search(r"[?？]\s*$", stem) and len(_WHETHER_ZH.findall(stem)) == 1:
        said = _WHETHER_ZH.sub(lambda m: "是" if m.group(0) == "是不是" else "", stem, count=1)
        return re.sub(r"\s*[?？]\s*$", "。", said.replace("是是", "是"))
    return stem


def tidy(draft: dict[str, Any]) -> dict[str, Any]:
    """The draft (a `Draft`'s fields) with what code can fix fixed (see the module's docstring); nothing else."""
    out = dict(draft)
    out["stem"] = _space(str(draft.get("stem") or ""))
    out["explanation"] = _space(str(draft.get("explanation") or ""))
    kind = draft.get("item_type")
    key = _space(str(draft.get("correct_key") or ""))
    choices = [_space(c) for c in draft.get("choices") or [] if _space(c)]
    if kind == "multiple_choice":
        choices = _unlabelled(choices)
        if {_norm(c) for c in choices} in ({"true", "false"}, {"正确", "错误"}, {"对", "错"}):
            kind, choices = "true_false", []  # two options, true and false: a true/false item
        else:
            named = key_of(key, choices) if key else None
            letter = _LETTER_KEY.match(key)
            if named is None and key and len(choices) == 3 and (letter is None or letter.group(3)):
                choices, named = [*choices, key], key  # three distractors and the key written apart
            if named is not None:
                key = named
                if len({_norm(c) for c in choices}) == len(choices):
                    choices = _ordered(choices, key, out["stem"])
            out["choices"] = choices
    if kind == "true_false":
        key = _true_false(key) or key
        out["stem"] = _as_statement(out["stem"])
        out["choices"] = None
    if kind == "short_answer":
        words = [_space(w) for w in draft.get("correct_keywords") or []]
        if not any(words) and key and len(key) <= 40:
            words = [key]
        out["correct_keywords"] = list({w.casefold(): w for w in words if w}.values()) or None
        out["choices"] = None
        key = ""
    out["item_type"] = kind
    out["correct_key"] = key or None
    return out


@dataclass(frozen=True)
class Problem:
    """Why a draft cannot be saved: its code (as the rejected list names it) and one sentence the model acts on."""

    code: str
    reason: str
    issues: tuple[str, ...] = ()
    """The lines the rejected list shows a person (in the request's language); empty: the code says it."""


def _in_language(draft: dict[str, Any], lang: str) -> bool:
    """Whether the stem is written in `lang`: Chinese characters for zh-CN; for English, mostly Latin words."""
    stem = draft["stem"]
    if lang == "zh-CN":
        return has_cjk(stem)
    cjk = len(re.findall(r"[\u3400-\u9fff]", stem))
    return cjk <= len(re.findall(r"[A-Za-z]+", stem)) // 2


WRITING_FORBIDS = frozenset({"all_none_of_the_above"})
"""Item-writing flaws the writer's instructions forbid (no "all of the above"): in Mode 1 a draft with one goes back
to the model like a structural fault (tool 4 alone would take 0.16 off and save it: seen saved at 0.84, keyed "All
of the above")."""

_ASKS = re.compile(r"[?？]\s*$|吗\s*[。.]?\s*$")


def asks_instead_of_stating(draft: dict[str, Any]) -> bool:
    """Whether a true/false draft asks a question ("Which stage designs the test cases?", "哪个阶段…？") where it
    should state a claim that is true or false: its stem ends with a question mark, or with 吗."""
    return draft.get("item_type") == "true_false" and _ASKS.search(_plain_quotes(draft["stem"])) is not None


def _plain_quotes(text: str) -> str:
    return text.strip().strip("\"'“”‘’「」")


def key_in_stem(draft: dict[str, Any]) -> str | None:
    """The key of a multiple-choice draft when its stem says it word for word and says no other option: the question
    gives its answer away ('天文学中，"恒星"是什么类型的天体？' keyed 恒星). None otherwise."""
    if draft.get("item_type") != "multiple_choice":
        return None
    stem = _norm(draft["stem"])
    key = draft.get("correct_key") or ""
    others = [c for c in draft.get("choices") or [] if c != key]

    def says(option: str) -> bool:
        text = _norm(option)
        if has_cjk(text):
            return len(text) >= 2 and text in stem
        return bool(text) and re.search(rf"(?<!\w){re.escape(text)}(?!\w)", stem) is not None

    return key if len(_norm(key)) >= 2 and says(key) and not any(says(c) for c in others) else None


def first_problem(
    draft: dict[str, Any], *, lang: str, topic: str, copied: bool, on_topic: bool, repeats: str | None = None
) -> Problem | None:
    """The first thing code sees wrong with a tidied draft, before any model judges it: a copy of an existing
    question (`repeats`: the question written for this request that it repeats), the wrong language, another topic, a
    true/false item that asks instead of stating, a multiple-choice key the stem says, then a structural rule (one that
    alone rejects the item)."""
    if repeats is not None:
        return Problem(
            "copies_existing_question",
            f'This question repeats one already written for this request ("{repeats}"). Write a different question '
            f"about {topic}, on another aspect of it.",
        )
    if copied:
        return Problem(
            "copies_existing_question",
            f"This question copies an existing one. Write a new question of your own about {topic}.",
        )
    if not _in_language(draft, lang):
        return Problem(
            "wrong_language", f"The question is not in {language_name(lang)}. Write it in {language_name(lang)}."
        )
    if not on_topic:
        return Problem("off_topic", f"The question is not about {topic}. Ask about {topic} itself.")
    if asks_instead_of_stating(draft):
        return Problem(
            "true_false_asks",
            "A true/false item states one claim that is either true or false; this one asks a question. Write it as "
            "a statement (no question mark) and set correct_key to True or False.",
        )
    given = key_in_stem(draft)
    if given is not None:
        return Problem(
            "key_in_stem",
            f'The question says its own answer ("{given}"). Ask it without naming the answer, or choose another '
            "question.",
        )
    failures = check_item(item_of(draft))
    forbidden = [f for f in failures if f.rule in WRITING_FORBIDS]
    if rule_score(failures) < 0.70 or forbidden:
        failed = failures[0] if rule_score(failures) < 0.70 else forbidden[0]
        return Problem(
            failed.rule,
            t(f"quiz.judge.rule.{failed.rule}", "en", **failed.values),
            tuple(t(f"quiz.judge.rule.{f.rule}", lang, **f.values) for f in failures),
        )
    return None


def item_of(draft: dict[str, Any]) -> Item:
    """The draft as tool 4 sees it."""
    kind = draft["item_type"]
    answer = ", ".join(draft.get("correct_keywords") or []) if kind == "short_answer" else draft.get("correct_key")
    return Item(
        stem=draft["stem"],
        question_type=kind,
        choices=tuple(draft["choices"]) if kind == "multiple_choice" and draft.get("choices") else None,
        correct_answer=answer or None,
    )


def reason_of(verdict: Any) -> str:
    """One precise reason from tool 4's result for the model: the key the blind check disputes, a failed rule, the
    model's own first reason, else the scores."""
    if not isinstance(verdict, dict):
        return "The question could not be checked; write it more simply."
    blind = verdict.get("blind_check") or {}
    if blind and not blind.get("agrees"):
        return (
            f'Answering without the key, a reader picks "{blind.get("answer")}", not the key. Make exactly one option '
            "right, and make it the key."
        )
    failed = verdict.get("failed_rules") or []
    issues = verdict.get("issues") or []
    if failed and issues:
        return str(issues[0])
    reasons = [str(r) for r in verdict.get("reasons") or [] if str(r).strip()]
    if reasons:
        return reasons[0]
    return "A reviewer found the question unclear or unfair. Ask one clear question with one right answer."


_KINDS = {
    "multiple_choice": "multiple-choice question (4 options, one right; correct_key copies the right option)",
    "true_false": "true/false statement, not a question (correct_key True or False)",
    "short_answer": "short-answer question (explanation: the right answer; correct_keywords: 1-3 words of it, not only "
    "words the question says)",
}


def rewrite_prompt(
    draft: dict[str, Any],
    problem: str,
    *,
    topic: str,
    lang: str,
    difficulty: int,
    category: str,
    show_draft: bool = True,
) -> str:
    """The prompt asking the model to write a rejected draft again: the task, the draft, the one reason. Without
    `show_draft` (a draft that copies a shipped item: shown it again, a small model writes the copy again — seen at
    c4a49ed, 10 copies refused in 4 requests on the bank's topics), the task and the reason only."""
    shown = {k: v for k, v in draft.items() if v not in (None, "", [])}
    lines = [
        f"Task: one {_KINDS.get(draft.get('item_type') or '', 'question')} about {topic}, in "
        f"{language_name(lang)}, difficulty {difficulty}/10 ({category}).",
        f"Draft: {json.dumps(shown, ensure_ascii=False)}" if show_draft else "",
        f"Problem: {problem}",
        "Write the question again with this problem fixed." if show_draft else "Write a new question for the task.",
    ]
    return "\n".join(line for line in lines if line)
