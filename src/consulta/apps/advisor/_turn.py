"""One turn of the advisor agent, settled in code (seed §1.3, §3, §6): the form updated from the message, the
triggers fired, page references resolved, the look-ups made, and the reply composed — or what is left for the model
(a description of an advisor, chit-chat), or the question to ask (an ambiguous or unknown school or major, an
advisor the words do not single out).

Triggers, as §1.3 says and never twice: school and major known → `update_ranking`, once per (school, major); with a
preference too → `recommend_advisors`, once per (school, major, preferences); an explicit choice of an advisor →
`get_advisor_detail`. "第一个 / 第二个 / 这个 / 他 / 她 / the first one / this one / him / her" are read from the
page context the page sent (`visible_advisors`, `selected_advisor`), else from the advisor last talked about.

The reply is the seed's `{voice_response, tool_calls}`; the voice is at most 50 字 (see `spoken_length`), composed
from templates where code knows the facts; §6's replies are said verbatim.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from pydantic import BaseModel, Field

from ...i18n import ZH_NUMERALS, chinese_number, han_count, has_chinese, t
from ._form import (
    DIRECTIONS,
    Extraction,
    UserForm,
    asks_new_conversation,
    extract,
    form_changes,
    merge,
)
from ._names import Ambiguous, Match, NameBook, NameResult, Unknown, majors, schools
from ._sessions import Session

__all__ = [
    "LIMIT",
    "Advisor",
    "DescribeTask",
    "SiteLookupError",
    "Lookups",
    "QuestionSpec",
    "ToolCall",
    "Turn",
    "TurnOutput",
    "claims_action",
    "fit",
    "language_fits",
    "settle",
    "spoken_length",
]


class ToolCall(BaseModel):
    """One of the seed's tool calls (§2.3): what the page does with this turn (refresh the ranking, open a page)."""

    tool: Literal["update_form", "update_ranking", "recommend_advisors", "get_advisor_detail", "get_advisor_reviews"]
    params: dict[str, Any] = Field(default_factory=dict)


class TurnOutput(BaseModel):
    """The seed's output of a turn (§2.1)."""

    voice_response: str
    tool_calls: list[ToolCall] = Field(default_factory=list)


class SiteLookupError(Exception):
    """A look-up failed (the data could not be read): the turn says §6.2's reply and changes nothing on the page."""


class Lookups(Protocol):
    """The site's look-ups (advisor-site's `_lookups`), each returning plain JSON-able data or raising
    `SiteLookupError`."""

    def update_ranking(self, *, school: str, major: str) -> Mapping[str, Any]: ...
    def recommend_advisors(self, *, school: str, major: str, preferences: Mapping[str, Any]) -> Mapping[str, Any]: ...
    def get_advisor_detail(self, *, advisor_id: str) -> Mapping[str, Any]: ...
    def get_advisor_reviews(self, *, advisor_id: str) -> Mapping[str, Any]: ...


@dataclass(frozen=True)
class Advisor:
    """An advisor as the turn reads one from the page or a look-up's result."""

    id: str
    name: str
    title: str = ""
    rating: float | None = None
    directions: tuple[str, ...] = ()

    @classmethod
    def read(cls, data: Mapping[str, Any], lang: str = "zh-CN") -> Advisor | None:
        """From a page context's or a look-up's advisor (the seed's `id`, `name`, `title`, `rating`; the data's
        research directions under any of their usual keys; in English the data's `*_en` fields where it has them);
        None without an id and a name."""
        if not lang.startswith("zh"):
            data = {**data, **{k[:-3]: v for k, v in data.items() if k.endswith("_en") and v}}
        ident = data.get("id", data.get("advisor_id"))
        name = data.get("name", data.get("advisor_name"))
        if ident is None or not name:
            return None
        rating = next(
            (
                data[k]
                for k in ("rating", "overall", "overall_rating", "avg_rating")
                if isinstance(data.get(k), int | float)
            ),
            None,
        )
        raw = next(
            (data[k] for k in ("research_directions", "directions", "research_direction", "research") if data.get(k)),
            (),
        )
        directions = (
            (raw,) if isinstance(raw, str) else tuple(str(d) for d in raw if d) if isinstance(raw, list | tuple) else ()
        )
        return cls(
            id=str(ident),
            name=str(name),
            title=str(data.get("title") or ""),
            rating=float(rating) if rating is not None else None,
            directions=directions,
        )

    def card(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "title": self.title, "rating": self.rating}


