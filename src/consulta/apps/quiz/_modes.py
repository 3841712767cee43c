"""The seed's two pipelines, done in code around the model's one structured part.

Mode 1 (generate): the request is read in code from the person's words (`read_request`: category, difficulty, how
many, interests, user, language; what the words leave out comes from the profile), tools 1-3 are called, the model
writes the items as one structured call (`Draft`s), and code validates each (tool 4) and saves those whose final
score is at least 0.70 (tool 5), returning the saved items. Mode 2 (score): each (question, answer) pair is scored
and explained (tool 6) with the question's own key from the bank, and kept as a response.

Every tool call made here inside a runtime tool call is recorded as a call of the run (`CallRecorder`), so a run's
record shows tools 4, 5 and 6 as they ran.
"""

from __future__ import annotations

import functools
import re
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal, NotRequired

from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy import select
from typing_extensions import TypedDict

from ...i18n import ZH_NUMERALS, chinese_number, t
from ...runtime import current_tool_call, reply_lang, tool_exception_result, utcnow
from ._bank import CATEGORIES, bank_items, content_hash
from ._db import questions, responses
from ._drafting import Problem, first_problem, reason_of, rewrite_prompt, tidy
from ._profiles import Profile, level_difficulty, load_profile
from ._short_answer import tokens
from ._tools import QuizTools

__all__ = [
    "MAX_REWRITES",
    "NOT_NEW",
    "PASS_SCORE",
    "AnswerArg",
    "AnswerIn",
    "CallRecorder",
    "Draft",
    "DraftArg",
    "GenerateRequest",
    "QuizRequest",
    "Rewriter",
    "ScoreRequest",
    "generate",
    "mentions",
    "model_rewriter",
    "read_request",
    "score_answers",
]

PASS_SCORE = 0.70
"""Tool 4's final score an item needs to be saved (the seed's reject threshold)."""
COPY_SIMILARITY = 0.6
"""A draft whose stem shares this share of its words (Jaccard, `_short_answer.tokens`) with a shipped item's is a
copy, not a new item."""
NOT_NEW = ("copies_existing_question", "off_topic", "wrong_language")
"""Why code rejects a draft as no new item for the request, before validation (named by these codes)."""
MAX_REWRITES = 2
"""Times a rejected draft goes back to the model with its one reason (each a model request of ~100 tokens)."""
MAX_ITEMS = 5
TOPIC_READING_S = 15.0
"""The bound of the model's one reading of whether a draft is about the topic (a forward pass: ~1 s on 2 cores)."""

_UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"


Stem = Annotated[str, Field(min_length=5, max_length=250)]
Option = Annotated[str, Field(min_length=1, max_length=120)]
Keyword = Annotated[str, Field(min_length=1, max_length=40)]
Explanation = Annotated[str, Field(max_length=300)]


class Draft(BaseModel):
    """One item as the model writes it (bounded: a small model's strings must not run away)."""

    model_config = ConfigDict(extra="forbid")

    item_type: Literal["multiple_choice", "true_false", "short_answer"]
    stem: Stem
    choices: Annotated[list[Option], Field(max_length=5)] | None = None
    correct_key: Annotated[str, Field(max_length=120)] | None = None
    correct_keywords: Annotated[list[Keyword], Field(max_length=4)] | None = None
    explanation: Explanation = ""


# The drafts as tool arguments, one shape per item type, so that the local model's grammar gives each type its own
# fields (4-5 options and then the key; a true/false key; 1-3 keywords). Plain dicts: a call's record holds JSON.


class ChoiceDraftArg(TypedDict):
    """A multiple-choice draft: the options, then the right one copied as the key."""

    item_type: Literal["multiple_choice"]
    stem: Stem
    choices: Annotated[list[Option], Field(min_length=4, max_length=5)]
    correct_key: Annotated[str, Field(min_length=1, max_length=120)]
    explanation: NotRequired[Explanation]


class TrueFalseDraftArg(TypedDict):
    """A true/false draft: a statement and whether it is true."""

    item_type: Literal["true_false"]
    stem: Stem
    correct_key: Literal["True", "False", "true", "false"]
    explanation: NotRequired[Explanation]


