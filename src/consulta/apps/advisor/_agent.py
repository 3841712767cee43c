"""The advisor agent: every turn is one call of `advisor_turn`, made by the runtime itself (the turn's first look),
which settles the turn in code (`_turn.settle`) and ends it with the seed's `{voice_response, tool_calls}` as the
run's output. The model writes only what code cannot: a description of an advisor and chit-chat, each checked
(length, language, no claimed action, no invented number) and replaced by code's words when it fails.

An ambiguous or unknown school or major, or an advisor the words do not single out, is the runtime's `question`
(seed 001): the call raises a `Choice`, the run pauses on the question with the candidates as options, and the answer
runs the same call again with the chosen one. The session (form, conversation, page) lives in the store
(`_sessions`), per principal, so a reload or a restart finds it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import BaseModel, Field

from ...asks import question_tool
from ...i18n import normalize_lang, t
from ...runtime import (
    EXTERNAL_MODEL_PREFIX,
    Agent,
    AskStatus,
    Choice,
    ReplyRefused,
    Store,
    ToolDef,
    ToolError,
    TurnFacts,
    current_tool_call,
    reply_lang,
    typed_answer,
)
from .._def import AppEnv, AppOptions
from ._sessions import Session, SessionBook
from ._turn import (
    DescribeTask,
    QuestionSpec,
    SiteLookupError,
    Turn,
    TurnOutput,
    answer_text,
    check_model_words,
    chosen_from,
    fit,
    settle,
    whole_sentences,
)

__all__ = ["AGENT", "TURN_TOOL", "AdvisorOptions", "AdvisorTurns", "SiteLookups", "build_agent", "turn_tool"]

AGENT = "assistant"
TURN_TOOL = "advisor_turn"
MODEL_WAIT = 60.0
"""Seconds the model may take for its words before code's are said instead."""

INSTRUCTIONS = """You are the voice assistant of a graduate-advisor ranking site. Each message of the user is handled \
by calling advisor_turn(message) with the user's words exactly; its result is your reply."""


class AdvisorOptions(AppOptions):
    """The advisor app's options (the question timeout only: the data and sessions live in the store)."""


class VoiceLine(BaseModel):
    """The model's words (English): bounded, so the grammar stops a small model that rambles."""

    voice_response: str = Field(max_length=200, description="What to say aloud: one or two short spoken sentences.")


class VoiceLineZh(VoiceLine):
    """The model's words in Chinese: 50 字 and a little room for punctuation."""

    voice_response: str = Field(max_length=60, description="要说的话：一两句简短的口语。")


_CHAT = """You are the friendly voice of a graduate-advisor recommendation site. Answer the user's message in \
{language}, in one or two short spoken sentences (at most 50 字 / words). Only talk: never say you searched, \
filtered, opened or recommended anything. If it helps, invite the user to name a school, a major or advisor \
preferences.
What the user told you so far:
{facts}
Example of the style (another message): {example}"""

_DESCRIBE = """Describe a graduate advisor to a student, in {language}, in one or two short spoken sentences (at \
most 50 字 / words), using only these facts (no other numbers, research areas or opinions):
{facts}
Example of the style (other facts): {example}"""

_EXAMPLES = {
    ("describe", "zh-CN"): "李老师是副教授，主要做计算机视觉，学生评分4.2分。",
    ("describe", "en"): "Prof. Li works on computer vision; students rate her 4.2.",
    ("chat", "zh-CN"): "“考研好累” → “辛苦啦！选对导师很重要，告诉我你的目标学校吧。”",
    (
        "chat",
        "en",
    ): '"I\'m nervous about grad school" → "That\'s normal! A good advisor helps a lot. Which school are you aiming for?"',
}


class SiteLookups:
    """The site's look-ups (advisor-site's `_lookups`, imported when first used) as plain data; its
    `LookupFailed`, or a missing site, is `SiteLookupError`."""

    def __init__(self, engine: Any) -> None:
        self.engine = engine

    def _site(self) -> Any:
        try:
            from . import _lookups  # type: ignore[attr-defined]
        except ImportError as error:
            raise SiteLookupError(f"the advisor data is not installed: {error}") from None
        return _lookups

    def _call(self, name: str, **kwargs: Any) -> Mapping[str, Any]:
        site = self._site()
        failed = getattr(site, "LookupFailed", SiteLookupError)
        try:
            return _plain(getattr(site, name)(self.engine, **kwargs))
        except failed as error:
            raise SiteLookupError(str(error)) from None

    def update_ranking(self, *, school: str, major: str) -> Mapping[str, Any]:
        return self._call("update_ranking", school=school, major=major)

    def recommend_advisors(self, *, school: str, major: str, preferences: Mapping[str, Any]) -> Mapping[str, Any]:
        return self._call("recommend_advisors", school=school, major=major, preferences=dict(preferences))

    def get_advisor_detail(self, *, advisor_id: str) -> Mapping[str, Any]:
        return self._call("get_advisor_detail", advisor_id=advisor_id)

    def get_advisor_reviews(self, *, advisor_id: str) -> Mapping[str, Any]:
        return self._call("get_advisor_reviews", advisor_id=advisor_id)

    def page_context(self, principal: str) -> dict[str, Any] | None:
        """The page context the principal's page last posted, or None (none posted, or no site)."""
        try:
            from . import _catalog  # type: ignore[attr-defined]  # advisor-site's: the page contexts pages posted
        except ImportError:
            return None
        found = getattr(_catalog, "page_context_for", None)
        context = found(self.engine, principal) if found is not None else None
        return dict(_plain(context)) if context is not None else None

    def directions(self) -> tuple[str, ...]:
        """The research directions the data knows (when the site offers the list)."""
        try:
            site = self._site()
        except SiteLookupError:
            return ()
        listed = getattr(site, "research_directions", None)
        return tuple(str(d) for d in listed(self.engine)) if callable(listed) else ()