@dataclass(frozen=True)
class QuestionSpec:
    """A question the turn asks before it goes on: which of `options` (value, label) the user meant by `said`."""

    slot: Literal["school", "major", "advisor"]
    said: str
    options: tuple[tuple[str, str], ...]
    unknown: bool = False

    def header(self, lang: str) -> str:
        return t(f"advisor.question.{self.slot}.header", lang)

    def text(self, lang: str) -> str:
        if self.slot == "advisor":
            return t("advisor.question.advisor.text", lang)
        return t(f"advisor.question.{self.slot}.{'unknown' if self.unknown else 'text'}", lang, said=self.said)


@dataclass(frozen=True)
class DescribeTask:
    """Words only the model can write: a description of an advisor from `facts`, or a chat reply. `fallback` is
    the reply when the model's words do not pass the checks."""

    kind: Literal["describe", "chat"]
    facts: str
    fallback: str
    names: tuple[str, ...] = ()


@dataclass
class Turn:
    """What a turn settled: the output (None while a question or the model's words are pending), the question to
    ask, the model's task, and the session after it."""

    session: Session
    lang: str
    output: TurnOutput | None = None
    question: QuestionSpec | None = None
    describe: DescribeTask | None = None
    tool_calls: list[ToolCall] = field(default_factory=list)


# ---- references to advisors ------------------------------------------------------------------------------------

_EN_ORD = {
    "first": 1,
    "second": 2,
    "third": 3,
    "fourth": 4,
    "fifth": 5,
    "sixth": 6,
    "seventh": 7,
    "eighth": 8,
    "ninth": 9,
    "tenth": 10,
    "1st": 1,
    "2nd": 2,
    "3rd": 3,
    "4th": 4,
    "5th": 5,
    "top": 1,
}
_ORDINAL_ZH = re.compile(rf"第\s*([{ZH_NUMERALS}\d]+)\s*(?:个|位|名)?|排名?第\s*([{ZH_NUMERALS}\d]+)|最后一(?:个|位)")
_ORDINAL_EN = re.compile(
    r"\b(?:the\s+)?(first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|1st|2nd|3rd|4th|5th|top|last)\s+(?:one|advisor|professor|person|on\s+the\s+list)\b|\b(?:number|no\.?|#)\s*(\d+)\b",
    re.IGNORECASE,
)
_PRONOUN = re.compile(
    r"(?<!其)(?:他|她)|这(?:个|位)|那(?:个|位)|该导师|\bTA\b|\b(?:this|that)\s+(?:one|advisor|professor)\b|\b(?:him|her|he|she|his)\b",
    re.IGNORECASE,
)
_DETAIL = re.compile(
    r"详细|详情|主页|资料|打开|点开|看看(?:他|她|这)|看一下(?:他|她|这)|选(?:他|她|这)|就(?:他|她|这个)|\b(?:details?|profile|open|choose|pick|select|more\s+about)\b",
    re.IGNORECASE,
)
_REVIEWS = re.compile(
    r"评价|口碑|风评|学生(?:们)?(?:怎么|如何)?(?:说|看)|\b(?:reviews?|ratings?|what\s+(?:do|did)\s+(?:the\s+)?students\s+say)\b",
    re.IGNORECASE,
)
_LIST = re.compile(
    r"有哪些导师|哪些(?:导师|老师)|都有谁|有谁|\b(?:which|what)\s+advisors\b|\bwho\s+(?:are|is)\s+(?:the\s+)?(?:advisors|on\s+the\s+list)\b|\blist\b",
    re.IGNORECASE,
)
_GREETING = re.compile(r"^\s*(?:你好|您好|嗨|哈喽|hello|hi|hey)\b[\s!！。.,，]*$", re.IGNORECASE)
_WHO = re.compile(
    r"你是谁|你是什么|你能(?:做|干)什么|你可以(?:做|干)什么|你会什么|怎么用|\bwho\s+are\s+you\b|\bwhat\s+(?:can|do)\s+you\s+do\b|\bhow\s+does\s+this\s+work\b",
    re.IGNORECASE,
)
_THANKS = re.compile(
    r"^\s*(?:谢谢|多谢|感谢|thanks?(?:\s+you)?|thank\s+you|ok\s+thanks)[\s!！。.,，]*(?:你|啦|了)?[\s!！。.]*$",
    re.IGNORECASE,
)
_QUESTIONISH = re.compile(
    r"[?？吗呢么]|怎么|什么|为什么|如何|哪|\b(?:what|how|why|which|who|can|could|should|is|are|do|does)\b",
    re.IGNORECASE,
)