class ShortAnswerDraftArg(TypedDict):
    """A short-answer draft: a question, the right answer said (the explanation, written before the keywords so that
    the grammar has the model pick them from its answer, not from its question: keywords that only repeat the
    question were 4 of 26 drafts at 3cda9c4, bench/results/quiz_generate.fresh.a4c9427.json), and the words a right
    answer contains."""

    item_type: Literal["short_answer"]
    stem: Stem
    explanation: Annotated[str, Field(min_length=1, max_length=300)]
    correct_keywords: Annotated[list[Keyword], Field(min_length=1, max_length=3)]


DraftArg = Annotated[ChoiceDraftArg | TrueFalseDraftArg | ShortAnswerDraftArg, Field(discriminator="item_type")]
"""A `Draft` as a tool argument, its shape fixed by its item type."""


class _RewrittenChoice(BaseModel):
    question: ChoiceDraftArg


class _RewrittenTrueFalse(BaseModel):
    question: TrueFalseDraftArg


class _RewrittenShortAnswer(BaseModel):
    question: ShortAnswerDraftArg


REWRITTEN: dict[str, type[BaseModel]] = {
    "multiple_choice": _RewrittenChoice,
    "true_false": _RewrittenTrueFalse,
    "short_answer": _RewrittenShortAnswer,
}
"""A rewrite's typed answer by the draft's item type: the same shape as the tool argument (the grammar fixes it)."""


class AnswerArg(TypedDict):
    """An `AnswerIn` as a tool argument."""

    question_id: Annotated[str, Field(min_length=1, max_length=64)]
    user_answer: Annotated[str, Field(min_length=1, max_length=4000)]


class AnswerIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    question_id: Annotated[str, Field(min_length=1, max_length=64)]
    user_answer: Annotated[str, Field(min_length=1, max_length=4000)]


class GenerateRequest(BaseModel):
    kind: Literal["generate"] = "generate"
    user_id: str | None = None
    category: Literal["technical", "business", "general"]
    difficulty: int = Field(ge=1, le=10)
    count: int = Field(ge=1, le=MAX_ITEMS)
    interests: list[str] = Field(min_length=1, max_length=10)
    lang: Literal["en", "zh-CN"]


class ScoreRequest(BaseModel):
    kind: Literal["score"] = "score"
    user_id: str | None = None
    answers: list[AnswerIn] = Field(min_length=1)
    lang: Literal["en", "zh-CN"]


QuizRequest = Annotated[GenerateRequest | ScoreRequest, Field(discriminator="kind")]


# ---- reading the request ------------------------------------------------------------------------------------------

_CATEGORY_WORDS = {
    "technical": ("technical", "technology", "tech", "技术", "编程", "计算机"),
    "business": ("business", "management", "商业", "商务", "管理", "财务", "会计"),
    "general": ("general", "通用", "综合", "常识"),
}
_NUMBER_WORDS = {
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
}
_COUNT = re.compile(
    rf"(\d{{1,2}}|one|two|three|four|five|[{ZH_NUMERALS}]{{1,3}})\s*(?:new\s+)?(?:\w+\s+){{0,2}}?(?:questions?|items?|道|个|题)",
    re.IGNORECASE,
)
_LEVEL = re.compile(
    r"(?:level|difficulty|lvl|难度|等级|级别)\s*(?:of|is|=|:|：|为)?\s*(\d{1,2})|(\d{1,2})\s*级", re.IGNORECASE
)
_USER = re.compile(rf"(?:user(?:_id)?|用户|for)\s*(?:id)?\s*[:：=]?\s*({_UUID})", re.IGNORECASE)
_ABOUT = re.compile(
    r"(?:\babout|\bon|\bcovering|关于|有关|涉及)\s*(.+?)(?=\s+(?:at|for|with|in|of)\b|[,.;!?，。；！？、的]|\s+level\b|难度|$)",
    re.IGNORECASE,
)
_CJK = re.compile(r"[\u3400-\u9fff]")
_PAIR = re.compile(rf"({_UUID})\s*[:：=]\s*(.+?)(?=\s*(?:[;；\n]|{_UUID})|$)", re.DOTALL)
_SCORE_WORDS = re.compile(r"\b(?:score|grade|mark|check)\b|评分|打分|批改|评判|答案", re.IGNORECASE)


