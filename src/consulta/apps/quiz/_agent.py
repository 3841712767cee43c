"""quiz's agent: Mode 1 and Mode 2 as runs of the runtime.

A turn's words are read in code (`read_request`). Generating: the runtime's first look calls tools 1-3 (on record),
then the model makes one structured call, `submit_questions`, with the items it wrote; code validates and saves them
(tools 4 and 5, recorded as calls of the run) and the saved items end the turn. Scoring: the first look calls
`score_answers` itself (tool 6 per answer, on record) and its result ends the turn; the model writes nothing.
"""

from __future__ import annotations

import functools
import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Annotated, Any, Literal

from pydantic import Field, field_validator

from ...i18n import language_name, t
from ...runtime import Agent, Store, ToolDef, ToolError, current_tool_call, utcnow
from .._def import AppEnv, AppOptions
from ._cat_sessions import answered_in_open_test
from ._modes import (
    AnswerArg,
    AnswerIn,
    CallRecorder,
    Draft,
    DraftArg,
    GenerateRequest,
    ScoreRequest,
    generate,
    mentions,
    model_rewriter,
    profile_reader,
    question_known,
    read_request,
    score_answers,
)
from ._profiles import check_user_id
from ._retry_queue import RetryQueue
from ._tools import TIMEOUTS, QuizTools

__all__ = ["AGENT", "RETRY_JOURNAL", "QuizOptions", "build_agent", "quiz_tools"]

AGENT = "quiz"
RETRY_JOURNAL = "save_retry_queue.jsonl"
"""Tool 5's retry journal, in the app's data folder."""
FIRST_LOOK_PREFIX = "look_"
MAX_REQUESTS = 100
"""Model requests a run may make, the judge's inside tools 4 and 6 included (they share the run's usage limits):
one generation step, then per draft up to two rewrites and two requests per judgment (one re-ask; none where the
model gives label probabilities), or four per short answer graded and explained (20 at most)."""
EXAMPLES = 1
"""Templates the first look fetches as examples: one, the closest in level (a small model's prompt is paid for token
by token, and on a topic the bank holds it copied the templates it was shown: 10 copies refused in 4 requests at
c4a49ed with 3 shown)."""


class QuizOptions(AppOptions):
    user: str | None = Field(
        None, description="The user (a UUID) the session generates and scores for, when the words name none"
    )

    @field_validator("user")
    @classmethod
    def _uuid(cls, value: str | None) -> str | None:
        return None if value is None else check_user_id(value)


INSTRUCTIONS = """You write test questions. The tool results give the user's profile, example questions, the \
keywords and concepts of the level (its difficulty 1-10 and category), and last the brief: the task, its topic, how \
many questions and their language. Call submit_questions once with that many questions, each about the brief's \
topic, in its language, at that level:
- multiple_choice: 4 different choices; correct_key is the right choice, copied exactly.
- true_false: a statement, never a question ("Light travels faster than sound." - no question mark); correct_key is True or False.
- short_answer: explanation first gives the right answer; then correct_keywords lists 1-3 words of that answer, not only words the question already says.
Each stem is one clear question of at most 250 characters with exactly one right answer; no "all of the above", no \
"never" or "always" tricks. explanation: one short sentence on why the answer is right. Write new questions of your \
own; the examples show the format only."""


class _LazyJudge:
    """quiz-judge's `ModelJudge` over the session's model, made on first use (serving tools 1-3 loads no model)."""

    def __init__(self, env: AppEnv) -> None:
        self._env = env
        self._judge: Any = None
        self._lock = threading.Lock()

    def _real(self) -> Any:
        with self._lock:
            if self._judge is None:
                from ._judge import ModelJudge

                self._judge = ModelJudge(self._env.resolve_model(self._env.model))
            return self._judge

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._real(), name)


EMBEDDED_MODEL_TIMEOUTS = {**TIMEOUTS, "validate_question_quality": 90.0}
"""The time bounds with the embedded model. Tool 6 keeps the seed's 15 s: a short answer's grade is label reads
(1-10 s on 2 cores, bench/eval_quiz_grading.py) and the model's explanation takes what is left, code writing it
otherwise. Tool 4's 10 s assumes a hosted model: on 2 CPU cores its judgment and the blind answer take 10-60 s, so it
would always fall back."""