def _ordinal(words: str) -> int | None:
    """1-based position said ("第二个" → 2), -1 for the last one, or None."""
    m = _ORDINAL_ZH.search(words)
    if m:
        if m.group(0).startswith("最后"):
            return -1
        raw = m.group(1) or m.group(2)
        return chinese_number(raw) or 0
    m = _ORDINAL_EN.search(words)
    if m:
        if m.group(2):
            return int(m.group(2))
        word = m.group(1).lower()
        return -1 if word == "last" else _EN_ORD[word]
    return None


def visible(page: Mapping[str, Any] | None) -> list[Advisor]:
    advisors = (page or {}).get("visible_advisors") or []
    read = [Advisor.read(a) for a in advisors if isinstance(a, Mapping)]
    return [a for a in read if a is not None]


def selected(page: Mapping[str, Any] | None) -> Advisor | None:
    chosen = (page or {}).get("selected_advisor")
    return Advisor.read(chosen) if isinstance(chosen, Mapping) else None


@dataclass(frozen=True)
class Reference:
    """What the words point at: an advisor, an empty list, a position past the list's end, or no one in particular."""

    advisor: Advisor | None = None
    problem: Literal["empty", "out_of_range", "unclear"] | None = None
    count: int = 0


def reference(words: str, page: Mapping[str, Any] | None, last: Advisor | None) -> Reference | None:
    """The advisor the words refer to (None: they refer to none)."""
    shown = visible(page)
    for advisor in sorted(shown, key=lambda a: -len(a.name)):
        if advisor.name and advisor.name in words:
            return Reference(advisor)
    position = _ordinal(words)
    if position is not None:
        if not shown:
            return Reference(problem="empty")
        if position == -1:
            return Reference(shown[-1])
        if 1 <= position <= len(shown):
            return Reference(shown[position - 1])
        return Reference(problem="out_of_range", count=len(shown))
    if _PRONOUN.search(words):
        chosen = selected(page) or last
        if chosen is not None:
            return Reference(chosen)
        return Reference(problem="empty" if not shown else "unclear", count=len(shown))
    return None


# ---- the turn --------------------------------------------------------------------------------------------------


def settle(
    words: str,
    session: Session,
    *,
    lookups: Lookups,
    lang: str,
    page: Mapping[str, Any] | None = None,
    chosen: tuple[str, str] | None = None,
    directions: Sequence[str] = (),
) -> Turn:
    """Settle the turn of `words` over `session` (changed in place and returned in `Turn.session`). `page` is the
    page context the page sent (else the one kept in the session); `chosen` is (slot, value) when the words come back
    with the user's answer to the turn's question."""
    page = page if page is not None else session.page_context
    session.page_context = dict(page) if page is not None else None
    turn = Turn(session=session, lang=lang)
    if chosen is None and asks_new_conversation(words):
        fresh = Session()
        fresh.memory.lang = lang
        turn.session = fresh
        return _done(turn, t("advisor.reply.new_conversation", lang))

    last = Advisor.read(session.memory.last_advisor) if session.memory.last_advisor else None
    if chosen is not None and chosen[0] == "advisor":
        advisor = next((a for a in visible(page) if a.id == chosen[1]), None) or (
            last if last and last.id == chosen[1] else None
        )
        if advisor is None:
            return _done(turn, t("advisor.reply.which_advisor", lang))
        return _about_advisor(turn, words, advisor, lookups)

    extraction = extract(words, directions=directions)
    if chosen is not None:
        slot, value = chosen
        setattr(extraction, slot, Match(value, value, "exact"))
    names_said = extraction.school is not None or extraction.major is not None
    if not names_said:
        ref = reference(words, page, last)
        if ref is not None:
            return _referenced(turn, words, ref, lookups)
        if _LIST.search(words):
            return _listing(turn, page)

    for slot, book in (("school", schools()), ("major", majors())):
        question = _question(slot, getattr(extraction, slot), book, lang)  # type: ignore[arg-type]
        if question is not None:
            if not question.options:
                key = f"advisor.reply.unknown_{slot}_none"
                return _done(turn, t(key, lang, said=question.said))
            if chosen is not None:
                # a second name to ask about, in a turn resumed by an answer (the runtime asks once a turn): what is
                # sure is kept, and the question is said, to be answered by the next message
                _keep(turn, extraction)
                labels = t("advisor.list_sep", lang).join(label for _, label in question.options[:4])
                return _done(turn, f"{question.text(lang)}{_space(lang)}{labels}")
            session.memory.pending = {"slot": slot, "words": words}
            turn.question = question
            return turn

    changes = _keep(turn, extraction)
    return _after_form(turn, words, extraction, changes, lookups)