def _names(words: str, topic: str) -> bool:
    """Whether `words` name `topic`: as a whole word, or anywhere for a Chinese topic (no spaces between words)."""
    if _CJK.search(topic):
        return topic in words
    return re.search(rf"(?<!\w){re.escape(topic)}(?!\w)", words) is not None


def _topics() -> dict[str, tuple[str, str]]:
    """Every bank topic, casefolded → (the topic as written, its category)."""
    return {item.topic.casefold(): (item.topic, item.category) for item in bank_items()}


def read_request(
    words: str,
    lang: str,
    *,
    profile: Callable[[str], Profile | None],
    known_question: Callable[[str], bool],
    user_id: str | None = None,
) -> GenerateRequest | ScoreRequest:
    """What the person asks, read in code: answers to score (question ids with `: answer`), else items to generate.
    What the words leave out comes from the user's profile (difficulty from their level, interests), else defaults;
    `user_id` is the session's user when the words name none."""
    lang = reply_lang(words, lang)
    user = _USER.search(words)
    user_id = user.group(1).lower() if user else (user_id.lower() if user_id else None)
    pairs = [(q.lower(), a.strip().strip("\"'“”")) for q, a in _PAIR.findall(words) if q.lower() != user_id]
    answers = [AnswerIn(question_id=q, user_answer=a[:4000]) for q, a in pairs if a and known_question(q)]
    if answers and (_SCORE_WORDS.search(words) or len(answers) == len(pairs)):
        return ScoreRequest(user_id=user_id, answers=answers, lang=lang)
    found = profile(user_id) if user_id else None
    lowered = words.casefold()
    topics = _topics()
    named = [topic for topic in sorted(topics, key=len, reverse=True) if _names(lowered, topic)]
    interests = [topics[n][0] for n in named]
    about = _ABOUT.search(words)
    if about and about.group(1).strip() and about.group(1).strip().casefold() not in named:
        interests.append(about.group(1).strip()[:50])
    category = next(
        (
            c
            for c, ws in _CATEGORY_WORDS.items()
            if any(re.search(rf"(?<![a-z]){re.escape(w)}(?![a-z])", lowered) for w in ws)
        ),
        None,
    )
    if category is None:
        category = next((topics[n][1] for n in named), None)
    if not interests and found is not None and found.interests:
        interests = list(found.interests)
    if category is None:
        category = next((topics[i.casefold()][1] for i in interests if i.casefold() in topics), "general")
    if not interests:
        interests = [i.topic for i in bank_items() if i.category == category and i.lang == lang][:3]
    level = _LEVEL.search(words)
    if level:
        difficulty = min(10, max(1, int(level.group(1) or level.group(2))))
    else:
        difficulty = level_difficulty(found.self_level) if found is not None else 5
    count_match = _COUNT.search(words)
    count = 3
    if count_match:
        raw = count_match.group(1).lower()
        count = _NUMBER_WORDS.get(raw) or chinese_number(raw) or count
    return GenerateRequest(
        user_id=user_id,
        category=category,
        difficulty=difficulty,
        count=min(MAX_ITEMS, max(1, count)),
        interests=list(dict.fromkeys(i[:50] for i in interests))[:10],
        lang=lang,
    )


# ---- recording nested calls ---------------------------------------------------------------------------------------


@dataclass
class CallRecorder:
    """Records the tool calls a pipeline makes as calls of the run whose tool call it runs in (none outside a run)."""

    store: Any = None
    calls: int = 0

    async def __call__(self, name: str, args: dict[str, Any], work: Awaitable[Any]) -> Any:
        context = current_tool_call()
        self.calls += 1
        call_id = f"{context.tool_call_id}.{self.calls}" if context is not None else f"call_{uuid.uuid4().hex[:12]}"
        log = context.log if context is not None else None
        started_at, started = utcnow(), time.perf_counter()
        if log is not None:
            log.call_started(call_id, name, args)
        try:
            result = await work
        except (ValueError, TypeError) as error:  # the draft's own fault (naming its field), else the tool's
            field = getattr(error, "field", None)
            result = (
                {"ok": False, "error_code": "invalid_arguments", "message": str(error), "field": field}
                if field is not None
                else tool_exception_result(name, error)
            )
        if log is not None:
            log.call_returned(
                step=self._step(context.run_id),
                tool_call_id=call_id,
                tool_name=name,
                args=args,
                result=result,
                started_at=started_at,
                duration_ms=(time.perf_counter() - started) * 1000,
            )
        return result

    def _step(self, run_id: str) -> int:
        """The step of the model call this runs within: the one after the last step on record."""
        if self.store is None:
            return 0
        recorded = self.store.list_tool_calls(run_id)
        return (max(c.step for c in recorded) + 1) if recorded else 1