_tools_lock = threading.Lock()
_tools: dict[tuple[str, str, str], QuizTools] = {}


def quiz_tools(env: AppEnv) -> QuizTools:
    """The session's six tools over the store (one per store, data folder and model in a process: tool 3's cache and
    the retry queue's drainer are shared). Queued saves are drained now, at start-up."""
    key = (str(env.store.engine.url), str(env.data_dir), env.model)
    with _tools_lock:
        tools = _tools.get(key)
        if tools is None:
            timeouts = EMBEDDED_MODEL_TIMEOUTS if env.model.split(":", 1)[0] == "local" else TIMEOUTS
            tools = QuizTools(
                env.store.engine,
                queue=RetryQueue(env.data_dir / RETRY_JOURNAL),
                judge=_LazyJudge(env),
                timeouts=timeouts,
            )
            _tools[key] = tools
    tools.start_retry_drainer()
    return tools


@dataclass(frozen=True)
class _Reader:
    """The request of a turn's words (the session's user and language filling what they leave out)."""

    tools: QuizTools
    user: str | None
    lang: str

    def __call__(self, words: str) -> GenerateRequest | ScoreRequest:
        engine = self.tools.engine
        return read_request(
            words, self.lang, profile=profile_reader(engine), known_question=question_known(engine), user_id=self.user
        )


def _first_look(read: _Reader) -> Any:
    def look(words: str) -> list[tuple[str, dict[str, Any]]]:
        request = read(words)
        if isinstance(request, ScoreRequest):
            args: dict[str, Any] = {"answers": [a.model_dump() for a in request.answers]}
            if request.user_id:
                args["user_id"] = request.user_id
            return [("score_answers", args)]
        calls: list[tuple[str, dict[str, Any]]] = []
        if request.user_id:
            calls.append(("get_user_profile", {"user_id": request.user_id}))
        calls.append(
            (
                "get_difficulty_keywords",
                {"difficulty": request.difficulty, "category": request.category, "lang": request.lang},
            )
        )
        calls.append(
            (
                "search_question_templates",
                {
                    "interests": request.interests,
                    "difficulty": request.difficulty,
                    "category": request.category,
                    "lang": request.lang,
                    "limit": EXAMPLES,
                },
            )
        )
        calls.append(("get_generation_brief", brief_args(request)))
        return calls

    return look


def brief_args(request: GenerateRequest) -> dict[str, Any]:
    return {
        "topic": request.interests[0],
        "count": request.count,
        "lang": request.lang,
        "difficulty": request.difficulty,
        "category": request.category,
    }


async def get_generation_brief(
    topic: Annotated[str, Field(min_length=1, max_length=100)],
    count: Annotated[int, Field(ge=1, le=5)],
    lang: Literal["en", "zh-CN"],
    difficulty: Annotated[int, Field(ge=1, le=10)],
    category: Literal["technical", "business", "general"],
) -> dict[str, Any]:
    """The task as code read it from the person's words: how many questions, on what topic, in which language, at
    which level.

    Args:
        topic: The questions' topic.
        count: How many questions.
        lang: en or zh-CN.
        difficulty: Difficulty 1-10.
        category: technical, business or general.
    """
    # The last thing the model reads before it writes: a small model writes about what it read last, and the level's
    # keywords and examples above are often of other topics.
    if lang == "zh-CN":
        task = f"用简体中文写 {count} 道关于「{topic}」的新题，难度 {difficulty}/10。"
    else:
        task = f"Write {count} new question(s) about {topic}, in English, difficulty {difficulty}/10."
    return {
        "task": task,
        "topic": topic,
        "count": count,
        "language": language_name(lang),
        "difficulty": difficulty,
        "category": category,
        "note": f"The keywords, concepts and examples above show the level and the format only. Every question asks "
        f"about {topic} itself; do not reuse an example's question.",
    }


BRIEF = ToolDef(
    name="get_generation_brief",
    function=get_generation_brief,
    description=(get_generation_brief.__doc__ or "").split("\n\n")[0].strip(),
)


KEY_FIELDS = frozenset(
    {"correct_answer", "correct_key", "correct_keywords", "answer_summary", "answer_schema", "explanation"}
)
"""What of an item gives its answer away: its key, expected keywords and explanation."""