def _keep(turn: Turn, extraction: Extraction) -> dict[str, Any]:
    """Merge what the message read into the form; the seed's `update_form` call says what changed."""
    session = turn.session
    before = session.user_form
    session.user_form = merge(before, extraction)
    changes = form_changes(before, session.user_form)
    if changes:
        turn.tool_calls.append(ToolCall(tool="update_form", params=changes))
    session.memory.pending = None
    return changes


def _question(
    slot: Literal["school", "major"], said: NameResult | None, book: NameBook, lang: str
) -> QuestionSpec | None:
    if isinstance(said, Ambiguous):
        return QuestionSpec(slot, said.said, tuple((n, book.display(n, lang)) for n in said.candidates))
    if isinstance(said, Unknown):
        return QuestionSpec(slot, said.said, tuple((n, book.display(n, lang)) for n in said.nearest), unknown=True)
    return None


def _after_form(turn: Turn, words: str, extraction: Extraction, changes: Mapping[str, Any], lookups: Lookups) -> Turn:
    session, lang, form = turn.session, turn.lang, turn.session.user_form
    memory = session.memory
    if not form.school or not form.major:
        if extraction.is_empty():
            return _nothing_read(turn, words)
        noted = _preferences_said(changes, lang)
        if form.school and not form.major:
            reply = t("advisor.reply.ask_major", lang, school=schools().display(form.school, lang))
        elif form.major and not form.school:
            reply = t("advisor.reply.ask_school", lang, major=majors().display(form.major, lang))
        else:
            reply = t("advisor.reply.ask_both", lang)
        return _done(turn, f"{t('advisor.reply.noted', lang, prefs=noted)}{_space(lang)}{reply}" if noted else reply)

    school, major = schools().display(form.school, lang), majors().display(form.major, lang)
    replies: list[str] = []
    ranking_key = [form.school, form.major]
    listed: int | None = None  # the advisors the site lists for the school's major, when looked up this turn
    if memory.ranked_for != ranking_key:
        try:
            ranking = lookups.update_ranking(school=form.school, major=form.major)
        except SiteLookupError:
            return _failed(turn)
        memory.ranked_for = ranking_key
        memory.recommended_for = None
        turn.tool_calls.append(ToolCall(tool="update_ranking", params={"school": form.school, "major": form.major}))
        _show_ranking(session, form, ranking)
        listed = _listed(ranking)
        # an empty ranking says which filter is empty: the site has no advisor of that major at that school
        replies.append(
            t("advisor.reply.ranking" if listed else "advisor.reply.none_at", lang, school=school, major=major)
        )
    recommend_key = _recommend_key(form)
    if form.has_preference() and memory.recommended_for != recommend_key:
        preferences = _preferences_param(form)
        try:
            found = lookups.recommend_advisors(school=form.school, major=form.major, preferences=preferences)
        except SiteLookupError:
            return _failed(turn)
        memory.recommended_for = recommend_key
        turn.tool_calls.append(
            ToolCall(
                tool="recommend_advisors",
                params={"school": form.school, "major": form.major, "preferences": preferences},
            )
        )
        best = next((a for a in (Advisor.read(row, lang) for row in _advisor_rows(found)) if a is not None), None)
        if best is None and listed is None:
            try:
                listed = _listed(lookups.update_ranking(school=form.school, major=form.major))
            except SiteLookupError:
                return _failed(turn)
            if not listed:
                replies.append(t("advisor.reply.none_at", lang, school=school, major=major))
        if best is None and listed:  # the school's major has advisors: it is the preferences none of them meets
            replies.append(t("advisor.reply.recommend_none_of", lang, count=listed, school=school, major=major))
        elif best is None:
            pass  # said above: no advisor of that major at that school
        else:
            memory.last_advisor = best.card() | {"research_directions": list(best.directions)}
            direction = (
                form.research_direction
                if form.research_direction and form.research_direction in best.directions
                else (best.directions[0] if best.directions else (form.research_direction or ""))
            )
            replies.append(t("advisor.reply.recommend", lang, name=best.name, title=best.title, direction=direction))
    if not replies:
        if extraction.is_empty():
            return _nothing_read(turn, words)
        replies.append(t("advisor.reply.same", lang, school=school, major=major))
    elif not form.has_preference():
        replies.append(t("advisor.reply.guide_optional", lang))  # optional fields are guided, never demanded
    return _done(turn, _space(lang).join(replies))