# ---- Mode 1 -------------------------------------------------------------------------------------------------------


Rewriter = Callable[[dict[str, Any], Problem], Awaitable[dict[str, Any]]]
"""Asks the model to write a rejected draft again given its one problem; the result is recorded as the call
`rewrite_question`: `{"ok": True, "draft": {...}}`, or `{"ok": False, ...}` when the model gave no draft (in time)."""


async def generate(
    drafts: Sequence[Draft],
    request: GenerateRequest,
    *,
    tools: QuizTools,
    round_id: str,
    record: CallRecorder,
    topic: str = "",
    rewrite: Rewriter | None = None,
) -> dict[str, Any]:
    """Tidy each draft in code (`_drafting.tidy`), refuse in code what code sees is wrong (a copy, another language,
    another topic, a structural rule), validate the rest (tool 4) and save the ones scoring at least 0.70 (tool 5).
    With `rewrite`, a rejected draft goes back to the model with its one reason, up to `MAX_REWRITES` times. Returns
    the saved items, the rejected ones with the reasons, how many rewrites were asked and drafts checked (the model's
    first ones and each changed rewrite), and a message for the person."""
    saved: list[dict[str, Any]] = []
    rejected: list[dict[str, Any]] = []
    queued = rewrites = checked = 0
    about = topic or request.interests[0]
    for draft in drafts[: request.count]:
        current = tidy(draft.model_dump())
        for attempt in range(MAX_REWRITES + 1):
            checked += 1
            outcome, problem = await _check_and_save(
                current,
                request,
                tools=tools,
                round_id=round_id,
                record=record,
                topic=topic,
                written=[item["stem"] for item in saved],
            )
            if problem is None:
                if outcome.get("success"):
                    saved.append(
                        {
                            **outcome,
                            "correct_keywords": current.get("correct_keywords"),
                            "explanation": current.get("explanation"),
                        }
                    )
                else:
                    queued += bool(outcome.get("queued_for_retry"))
                    rejected.append(outcome["rejected"])
                break
            if rewrite is None or attempt == MAX_REWRITES:
                rejected.append(outcome["rejected"])
                break
            rewrites += 1
            written = await record(
                "rewrite_question",
                {"draft": current, "problem": problem.code, "reason": problem.reason, "topic": about},
                rewrite(current, problem),
            )
            again = (
                tidy(written["draft"]) if isinstance(written, dict) and isinstance(written.get("draft"), dict) else None
            )
            if again is None or again == current:  # no draft, or the same one: asking again would not change it
                rejected.append(outcome["rejected"])
                break
            current = again
    return {
        "ok": True,
        "saved": len(saved),
        "items": saved,
        "rejected": rejected,
        "queued_for_retry": queued,
        "rewrites": rewrites,
        "drafts_checked": checked,
        "message": generation_message(saved, rejected, queued, request),
    }


def model_rewriter(judge: Any, request: GenerateRequest, topic: str) -> Rewriter:
    """A `Rewriter` asking `judge`'s model (`ModelJudge.rewrite_item`) for the draft again, typed as a `Draft`."""
    from ._judge import JudgeUnavailable

    async def rewrite(draft: dict[str, Any], problem: Problem) -> dict[str, Any]:
        prompt = rewrite_prompt(
            draft,
            problem.reason,
            topic=topic,
            lang=request.lang,
            difficulty=request.difficulty,
            category=request.category,
            show_draft=problem.code != "copies_existing_question",
        )
        try:
            written = await judge.rewrite_item(prompt=prompt, output_type=REWRITTEN[draft["item_type"]])
        except JudgeUnavailable as error:
            return {"ok": False, "error_code": "no_rewrite", "message": f"The model wrote no new draft: {error}"}
        return {"ok": True, "draft": Draft.model_validate(written.question).model_dump()}  # type: ignore[attr-defined]

    return rewrite