def _open_test_answers(store: Store) -> frozenset[str] | None:
    """While the person the current tool call's run belongs to has a test in progress: the items they have answered
    in it (every other item of the bank is shown or may be shown to them). None: no test in progress (or no run)."""
    context = current_tool_call()
    if context is None:
        return None
    principal = store.get_run(context.run_id).principal
    return None if principal is None else answered_in_open_test(store.engine, principal)


def _without_keys(value: Any) -> Any:
    """`value` (a tool's JSON result) with every item's key, expected keywords and explanation left out."""
    if isinstance(value, dict):
        return {k: _without_keys(v) for k, v in value.items() if k not in KEY_FIELDS}
    if isinstance(value, list):
        return [_without_keys(v) for v in value]
    return value


def _keyless_in_a_test(tool: ToolDef, store: Store) -> ToolDef:
    """`tool` (a seed read tool whose results quote bank items: templates, example questions) as the chat agent uses
    it: during the person's test, its results carry no item's key, keywords or explanation."""
    call = tool.call

    @functools.wraps(tool.function)
    async def keyless(**kwargs: Any) -> Any:
        result = await call(**kwargs)
        return _without_keys(result) if _open_test_answers(store) is not None else result

    return replace(tool, function=keyless, policies=(), _wrapped=None)


def writer_view(level: dict[str, Any], topics: Sequence[str]) -> dict[str, Any]:
    """Tool 3's result as the writing model is shown it for a request on `topics`: the level and category, and only
    the keywords and concepts that name one of the topics. The level's keywords, concepts and example questions are of
    whatever topics the bank holds for that level and category; a small model writes about them instead of the topic
    asked for (seen at c5fb434, held-out requests: survivorship bias for physics, accrual accounting for human
    resources — both level keywords —, and a copy of an example question refused in 5 of 7 runs, each copy a rewrite of
    16-30 s). The seed's Mode 1 writes from the profile, keywords, concepts and templates: tool 2's templates are on
    the topic."""
    shown = {k: v for k, v in level.items() if k not in ("keywords", "concepts", "example_questions")}
    keywords = [k for k in level.get("keywords") or [] if isinstance(k, str) and mentions(k, topics)]
    concepts = [
        c
        for c in level.get("concepts") or []
        if isinstance(c, dict) and mentions(json.dumps(c, ensure_ascii=False), topics)
    ]
    return shown | ({"keywords": keywords} if keywords else {}) | ({"concepts": concepts} if concepts else {})


def _for_the_writer(tool: ToolDef, store: Store, read: _Reader) -> ToolDef:
    """Tool 3 as the chat agent's first look calls it for a generation request: `writer_view` of its result (the
    tool itself, over MCP or for a request to score, is unchanged)."""
    call = tool.call

    @functools.wraps(tool.function)
    async def shown(**kwargs: Any) -> Any:
        result = await call(**kwargs)
        context = current_tool_call()
        if context is None or not context.tool_call_id.startswith(FIRST_LOOK_PREFIX) or not isinstance(result, dict):
            return result
        request = read(store.get_run(context.run_id).prompt)
        return writer_view(result, request.interests) if isinstance(request, GenerateRequest) else result

    return replace(tool, function=shown, policies=(), _wrapped=None)


def _not_during_a_test(store: Store, answers: Sequence[AnswerIn], lang: str) -> None:
    """Scoring an item of the bank the person's test shows or may show, before their answer to it is recorded in the
    test, would give its key away: refused (`in_test`), nothing scored or recorded."""
    answered = _open_test_answers(store)
    if answered is None:
        return
    held = sorted({a.question_id for a in answers if a.question_id not in answered})
    if held:
        raise ToolError(
            "in_test",
            t("quiz.chat.in_test", lang, items=", ".join(held)),
            hint="Do not score or explain these items now; tell the person to answer them in their test.",
        )


def _chat_request(store: Store, read: _Reader) -> GenerateRequest | ScoreRequest | None:
    """The request of the run the current tool call belongs to, when it is a chat turn of this agent (its first look
    is on record), else None (e.g. an MCP client's call)."""
    context = current_tool_call()
    if context is None:
        return None
    calls = store.list_tool_calls(context.run_id)
    if not any(c.tool_call_id.startswith(FIRST_LOOK_PREFIX) for c in calls):
        return None
    return read(store.get_run(context.run_id).prompt)