def _space(lang: str) -> str:
    return "" if lang.startswith("zh") else " "


def _recommend_key(form: UserForm) -> str:
    return UserForm.model_validate(form.model_dump()).model_dump_json()


def _preferences_param(form: UserForm) -> dict[str, Any]:
    """recommend_advisors' `preferences` as the seed gives it: the research direction and the preferences set."""
    prefs: dict[str, Any] = {}
    if form.research_direction:
        prefs["research_direction"] = form.research_direction
    prefs.update({k: v for k, v in form.preferences.model_dump().items() if v is not None})
    return prefs


def _preferences_said(changes: Mapping[str, Any], lang: str) -> str:
    parts = []
    if changes.get("research_direction"):
        parts.append(t("advisor.pref.research_direction", lang, value=changes["research_direction"]))
    for name, value in (changes.get("preferences") or {}).items():
        parts.append(t(f"advisor.pref.{name}", lang, value=t(f"advisor.value.{value}", lang)))
    return t("advisor.list_sep", lang).join(parts)


def _advisor_rows(result: Mapping[str, Any] | Sequence[Any]) -> list[Mapping[str, Any]]:
    """The advisors of a look-up's result, in order (its `advisors`, `items`, `results` or `recommendations`)."""
    if isinstance(result, Sequence) and not isinstance(result, str):
        rows: Any = result
    else:
        rows = next(
            (
                result[k]
                for k in ("advisors", "recommendations", "items", "results", "visible_advisors")
                if isinstance(result.get(k), list)
            ),
            [],
        )
    out = []
    for row in rows:
        if isinstance(row, Mapping) and isinstance(row.get("advisor"), Mapping):
            out.append({**row["advisor"], **{k: v for k, v in row.items() if k != "advisor"}})
        elif isinstance(row, Mapping):
            out.append(row)
    return out


def _listed(ranking: Mapping[str, Any]) -> int:
    """How many advisors a ranking lists in all (its `total`, else the rows it holds)."""
    total = ranking.get("total") if isinstance(ranking, Mapping) else None
    return total if isinstance(total, int) else len(_advisor_rows(ranking))


def _show_ranking(session: Session, form: UserForm, ranking: Mapping[str, Any]) -> None:
    """The page the ranking opens, as the agent expects it back (the page's own context replaces it next turn)."""
    shown = [a for a in map(Advisor.read, _advisor_rows(ranking)) if a is not None]
    cards = [a.card() | {"rank": i + 1} for i, a in enumerate(shown)]
    session.page_context = {
        "current_page": "ranking",
        "visible_advisors": cards,
        "selected_advisor": None,
        "ranking_filters": {"school": form.school, "major": form.major},
    }


def _nothing_read(turn: Turn, words: str) -> Turn:
    """§6.1: a message that says nothing for the form. A greeting, thanks or "who are you" is answered in code; a
    question or remark goes to the model (chit-chat); anything else asks for what is missing."""
    lang, form = turn.lang, turn.session.user_form
    if _GREETING.search(words):
        return _done(
            turn,
            t("advisor.reply.greeting", lang)
            if not form.school and not form.major
            else t("advisor.reply.anything_else", lang),
        )
    if _THANKS.search(words):
        return _done(turn, t("advisor.reply.thanks", lang))
    if _WHO.search(words):
        return _done(turn, t("advisor.reply.who", lang))
    fallback = (
        t("advisor.reply.ask_both", lang)
        if not (form.school and form.major)
        else t("advisor.reply.anything_else", lang)
    )
    if not _QUESTIONISH.search(words):
        return _done(turn, fallback)  # §6.1 verbatim
    turn.describe = DescribeTask(kind="chat", facts=_form_facts(turn.session, lang), fallback=fallback)
    return turn