async def _check_and_save(
    draft: dict[str, Any],
    request: GenerateRequest,
    *,
    tools: QuizTools,
    round_id: str,
    record: CallRecorder,
    topic: str,
    written: Sequence[str] = (),
) -> tuple[dict[str, Any], Problem | None]:
    """One tidied draft through code's checks, tool 4 and tool 5: (tool 5's result, None) when it was saved or
    queued (then `rejected` says so for a queued one), else ({"rejected": entry}, the one problem to fix). `written`:
    the stems saved for this request so far (a draft repeating one is told which). The model reads whether the draft
    is on the topic only when code's checks before that one (copy, language) find nothing."""
    kind = draft["item_type"]
    answer = (
        ", ".join(draft.get("correct_keywords") or []) or None if kind == "short_answer" else draft.get("correct_key")
    )
    choices = draft.get("choices") if kind == "multiple_choice" else None
    repeated = next((stem for stem in written if _same_question(draft["stem"], stem)), None)
    copied = (
        repeated is not None
        or _exists(tools, kind, draft["stem"], choices, request.lang)
        or _near_copy(draft["stem"], request.lang)
    )
    about = topic or request.interests[0]
    problem = first_problem(draft, lang=request.lang, topic=about, copied=copied, on_topic=True, repeats=repeated)
    if problem is None or problem.code not in ("copies_existing_question", "wrong_language"):
        on_topic = _on_topic(draft, request.interests) or await _about_topic(tools, draft, about)
        problem = first_problem(draft, lang=request.lang, topic=about, copied=copied, on_topic=on_topic)
    if problem is not None:
        issues = list(problem.issues) or [problem.code]
        return {"rejected": {"stem": draft["stem"], "final_score": 0.0, "issues": issues}}, problem
    check_args = {"stem": draft["stem"], "question_type": kind, "choices": choices, "correct_answer": answer}
    verdict = await record(
        "validate_question_quality", check_args, tools.validate_question_quality(**check_args, lang=request.lang)
    )
    score = float(verdict.get("final_score", 0.0)) if isinstance(verdict, dict) else 0.0
    if not isinstance(verdict, dict) or verdict.get("ok") is False or score < PASS_SCORE:
        entry = {"stem": draft["stem"], "final_score": score, "issues": _reasons(verdict)}
        code = "validation_unavailable" if "validation_unavailable" in entry["issues"] else "failed_validation"
        return {"rejected": entry}, Problem(code, reason_of(verdict))
    save_args = {
        "item_type": kind,
        "stem": draft["stem"],
        "choices": choices,
        "correct_key": answer if kind != "short_answer" else None,
        "correct_keywords": draft.get("correct_keywords") if kind == "short_answer" else None,
        "difficulty": request.difficulty,
        "categories": [request.category],
        "round_id": round_id,
        "validation_score": round(score, 4),
        "explanation": draft.get("explanation") or None,
    }
    result = await record(
        "save_generated_question",
        {**save_args, "topic": topic, "lang": request.lang},
        tools.save_generated_question(**save_args, topic=topic, lang=request.lang),
    )
    if not result.get("success"):
        issue = "queued_for_retry" if result.get("queued_for_retry") else result.get("message", "not saved")
        result = {**result, "rejected": {"stem": draft["stem"], "final_score": score, "issues": [issue]}}
    return result, None


def _reasons(verdict: Any) -> list[str]:
    """Why tool 4 did not pass an item: its failed rules, the model's reasons, or that it could not judge."""
    if not isinstance(verdict, dict):
        return ["validation_unavailable"]
    reasons = [str(r) for r in [*(verdict.get("issues") or []), *(verdict.get("reasons") or [])] if str(r).strip()]
    if verdict.get("fallback") or verdict.get("_fallback"):
        reasons.append("validation_unavailable")
    if not reasons and verdict.get("message"):
        reasons.append(str(verdict["message"]))
    return reasons or ["final_score_below_0.70"]