def _plain(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    return value


class AdvisorTurns:
    """Takes turns over the store: loads the principal's session, settles the turn, asks the model for the words
    only it can write, records the conversation, and stores the session."""

    def __init__(
        self, *, store: Store, lookups: Any, resolve_model: Callable[[str], Any] | None, lang: str = "en"
    ) -> None:
        self.store = store
        self.sessions = SessionBook(store.engine)
        self.lookups = lookups
        self.resolve_model = resolve_model
        self.lang = lang

    async def take(
        self,
        words: str,
        *,
        principal: str,
        lang: str,
        model: str | None,
        chosen: tuple[str, str] | None = None,
        answer: str | None = None,
    ) -> Turn:
        """One turn of `principal`'s conversation. `chosen` or `answer` come with the answer to the turn's own
        question (an option, or free text)."""
        session = self.sessions.load(principal)
        reply_in = reply_lang(words, lang)
        page = self._page(principal)
        if answer is not None and chosen is None:
            pending = session.memory.pending or {}
            options = tuple(tuple(o) for o in pending.get("options", ()))
            chosen = chosen_from(answer, str(pending.get("slot", "")), options)  # type: ignore[arg-type]
            if chosen is None:
                turn = Turn(
                    session=session,
                    lang=reply_in,
                    output=TurnOutput(voice_response=t("advisor.reply.not_understood", reply_in)),
                )
                return self._finish(turn, principal, words)
        turn = settle(
            words, session, lookups=self.lookups, lang=reply_in, page=page, chosen=chosen, directions=self._directions()
        )
        if turn.question is not None:
            turn.session.memory.pending = (turn.session.memory.pending or {}) | {
                "options": [list(o) for o in turn.question.options]
            }
            self.sessions.save(principal, turn.session)
            return turn
        if turn.describe is not None:
            text = await self._model_words(turn.describe, reply_in, model)
            turn.output = TurnOutput(voice_response=text, tool_calls=list(turn.tool_calls))
        return self._finish(turn, principal, words)

    def _finish(self, turn: Turn, principal: str, words: str) -> Turn:
        assert turn.output is not None
        turn.session.memory.lang = turn.lang
        turn.session.said("user", words)
        turn.session.said("assistant", turn.output.voice_response)
        self.sessions.save(principal, turn.session)
        return turn

    def _page(self, principal: str) -> dict[str, Any] | None:
        reader = getattr(self.lookups, "page_context", None)
        return reader(principal) if callable(reader) else None

    def _directions(self) -> tuple[str, ...]:
        reader = getattr(self.lookups, "directions", None)
        return reader() if callable(reader) else ()

    async def _model_words(self, task: DescribeTask, lang: str, spec: str | None) -> str:
        """The model's words for `task`, checked; code's `fallback` when there is no model or its words fail."""
        if self.resolve_model is None or not spec or spec.startswith(EXTERNAL_MODEL_PREFIX):
            return fit(task.fallback)
        language = t("advisor.model.language", lang)
        template = _DESCRIBE if task.kind == "describe" else _CHAT
        try:
            answer = await typed_answer(
                model=self.resolve_model(spec),
                instructions=template.format(
                    language=language, facts=task.facts, example=_EXAMPLES[task.kind, normalize_lang(lang)]
                ),
                prompt=self._prompt(task),
                output_type=VoiceLineZh if lang.startswith("zh") else VoiceLine,
                check=lambda out: check_model_words(out.voice_response, task, lang),
                retries=1,
                within=current_tool_call(),
                timeout=MODEL_WAIT,
            )
        except (ToolError, TimeoutError, ValueError):
            return fit(task.fallback)
        output = answer.output
        assert isinstance(output, VoiceLine)
        return whole_sentences(output.voice_response)

    @staticmethod
    def _prompt(task: DescribeTask) -> str:
        return "Describe this advisor." if task.kind == "describe" else "Reply to the user's message."


def turn_tool(turns: AdvisorTurns) -> ToolDef:
    """`advisor_turn`: one turn of the conversation, settled (its result's `message` is the turn's output)."""

    async def advisor_turn(message: str, choice_slot: str | None = None, choice: str | None = None) -> dict[str, Any]:
        """Handle the user's message: update the form, fire the seed's triggers, and reply."""
        call = current_tool_call()
        run = turns.store.get_run(call.run_id) if call is not None else None
        principal = (run.principal if run is not None else None) or "local"
        lang = normalize_lang(run.lang if run is not None else turns.lang)
        model = run.model if run is not None else None
        chosen = (choice_slot, choice) if choice_slot in ("school", "major", "advisor") and choice else None
        answer = _answer_to(turns.store, call) if chosen is None else None
        session = turns.sessions.load(principal) if (chosen or answer is not None) else None
        words = str((session.memory.pending or {}).get("words") or message) if session is not None else message
        turn = await turns.take(words, principal=principal, lang=lang, model=model, chosen=chosen, answer=answer)  # type: ignore[arg-type]
        if turn.question is not None:
            if chosen is not None or answer is not None:  # asked once already: say what is missing instead
                output = TurnOutput(voice_response=t("advisor.reply.not_understood", turn.lang))
                return {"ok": True, "message": output.model_dump_json(), **output.model_dump()}
            raise _asked(turn.question, turn.lang)
        assert turn.output is not None
        out = turn.output
        return {
            "ok": True,
            "message": json.dumps(out.model_dump(mode="json"), ensure_ascii=False),
            **out.model_dump(mode="json"),
            "form": turn.session.form_state().model_dump(mode="json"),
        }

    # It writes the session's form and page context itself (not a staged plan): an `act` tool, made by the first look.
    return ToolDef(
        name=TURN_TOOL,
        function=advisor_turn,
        description=advisor_turn.__doc__ or "",
        kind="act",
        opens_turn=True,
        ends_turn=True,
    )


def _answer_to(store: Store, call: Any) -> str | None:
    """The user's answer to the question this call paused on (it runs again after it), or None on a first call."""
    if call is None:
        return None
    asks = [
        a for a in store.list_asks(status=AskStatus.answered, run_id=call.run_id) if a.tool_call_id == call.tool_call_id
    ]
    return answer_text(asks[-1].answer) if asks else None


def _asked(question: QuestionSpec, lang: str) -> ToolError:
    """The turn's question as the runtime's `question` (the options' labels; each stands for its value)."""
    labels = [label for _, label in question.options]
    return ToolError(
        "needs_choice",
        f"{question.text(lang)} ({', '.join(labels)})",
        field=question.slot,
        choice=Choice(
            header=question.header(lang),
            question=question.text(lang),
            options=labels,
            args_for_option={
                label: {"choice_slot": question.slot, "choice": value} for value, label in question.options
            },
        ),
        hint="Ask the user which one they mean with the question tool.",
    )


def _check_output(text: str, facts: TurnFacts) -> None:
    """A turn's output is the seed's `{voice_response, tool_calls}` (the turn tool's result); words the model wrote
    itself (after a question went unanswered) are replaced by the reply that asks for what is missing."""
    try:
        TurnOutput.model_validate_json(text)
    except ValueError:
        fallback = TurnOutput(voice_response=t("advisor.reply.ask_both", facts.lang))
        raise ReplyRefused("Reply with advisor_turn's result.", replacement=fallback.model_dump_json()) from None


def build_agent(options: AdvisorOptions, env: AppEnv) -> Agent:
    """The advisor agent over the store's data and sessions (`env.store`); the model of each run writes the words
    only it can."""
    turns = AdvisorTurns(
        store=env.store, lookups=SiteLookups(env.store.engine), resolve_model=env.resolve_model, lang=env.lang
    )
    return agent_over(turns, options=options)


def agent_over(turns: AdvisorTurns, *, options: AdvisorOptions | None = None) -> Agent:
    """The agent taking its turns through `turns` (tests and benchmarks give theirs)."""
    options = options or AdvisorOptions()
    return Agent(
        app="advisor",
        name=AGENT,
        instructions=INSTRUCTIONS,
        tools=(turn_tool(turns), question_tool()),
        first_look=lambda words: [(TURN_TOOL, {"message": words})],
        check_reply=_check_output,
        question_timeout=options.question_timeout,
        max_steps=4,
        options=options.model_dump(mode="json"),
    )


def session_of(store: Store, principal: str) -> Session:
    """The principal's session as stored (a new, empty one if none)."""
    return SessionBook(store.engine).load(principal)