def _form_facts(session: Session, lang: str) -> str:
    form = session.user_form
    lines = [f"school: {form.school or '-'}", f"major: {form.major or '-'}"]
    if form.research_direction:
        lines.append(f"research direction: {form.research_direction}")
    lines += [f"{k}: {v}" for k, v in form.preferences.model_dump().items() if v]
    shown = visible(session.page_context)
    if shown:
        lines.append("advisors on the page: " + ", ".join(f"{a.name} ({a.title})" for a in shown[:5]))
    return "\n".join(lines)


def _failed(turn: Turn) -> Turn:
    """§6.2: a look-up failed — said verbatim, and the page is told nothing."""
    turn.tool_calls = []
    turn.output = TurnOutput(voice_response=t("advisor.reply.lookup_failed", turn.lang), tool_calls=[])
    return turn


def _done(turn: Turn, reply: str) -> Turn:
    turn.output = TurnOutput(voice_response=fit(reply), tool_calls=list(turn.tool_calls))
    return turn


def _listing(turn: Turn, page: Mapping[str, Any] | None) -> Turn:
    lang = turn.lang
    shown = visible(page)
    if not shown:
        return _done(turn, t("advisor.reply.no_list", lang))  # §6.3
    filters = (page or {}).get("ranking_filters") or {}
    school = schools().display(str(filters.get("school") or turn.session.user_form.school or ""), lang)
    major = majors().display(str(filters.get("major") or turn.session.user_form.major or ""), lang)
    first = shown[0]
    return _done(turn, t("advisor.reply.list", lang, school=school, major=major, name=first.name, title=first.title))


def _referenced(turn: Turn, words: str, ref: Reference, lookups: Lookups) -> Turn:
    lang = turn.lang
    if ref.problem == "empty":
        return _done(turn, t("advisor.reply.no_list", lang))  # §6.3 verbatim
    if ref.problem in ("out_of_range", "unclear"):
        shown = visible(turn.session.page_context)
        turn.session.memory.pending = {"slot": "advisor", "words": words}
        turn.question = QuestionSpec("advisor", words, tuple((a.id, f"{a.name} {a.title}".strip()) for a in shown[:10]))
        return turn
    assert ref.advisor is not None
    return _about_advisor(turn, words, ref.advisor, lookups)


def _about_advisor(turn: Turn, words: str, advisor: Advisor, lookups: Lookups) -> Turn:
    """An advisor the user pointed at: open the detail page (an explicit choice), read the reviews, or describe."""
    lang, memory = turn.lang, turn.session.memory
    memory.pending = None
    memory.last_advisor = advisor.card() | {"research_directions": list(advisor.directions)}
    if _REVIEWS.search(words):
        try:
            reviews = lookups.get_advisor_reviews(advisor_id=advisor.id)
        except SiteLookupError:
            return _failed(turn)
        turn.tool_calls.append(ToolCall(tool="get_advisor_reviews", params={"advisor_id": advisor.id}))
        count, average = _review_summary(reviews)
        if not count:
            return _done(turn, t("advisor.reply.reviews_none", lang, name=advisor.name))
        return _done(turn, t("advisor.reply.reviews", lang, name=advisor.name, rating=f"{average:.1f}", count=count))
    if _DETAIL.search(words) or not _QUESTIONISH.search(words):
        # asking for the detail, or a choice said plainly ("第一个", "the second one"): the detail page opens
        try:
            detail = lookups.get_advisor_detail(advisor_id=advisor.id)
        except SiteLookupError:
            return _failed(turn)
        turn.tool_calls.append(
            ToolCall(tool="get_advisor_detail", params={"advisor_id": advisor.id, "advisor_name": advisor.name})
        )
        opened = Advisor.read(_flat(detail), lang) or advisor
        memory.last_advisor = opened.card() | {"research_directions": list(opened.directions)}
        page = dict(turn.session.page_context or {})
        page.update(current_page="detail", selected_advisor={"id": opened.id, "name": opened.name})
        turn.session.page_context = page
        return _done(turn, t("advisor.reply.detail", lang, name=opened.name))
    try:
        detail = lookups.get_advisor_detail(advisor_id=advisor.id)
    except SiteLookupError:
        return _failed(turn)
    known = Advisor.read(_flat(detail), lang) or advisor
    if known.rating is None and advisor.rating is not None:
        known = Advisor(known.id, known.name, known.title, advisor.rating, known.directions)
    facts = _advisor_facts(known, detail)
    fallback = t(
        "advisor.reply.describe",
        lang,
        name=known.name,
        title=known.title,
        directions=t("advisor.list_sep", lang).join(known.directions[:2]) or "-",
        rating=f"{known.rating:.1f}" if known.rating is not None else "-",
    )
    turn.describe = DescribeTask(kind="describe", facts=facts, fallback=fallback, names=(known.name,))
    return turn