@functools.cache
def _shipped_words(lang: str) -> tuple[frozenset[str], ...]:
    return tuple(frozenset(tokens(i.stem)) for i in bank_items() if i.lang == lang)


def _same_question(stem: str, other: str) -> bool:
    """Whether two stems ask the same (Jaccard of their words >= `COPY_SIMILARITY`, or the same text)."""
    mine, theirs = frozenset(tokens(stem)), frozenset(tokens(other))
    if not mine or not theirs:
        return stem.strip().casefold() == other.strip().casefold()
    return len(mine & theirs) / len(mine | theirs) >= COPY_SIMILARITY


def _near_copy(stem: str, lang: str) -> bool:
    """Whether `stem` is a shipped item's stem with a few words changed (Jaccard of their words >= 0.6)."""
    mine = frozenset(tokens(stem))
    return bool(mine) and any(
        len(mine & theirs) / len(mine | theirs) >= COPY_SIMILARITY for theirs in _shipped_words(lang) if theirs
    )


def _on_topic(draft: dict[str, Any], interests: Sequence[str]) -> bool:
    """Whether the draft says a word of one of the requested topics (`mentions`)."""
    texts = [draft["stem"], *(draft.get("choices") or []), *(draft.get("correct_keywords") or [])]
    return mentions(" ".join([*texts, draft.get("explanation") or ""]), interests)


def mentions(text: str, topics: Sequence[str]) -> bool:
    """Whether `text` says a word of one of `topics` (for a Chinese topic, one of its two-character words: single
    characters match too easily); a topic with no word counts as said."""
    said = set(tokens(text))
    for topic in topics:
        words = set(tokens(topic))
        long = {w for w in words if len(w) > 1}
        if not words or (long or words) & said:
            return True
    return False


async def _about_topic(tools: QuizTools, draft: dict[str, Any], topic: str) -> bool:
    """Whether the model reads a draft that does not say the topic's words as about the topic anyway (an item on
    SHA-256 is about cryptography): its probability of yes at least 0.5; False when it gives none."""
    from ._judge import JudgeUnavailable

    about = getattr(tools.judge, "about_topic", None)
    if about is None:
        return False
    text = " ".join([draft["stem"], *(draft.get("choices") or [])])
    try:
        p = await about(text=text, topic=topic, timeout=TOPIC_READING_S)
    except JudgeUnavailable:
        return False
    return p is not None and p >= 0.5


def _exists(tools: QuizTools, item_type: str, stem: str, choices: list[str] | None, lang: str) -> bool:
    digest = content_hash(item_type=item_type, stem=stem, choices=choices, lang=lang)
    try:
        with tools.engine.connect() as conn:
            return conn.execute(select(questions.c.id).where(questions.c.content_hash == digest)).first() is not None
    except Exception:  # noqa: BLE001 - the database away: tool 5 queues it, and saves it once
        return False


def generation_message(
    saved: list[dict[str, Any]], rejected: list[dict[str, Any]], queued: int, request: GenerateRequest
) -> str:
    lang = request.lang
    lines = [
        t(
            "quiz.generate.summary",
            lang,
            saved=len(saved),
            asked=request.count,
            category=t(f"quiz.category.{request.category}", lang),
            difficulty=request.difficulty,
        )
    ]
    for n, item in enumerate(saved, 1):
        lines.append(t("quiz.generate.item", lang, n=n, stem=item["stem"], id=item["question_id"]))
        for letter, choice in zip("ABCDE", item.get("choices") or [], strict=False):
            lines.append(f"   {letter}) {choice}")
        key = item["answer_schema"].get("correct_key") or ", ".join(item.get("correct_keywords") or [])
        lines.append("   " + t("quiz.generate.answer", lang, answer=key, score=f"{item['validation_score']:.2f}"))
    if rejected:
        lines.append(t("quiz.generate.rejected", lang, count=len(rejected) - queued))
    if queued:
        lines.append(t("quiz.generate.queued", lang, count=queued))
    return "\n".join(lines)


# ---- Mode 2 -------------------------------------------------------------------------------------------------------