def _mode_tools(tools: QuizTools, store: Store, read: _Reader) -> tuple[ToolDef, ToolDef]:
    async def submit_questions(
        questions: Annotated[list[DraftArg], Field(min_length=1, max_length=5)],
        category: Literal["technical", "business", "general"] = "general",
        difficulty: Annotated[int, Field(ge=1, le=10)] = 5,
        lang: Literal["en", "zh-CN"] = "en",
        topic: Annotated[str, Field(max_length=100)] = "",
    ) -> dict[str, Any]:
        """Submit the questions you wrote: each is validated, and those scoring at least 0.70 are saved and returned.

        Args:
            questions: The questions, 1-5.
            category: (MCP) technical, business or general.
            difficulty: (MCP) Difficulty 1-10.
            lang: (MCP) en or zh-CN.
            topic: (MCP) The questions' topic.
        """
        context = current_tool_call()
        asked = _chat_request(store, read)
        if isinstance(asked, GenerateRequest):
            request, topic = asked, topic or asked.interests[0]
        else:
            request = GenerateRequest(
                category=category, difficulty=difficulty, count=len(questions), interests=[topic or category], lang=lang
            )
        session = context.run_id if context is not None else f"mcp-{utcnow()[:10]}"
        round_id = f"{session}_1_{utcnow()}"
        drafts = [Draft.model_validate(q) for q in questions]
        # In a chat turn a rejected draft goes back to the session's model with its reason; over MCP the client's
        # model reads the reasons in the result and writes again itself.
        rewrite = model_rewriter(tools.judge, request, topic) if isinstance(asked, GenerateRequest) else None
        return await generate(
            drafts, request, tools=tools, round_id=round_id, record=CallRecorder(store), topic=topic, rewrite=rewrite
        )

    async def score_answers_tool(
        answers: Annotated[list[AnswerArg], Field(min_length=1, max_length=20)],
        user_id: Annotated[str, Field(min_length=1, max_length=64)] = "anonymous",
        session_id: Annotated[str, Field(max_length=200)] = "",
    ) -> dict[str, Any]:
        """Score and explain several answers at once, each against its question's key in the bank.

        Args:
            answers: The answers: each a question_id and the user_answer.
            user_id: Who answered.
            session_id: The test session (default: this run).
        """
        context = current_tool_call()
        asked = _chat_request(store, read)
        lang = asked.lang if asked is not None else read.lang
        session = session_id or (context.run_id if context is not None else "mcp")
        given = [AnswerIn.model_validate(a) for a in answers]
        _not_during_a_test(store, given, lang)
        return await score_answers(
            given, tools=tools, session_id=session, user_id=user_id, lang=lang, record=CallRecorder(store)
        )

    submit = ToolDef(
        name="submit_questions",
        function=submit_questions,
        description=(submit_questions.__doc__ or "").split("\n\n")[0].strip(),
        ends_turn=True,
    )
    score = ToolDef(
        name="score_answers",
        function=score_answers_tool,
        description=(score_answers_tool.__doc__ or "").split("\n\n")[0].strip(),
        ends_turn=True,
    )
    return submit, score


def _steps(store: Store, read: _Reader) -> Any:
    def choose(run_id: str) -> Sequence[str] | None:
        request = read(store.get_run(run_id).prompt)
        return ["submit_questions"] if isinstance(request, GenerateRequest) else None

    return choose


def build_agent(options: QuizOptions, env: AppEnv) -> Agent:
    """The quiz agent over the session's store and model (the seed's six tools; Mode 1 and Mode 2)."""
    tools = quiz_tools(env)
    read = _Reader(tools=tools, user=options.user, lang=env.lang)
    seed = {d.name: d for d in tools.tool_defs()}
    submit, score = _mode_tools(tools, env.store, read)
    return Agent(
        app="quiz",
        name=AGENT,
        instructions=INSTRUCTIONS,  # the same every run: the local model's cached prefix
        tools=(
            seed["get_user_profile"],
            _keyless_in_a_test(_for_the_writer(seed["get_difficulty_keywords"], env.store, read), env.store),
            _keyless_in_a_test(seed["search_question_templates"], env.store),
            BRIEF,
            submit,
            score,
        ),
        first_look=_first_look(read),
        tool_choice=_steps(env.store, read),
        question_timeout=options.question_timeout,
        max_steps=MAX_REQUESTS,
        options=options.model_dump(mode="json"),
    )