def _flat(detail: Mapping[str, Any]) -> Mapping[str, Any]:
    inner = detail.get("advisor")
    return {**detail, **inner} if isinstance(inner, Mapping) else detail


def _review_summary(reviews: Mapping[str, Any]) -> tuple[int, float]:
    rows = reviews.get("reviews") if isinstance(reviews.get("reviews"), list) else []
    count = next(
        (int(reviews[k]) for k in ("count", "total", "review_count") if isinstance(reviews.get(k), int)), len(rows)
    )
    average = next(
        (
            float(reviews[k])
            for k in ("average", "average_rating", "avg_rating", "rating", "overall")
            if isinstance(reviews.get(k), int | float)
        ),
        None,
    )
    if average is None:
        scores = [
            float(r[k])
            for r in rows
            if isinstance(r, Mapping)
            for k in ("rating", "overall", "score")
            if isinstance(r.get(k), int | float)
        ][: len(rows)]
        average = sum(scores) / len(scores) if scores else 0.0
    return count, average


def _advisor_facts(advisor: Advisor, detail: Mapping[str, Any]) -> str:
    flat = _flat(detail)
    lines = [f"name: {advisor.name}", f"title: {advisor.title}"]
    if advisor.directions:
        lines.append("research: " + ", ".join(advisor.directions[:4]))
    if advisor.rating is not None:
        lines.append(f"overall rating: {advisor.rating:.1f} / 5")
    for key in ("ratings", "dimension_ratings", "dimensions"):
        if isinstance(flat.get(key), Mapping):
            lines.append("ratings: " + ", ".join(f"{k} {v}" for k, v in list(flat[key].items())[:4]))
            break
    for key in ("review_count", "tags"):
        if flat.get(key):
            value = flat[key]
            lines.append(f"{key.replace('_', ' ')}: {', '.join(map(str, value)) if isinstance(value, list) else value}")
    return "\n".join(lines)


# ---- the spoken reply ------------------------------------------------------------------------------------------

LIMIT = 50
"""Seed §2.2: at most 50 字 a reply. Counted as Chinese counts 字: a Chinese character is one, and so is a run of
Latin letters or digits (a word), so the limit means the same in both languages."""
_UNIT = re.compile(r"[\u4e00-\u9fff]|[A-Za-z0-9]+(?:['.\-][A-Za-z0-9]+)*")
_SENTENCE = re.compile(r"(?<=[。！？!?])|(?<=\.)\s+")
_CLAUSE = re.compile(r"(?<=[，,；;：:])")
_ACTION = re.compile(
    r"正在(?:为你)?(?:筛选|查找|搜索|加载|打开|推荐)|已(?:经)?(?:为你)?(?:筛选|更新|打开|推荐|跳转|加载|查询)|(?:为你|给你)(?:筛选|推荐|打开)|"
    r"帮你(?:筛选|打开|查)了|跳转到|排行榜已|"
    r"\bI(?:'ve|\s+have)?\s+(?:updated|opened|filtered|loaded|searched|found|recommended|pulled\s+up)\b|"
    r"\b(?:I'm|I\s+am)\s+(?:updating|opening|filtering|loading|searching|showing)\b",
    re.IGNORECASE,
)
"""Words saying the agent did something on the page: only code, which did it, says so."""


def spoken_length(text: str) -> int:
    """The reply's length in 字 (see `LIMIT`)."""
    return len(_UNIT.findall(text))


def fit(text: str, limit: int = LIMIT) -> str:
    """`text` within `limit` 字: whole sentences while they fit, else whole clauses of the first, else cut."""
    text = " ".join(text.split())
    if spoken_length(text) <= limit:
        return text
    kept = ""
    for sentence in (s.strip() for s in _SENTENCE.split(text) if s.strip()):
        trial = f"{kept}{'' if not kept or has_chinese(kept[-1]) else ' '}{sentence}"
        if spoken_length(trial) > limit:
            break
        kept = trial
    if kept:
        return kept
    for clause in (c for c in _CLAUSE.split(text) if c.strip()):
        if spoken_length(kept + clause) > limit:
            break
        kept += clause
    if kept:
        return kept.rstrip("，,；;：: ") + ("。" if has_chinese(kept) else ".")
    for count, m in enumerate(_UNIT.finditer(text), start=1):
        if count >= limit:
            return text[: m.start()].rstrip() + "…"
    return text