def question_row(engine: Any, question_id: str) -> dict[str, Any] | None:
    with engine.connect() as conn:
        row = conn.execute(select(questions).where(questions.c.id == question_id)).mappings().first()
    return dict(row) if row is not None else None


async def score_answers(
    answers: Sequence[AnswerIn], *, tools: QuizTools, session_id: str, user_id: str, lang: str, record: CallRecorder
) -> dict[str, Any]:
    """Score and explain each answer (tool 6) against its question's key, keep each as a response (once per session
    and question), and say the results."""
    import json

    results: list[dict[str, Any]] = []
    unknown: list[str] = []
    for answer in answers:
        row = question_row(tools.engine, answer.question_id)
        if row is None:
            unknown.append(answer.question_id)
            continue
        categories = json.loads(row["categories"] or "[]")
        args = {
            "session_id": session_id,
            "user_id": user_id,
            "question_id": row["id"],
            "question_type": row["item_type"],
            "user_answer": answer.user_answer,
            "correct_answer": row["correct_key"],
            "correct_keywords": json.loads(row["correct_keywords"]) if row["correct_keywords"] else None,
            "difficulty": row["difficulty"],
            "category": categories[0] if categories and categories[0] in CATEGORIES else None,
        }
        about = {
            "stem": row["stem"],
            "explanation": row["explanation"],
            "topic": row["topic"] or None,
            "lang": row["lang"],
        }
        scored = await record("score_and_explain", args, tools.score_and_explain(**args, **about))
        if isinstance(scored, dict) and scored.get("ok") is not False:
            _keep_response(
                tools.engine,
                session_id=session_id,
                user_id=user_id,
                question_id=row["id"],
                answer=answer.user_answer,
                scored=scored,
            )
        results.append(
            {
                "question_id": row["id"],
                "stem": row["stem"],
                **(scored if isinstance(scored, dict) else {"result": scored}),
            }
        )
    ok = bool(results)
    out: dict[str, Any] = {
        "ok": ok,
        "results": results,
        "unknown_questions": unknown,
        "message": scoring_message(results, unknown, lang),
    }
    if not ok:
        out.update(
            error_code="unknown_question", _hint="Give the id of a question in the bank with the answer after a colon."
        )
    return out


def _keep_response(
    engine: Any, *, session_id: str, user_id: str, question_id: str, answer: str, scored: dict[str, Any]
) -> None:
    """The scored answer as a response (idempotent: `session:question`), the data items are calibrated from."""
    row = {
        "id": f"{session_id}:{question_id}"[:64],
        "user_id": user_id[:64],
        "session_id": session_id,
        "question_id": question_id,
        "user_answer": answer,
        "score": float(scored.get("score", 0)),
        "is_correct": int(bool(scored.get("is_correct"))),
        "created_at": utcnow(),
    }
    with engine.begin() as conn:
        if conn.execute(select(responses.c.id).where(responses.c.id == row["id"])).first() is None:
            conn.execute(responses.insert().values(**row))


def scoring_message(results: list[dict[str, Any]], unknown: list[str], lang: str) -> str:
    lines = []
    for n, r in enumerate(results, 1):
        verdict = t("quiz.score.correct" if r.get("is_correct") else "quiz.score.incorrect", lang)
        lines.append(f"{n}. {r['stem']}\n   {t('quiz.score.line', lang, score=r.get('score', 0), verdict=verdict)}")
        if r.get("feedback"):
            lines.append(f"   {r['feedback']}")
        if r.get("explanation"):
            lines.append(f"   {r['explanation']}")
    if unknown:
        lines.append(t("quiz.score.unknown", lang, ids=", ".join(unknown)))
    return "\n".join(lines)


def profile_reader(engine: Any) -> Callable[[str], Profile | None]:
    def read(user_id: str) -> Profile | None:
        try:
            return load_profile(engine, user_id)
        except Exception:  # noqa: BLE001 - the words alone still make a request
            return None

    return read


def question_known(engine: Any) -> Callable[[str], bool]:
    def known(question_id: str) -> bool:
        try:
            return question_row(engine, question_id) is not None
        except Exception:  # noqa: BLE001
            return False

    return known