def whole_sentences(text: str) -> str:
    """`text` without a last sentence cut short (a bounded answer may stop mid-sentence), when a whole one is left."""
    text = text.strip()
    if not text or text[-1] in "。！？!?.…":
        return text
    ends = [m.end() for m in re.finditer(r"[。！？!?]|\.(?=\s|$)", text)]
    return text[: ends[-1]] if ends else text


def language_fits(text: str, lang: str) -> bool:
    """Whether the reply is in `lang`: a Chinese one mostly Chinese characters; an English one has few (a name)."""
    cjk = han_count(text)
    latin = len(re.findall(r"[A-Za-z]+", text))
    if lang.startswith("zh"):
        return cjk > 0 and cjk >= latin
    return latin > 0 and cjk <= 8


def claims_action(text: str) -> str | None:
    """The words of `text` claiming an action on the page, or None."""
    m = _ACTION.search(text)
    return m.group(0) if m else None


def check_model_words(text: str, task: DescribeTask, lang: str) -> None:
    """The model's words for `task`, held to the reply's rules: raise ValueError saying what to fix."""
    if spoken_length(text) > LIMIT:
        raise ValueError(
            f"Too long ({spoken_length(text)} 字): say it in at most {LIMIT} 字, one or two short sentences."
        )
    if not language_fits(text, lang):
        raise ValueError(f"Write the reply in {t('advisor.model.language', lang)}.")
    if (claim := claims_action(text)) is not None:
        raise ValueError(f'Do not say "{claim}": you did nothing on the page. Only talk.')
    if task.kind == "describe":
        if not any(name in text for name in task.names):
            raise ValueError(f"Name the advisor ({', '.join(task.names)}).")
        areas = [
            name
            for name, others in DIRECTIONS.items()
            for said in (name, *others)
            if said in text and name not in task.facts and said not in task.facts
        ]
        if areas:
            raise ValueError(
                f"Use only the research areas in the facts; {', '.join(dict.fromkeys(areas))} is not one of them."
            )
        numbers = set(re.findall(r"\d+(?:\.\d+)?", task.facts))
        invented = [n for n in re.findall(r"\d+(?:\.\d+)?", text) if n not in numbers]
        if invented:
            raise ValueError(f"Use only the numbers in the facts; {', '.join(invented)} is not one of them.")


def answer_text(answer: Any) -> str:
    """A question's answer as text (the first answer; a list of choices joined)."""
    first = answer[0] if isinstance(answer, list) and answer else answer
    return ", ".join(map(str, first)) if isinstance(first, list) else str(first or "")


def chosen_from(answer: str, slot: str, options: Sequence[tuple[str, str]]) -> tuple[str, str] | None:
    """Which option a free-text answer names: an option's label or value said in it, or (for a school or major) a
    name the words resolve to on their own; None when they name none."""
    said = answer.strip()
    for value, label in options:
        if said and (said in (value, label) or value in said or label in said):
            return slot, value
    if slot in ("school", "major"):
        book = schools() if slot == "school" else majors()
        result = book.resolve(said)
        if isinstance(result, Match):
            return slot, result.name
        narrowed = book.narrow(Ambiguous(tuple(v for v, _ in options), said), said)
        if isinstance(narrowed, Match):
            return slot, narrowed.name  # 上海那个 → the one in 上海
        if isinstance(result, Ambiguous):
            inside = [c for c in result.candidates if c in {v for v, _ in options}]
            if len(inside) == 1:
                return slot, inside[0]
        for value, _ in options:  # 上海的 → 上海交通大学
            core = re.sub(r"[的那个一所吧呢啊。，,.!！\s]", "", said)
            if len(core) >= 2 and core in value:
                matching = [v for v, _ in options if core in v]
                if len(matching) == 1:
                    return slot, matching[0]
    return None


Describe = Callable[[DescribeTask, str], str]
"""Given the model's task and the language: the model's checked words (raising when it has none fit to say)."""
