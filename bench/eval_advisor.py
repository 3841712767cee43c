"""The advisor agent on its utterances, each checked in code: form extraction, name normalisation (aliases, pinyin,
typos), ambiguity (a question with the candidates), corrections, references with page contexts, chit-chat, the
empty list and unknown schools, in Chinese and English.

Each case is a short conversation on a fresh store (the real runtime, the real agent, `--model local` the embedded
model or `--model scripted`); each step is one utterance with what must come of it: the seed's tool calls (names,
in order), the form afterwards (the fields given), a question opened (with an option that must be among its
options, then answered), the reply (exact, or containing), and whether the turn is settled by code alone. Timings
per step: message → reply (the run settled, or the question opened), split into code-settled and model turns. The
runtime's reply checks that fired are counted from the runs' `reply_checked` events: in how many utterances each
fired, in how many code's reply was shown, and how many of those were right.

The look-ups are advisor-site's (`_lookups`, over the store's data) when that module is installed and its data is
there (`--lookups site`), else a small synthetic set built here (`--lookups synthetic`): the results file says which.
The page context of a step is the page the agent's own tool calls opened (what a page would post back), unless the
step gives one (an empty list, an advisor selected).

    .venv/bin/python bench/eval_advisor.py --model scripted          # the code paths (results/advisor_eval.scripted.json)
    flock /tmp/consulta-model.lock .venv/bin/python bench/eval_advisor.py --model local --only zh_seed_flow
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import reply_check_figures, reply_checks_of, source_version  # noqa: E402
from consulta.apps.advisor import AdvisorTurns, SiteLookupError, SiteLookups, agent_over, session_of, spoken_length  # noqa: E402
from consulta.runtime import RunStatus, Runtime, Store  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent

EMPTY = "empty"
"""A step's page: the ranking page with no advisor on it."""


@dataclass(frozen=True)
class Step:
    words: str
    tools: tuple[str, ...] | None = None
    form: Mapping[str, Any] = field(default_factory=dict)
    ask: str | None = None  # an option that must be offered; the question is answered with it
    answer: str | None = None  # answer with this instead (free text)
    voice: str | None = None
    voice_has: tuple[str, ...] = ()
    page: str | Mapping[str, Any] | None = None  # EMPTY, "select:<rank>", or a page context
    model: bool = False  # the turn needs the model's words
    lang: str | None = None

    def language(self) -> str:
        return self.lang or ("en" if self.words.isascii() else "zh-CN")


@dataclass(frozen=True)
class Case:
    id: str
    steps: tuple[Step, ...]
    category: str


S = Step
C = Case
PKU_CS = {"school": "北京大学", "major": "计算机科学与技术"}

CASES: tuple[Case, ...] = (
    C(
        "zh_seed_flow",
        (
            S("我想考北京大学计算机系", tools=("update_form", "update_ranking"), form=PKU_CS, voice_has=("北京大学",)),
            S(
                "我想做机器学习，希望导师温和一点",
                tools=("update_form", "recommend_advisors"),
                form={"research_direction": "机器学习", "preferences.personality": "温和"},
                voice_has=("推荐",),
            ),
            S("第一个导师怎么样？", tools=(), model=True),
            S("我想看看他的详细信息", tools=("get_advisor_detail",)),
            S("他的学生评价怎么样？", tools=("get_advisor_reviews",)),
        ),
        "flow",
    ),
    C(
        "en_seed_flow",
        (
            S(
                "I want to study computer science at Peking University",
                tools=("update_form", "update_ranking"),
                form=PKU_CS,
            ),
            S(
                "I'd like machine learning and a gentle advisor",
                tools=("update_form", "recommend_advisors"),
                form={"preferences.personality": "温和"},
            ),
            S("How is the first one?", tools=(), model=True),
            S("Show me his details", tools=("get_advisor_detail",)),
        ),
        "flow",
    ),
    C("zh_alias_pinyin", (S("beida jisuanji", tools=("update_form", "update_ranking"), form=PKU_CS),), "names"),
    C("zh_initials", (S("bjdx 的计算机", tools=("update_form", "update_ranking"), form=PKU_CS),), "names"),
    C(
        "zh_homophone",
        (
            S(
                "我想考清化大学软件工程",
                tools=("update_form", "update_ranking"),
                form={"school": "清华大学", "major": "软件工程"},
            ),
        ),
        "names",
    ),
    C(
        "en_typo",
        (
            S(
                "Pekng University, maths",
                tools=("update_form", "update_ranking"),
                form={"school": "北京大学", "major": "数学"},
            ),
        ),
        "names",
    ),
    C(
        "zh_school_only",
        (
            S(
                "我想考复旦",
                tools=("update_form",),
                form={"school": "复旦大学", "major": None},
                voice="好的，复旦大学。你想考哪个专业呢？",
            ),
        ),
        "form",
    ),
    C(
        "zh_major_only",
        (
            S(
                "我想读计算机",
                tools=("update_form",),
                form={"school": None, "major": "计算机科学与技术"},
                voice="计算机科学与技术专业，请问是哪个学校的呢？",
            ),
        ),
        "form",
    ),
    C(
        "zh_nothing",
        (S("我想考研", tools=(), form={"school": None}, voice="好的，请问你想考哪个学校的哪个专业呢？"),),
        "form",
    ),
    C(
        "zh_greeting",
        (S("你好", tools=(), voice="你好！我是导师推荐助手。请告诉我你想考哪个学校的哪个专业？"),),
        "form",
    ),
    C(
        "zh_two_turns",
        (
            S("我想考浙大", tools=("update_form",), form={"school": "浙江大学"}),
            S(
                "控制专业",
                tools=("update_form", "update_ranking"),
                form={"school": "浙江大学", "major": "控制科学与工程"},
            ),
        ),
        "form",
    ),
    C(
        "zh_prefs_before_names",
        (
            S(
                "我喜欢经费充足、偏理论的导师",
                tools=("update_form",),
                form={"preferences.funding": "充足", "preferences.research_style": "理论型"},
            ),
            S(
                "南大的物理",
                tools=("update_form", "update_ranking", "recommend_advisors"),
                form={"school": "南京大学", "major": "物理学"},
            ),
        ),
        "form",
    ),
    C(
        "en_prefs",
        (
            S("Zhejiang University, software engineering", tools=("update_form", "update_ranking")),
            S(
                "someone not too strict, working with industry",
                tools=("update_form", "recommend_advisors"),
                form={"preferences.personality": "温和", "preferences.research_style": "产业型"},
            ),
        ),
        "form",
    ),
    C(
        "zh_repeat_no_retrigger",
        (
            S("北大计算机", tools=("update_form", "update_ranking")),
            S("对，北京大学计算机系", tools=()),
            S("导师温和一点", tools=("update_form", "recommend_advisors")),
            S("温和的导师", tools=()),
        ),
        "triggers",
    ),
    C(
        "zh_correction",
        (
            S("我想考北大计算机", tools=("update_form", "update_ranking")),
            S(
                "不对，是清华",
                tools=("update_form", "update_ranking"),
                form={"school": "清华大学", "major": "计算机科学与技术"},
            ),
        ),
        "corrections",
    ),
    C(
        "en_correction",
        (
            S("Peking University computer science", tools=("update_form", "update_ranking")),
            S("no, Tsinghua", tools=("update_form", "update_ranking"), form={"school": "清华大学"}),
        ),
        "corrections",
    ),
    C(
        "zh_correction_major",
        (
            S("清华计算机", tools=("update_form", "update_ranking")),
            S(
                "说错了，是软件工程",
                tools=("update_form", "update_ranking"),
                form={"major": "软件工程", "school": "清华大学"},
            ),
        ),
        "corrections",
    ),
    C(
        "zh_empty_turn_keeps",
        (
            S("复旦数学", tools=("update_form", "update_ranking")),
            S("嗯嗯好的", tools=(), form={"school": "复旦大学", "major": "数学"}),
        ),
        "corrections",
    ),
    C(
        "zh_ambiguous_jiaoda",
        (
            S(
                "交大的计算机",
                ask="西安交通大学",
                tools=("update_form", "update_ranking"),
                form={"school": "西安交通大学"},
            ),
        ),
        "ambiguity",
    ),
    C(
        "zh_ambiguous_huashi",
        (
            S(
                "华师心理学",
                ask="华东师范大学",
                answer="上海那个",
                tools=("update_form", "update_ranking"),
                form={"school": "华东师范大学", "major": "心理学"},
            ),
        ),
        "ambiguity",
    ),
    C(
        "zh_ambiguous_dongda",
        (S("东大", ask="东北大学", tools=("update_form",), form={"school": "东北大学"}),),
        "ambiguity",
    ),
    C(
        "zh_city_narrows",
        (S("西安的交大，软件工程", tools=("update_form", "update_ranking"), form={"school": "西安交通大学"}),),
        "ambiguity",
    ),
    C(
        "zh_two_schools",
        (
            S(
                "北大还是清华好？计算机",
                ask="清华大学",
                tools=("update_form", "update_ranking"),
                form={"school": "清华大学"},
            ),
        ),
        "ambiguity",
    ),
    C(
        "zh_ambiguous_major",
        (S("北大的经济", ask="应用经济学", tools=("update_form", "update_ranking"), form={"major": "应用经济学"}),),
        "ambiguity",
    ),
    C(
        "en_ambiguous",
        (
            S(
                "Jiaotong, computer science",
                ask="Shanghai Jiao Tong University",
                tools=("update_form", "update_ranking"),
                form={"school": "上海交通大学"},
            ),
        ),
        "ambiguity",
    ),
    C(
        "zh_unknown_school",
        (S("我想考北京邮电大学", ask="北京大学", tools=("update_form",), form={"school": "北京大学"}),),
        "unknown",
    ),
    C(
        "en_unknown_school",
        (S("I want to go to Harvard University", ask="*", answer="none of these", tools=(), form={"school": None}),),
        "unknown",
    ),
    C(
        "zh_refs_ordinal",
        (
            S("北大计算机", tools=("update_form", "update_ranking")),
            S("第二个导师的详细信息", tools=("get_advisor_detail",)),
        ),
        "references",
    ),
    C(
        "zh_refs_selected",
        (
            S("北大计算机", tools=("update_form", "update_ranking")),
            S("她的评价怎么样", page="select:3", tools=("get_advisor_reviews",)),
        ),
        "references",
    ),
    C(
        "en_refs_last",
        (
            S("Tsinghua, computer science", tools=("update_form", "update_ranking")),
            S("open the last one", tools=("get_advisor_detail",)),
        ),
        "references",
    ),
    C(
        "zh_refs_unclear",
        (
            S("北大计算机", tools=("update_form", "update_ranking")),
            S("这个导师怎么样", ask="*", model=True, tools=()),
        ),
        "references",
    ),
    C(
        "zh_list",
        (
            S("北大计算机", tools=("update_form", "update_ranking")),
            S("有哪些导师？", tools=(), voice_has=("排名第一",)),
        ),
        "references",
    ),
    C(
        "zh_empty_list",
        (S("第一个导师怎么样？", page=EMPTY, tools=(), voice="目前还没有导师列表，请先告诉我你的学校和专业。"),),
        "empty",
    ),
    C(
        "en_empty_list",
        (
            S(
                "How is the first one?",
                page=EMPTY,
                tools=(),
                voice="There is no advisor list yet. Tell me your school and major first.",
            ),
        ),
        "empty",
    ),
    C("zh_chitchat", (S("考研压力好大啊，怎么办？", tools=(), model=True),), "chat"),
    C("zh_who", (S("你是谁？", tools=(), voice="我是导师推荐助手。告诉我学校和专业，我帮你找导师。"),), "chat"),
    C("en_chitchat", (S("What makes a good advisor?", tools=(), model=True),), "chat"),
    C("zh_thanks", (S("谢谢", tools=(), voice="不客气！还有什么想了解的吗？"),), "chat"),
    C(
        "zh_new_conversation",
        (
            S("北大计算机", tools=("update_form", "update_ranking")),
            S("新对话", tools=(), form={"school": None, "major": None}),
        ),
        "form",
    ),
)


class Synthetic:
    """Synthetic look-ups (no real person): five advisors per school and major, deterministic."""

    SURNAMES = "张李王赵刘陈杨黄周吴"
    DIRECTIONS = ("机器学习", "计算机视觉", "自然语言处理", "数据库", "量子计算")

    def __init__(self) -> None:
        self.fail = False

    def _advisors(self, school: str, major: str) -> list[dict[str, Any]]:
        seed = sum(map(ord, school + major))
        return [
            {
                "id": f"{seed % 1000:03d}{i}",
                "name": self.SURNAMES[(seed + i) % 10] + "老师" + "甲乙丙丁戊"[i],
                "title": ("教授", "副教授")[i % 2],
                "rating": round(4.8 - i * 0.2, 1),
                "research_directions": [self.DIRECTIONS[(seed + i) % 5]],
            }
            for i in range(5)
        ]

    def update_ranking(self, *, school: str, major: str) -> Mapping[str, Any]:
        return {"advisors": self._advisors(school, major)}

    def recommend_advisors(self, *, school: str, major: str, preferences: Mapping[str, Any]) -> Mapping[str, Any]:
        return {"advisors": self._advisors(school, major)[:3]}

    def _find(self, advisor_id: str) -> dict[str, Any]:
        raise SiteLookupError(f"no advisor {advisor_id}")

    def get_advisor_detail(self, *, advisor_id: str) -> Mapping[str, Any]:
        return {
            "id": advisor_id,
            "name": "老师",
            "title": "教授",
            "rating": 4.6,
            "research_directions": ["机器学习"],
            "review_count": 8,
        }

    def get_advisor_reviews(self, *, advisor_id: str) -> Mapping[str, Any]:
        return {"reviews": [{"overall": 4.5}, {"overall": 4.0}, {"overall": 5.0}]}


class PagePoster:
    """The look-ups with the page context a step posts (else none: the agent reads the page its calls opened)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.page: dict[str, Any] | None = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def page_context(self, principal: str) -> dict[str, Any] | None:
        return self.page

    def directions(self) -> tuple[str, ...]:
        reader = getattr(self.inner, "directions", None)
        return reader() if callable(reader) else ()


def form_value(form: Mapping[str, Any], path: str) -> Any:
    value: Any = form
    for part in path.split("."):
        value = value.get(part) if isinstance(value, Mapping) else None
    return value


async def run_case(case: Case, *, model_spec: str, resolve: Any, lookups_kind: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(f"sqlite:///{tmp}/consulta.db")
        inner = SiteLookups(store.engine) if lookups_kind == "site" else Synthetic()
        lookups = PagePoster(inner)
        turns = AdvisorTurns(store=store, lookups=lookups, resolve_model=resolve)
        agent = agent_over(turns)
        runtime = Runtime(store=store, resolve_model=resolve, ask_policy="defer")
        steps = []
        try:
            for step in case.steps:
                steps.append(
                    await run_step(
                        step, runtime=runtime, agent=agent, store=store, lookups=lookups, model_spec=model_spec
                    )
                )
        finally:
            await runtime.aclose()
            store.close()
    return {"id": case.id, "category": case.category, "right": all(s["right"] for s in steps), "steps": steps}


async def run_step(
    step: Step, *, runtime: Runtime, agent: Any, store: Store, lookups: PagePoster, model_spec: str
) -> dict[str, Any]:
    principal = "eval"
    session = session_of(store, principal)
    lookups.page = _page(step.page, session.page_context)
    problems: list[str] = []
    started = time.perf_counter()
    run = await runtime.run(agent, step.words, model=model_spec, lang=step.language(), principal=principal)
    asked_s = None
    if step.ask is not None:
        asks = store.list_asks(run_id=run.id)
        asked_s = time.perf_counter() - started
        if not asks:
            problems.append("no question opened")
        else:
            options = asks[0].payload["questions"][0]["options"]
            if step.ask != "*" and step.ask not in options:
                problems.append(f"{step.ask!r} not among the options {options}")
            reply = step.answer or (step.ask if step.ask != "*" else options[0])
            runtime.answer(asks[0].id, [reply])
            run = await runtime.settled(run.id)
    elif store.list_asks(run_id=run.id):
        problems.append(
            "a question was opened: "
            + json.dumps(store.list_asks(run_id=run.id)[0].payload["questions"][0]["options"], ensure_ascii=False)
        )
    elapsed = time.perf_counter() - started
    output: dict[str, Any] = {}
    if run.status != RunStatus.finished or run.output is None:
        problems.append(f"run {run.status}: {run.error}")
    else:
        output = json.loads(run.output)
        tools = tuple(c["tool"] for c in output.get("tool_calls", []))
        if step.tools is not None and tools != step.tools:
            problems.append(f"tools {tools} != {step.tools}")
        voice = str(output.get("voice_response", ""))
        if spoken_length(voice) > 50 or not voice:
            problems.append(f"voice length {spoken_length(voice)}")
        if step.voice is not None and voice != step.voice:
            problems.append(f"voice {voice!r} != {step.voice!r}")
        for part in step.voice_has:
            if part not in voice:
                problems.append(f"voice lacks {part!r}")
    form = session_of(store, principal).user_form.model_dump()
    for path, want in step.form.items():
        if form_value(form, path) != want:
            problems.append(f"form {path}={form_value(form, path)!r} != {want!r}")
    return {
        "words": step.words,
        "right": not problems,
        "problems": problems,
        "output": output,
        "form": form,
        "reply_checks": reply_checks_of(store, [run.id]),
        "seconds": round(elapsed, 3),
        "to_question_s": round(asked_s, 3) if asked_s is not None else None,
        "kind": "model" if step.model else "code",
    }


def _page(spec: str | Mapping[str, Any] | None, current: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if spec is None:
        return None
    if spec == EMPTY:
        return {"current_page": "ranking", "visible_advisors": [], "selected_advisor": None, "ranking_filters": {}}
    if isinstance(spec, str) and spec.startswith("select:"):
        page = dict(current or {})
        shown = page.get("visible_advisors") or []
        rank = int(spec.split(":", 1)[1])
        chosen = shown[rank - 1] if len(shown) >= rank else None
        page.update(
            current_page="detail", selected_advisor={"id": chosen["id"], "name": chosen["name"]} if chosen else None
        )
        return page
    return dict(spec)  # type: ignore[arg-type]


def _site_available() -> bool:
    try:
        from consulta.apps.advisor import _lookups  # type: ignore[attr-defined]  # noqa: F401
    except ImportError:
        return False
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", choices=("local", "scripted"), default="local")
    parser.add_argument("--lookups", choices=("site", "synthetic"), default=None, help="default: site when installed")
    parser.add_argument("--only", action="append", default=[])
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    lookups_kind = args.lookups or ("site" if _site_available() else "synthetic")
    if args.model == "local":
        from consulta.models import resolve_model

        spec = "local"
        model = resolve_model("local")
        resolve = lambda _spec: model  # noqa: E731
    else:
        from consulta.models import ScriptedModel

        spec = "scripted"
        scripted = ScriptedModel([{"tool_calls": [{"name": "final_result", "args": {"voice_response": "好的。"}}]}])
        resolve = lambda _spec: scripted  # noqa: E731
    cases = [c for c in CASES if not args.only or c.id in args.only]
    results = []
    for case in cases:
        result = asyncio.run(run_case(case, model_spec=spec, resolve=resolve, lookups_kind=lookups_kind))
        results.append(result)
        mark = "ok  " if result["right"] else "MISS"
        print(f"{mark} {case.id:<26} " + " | ".join(f"{s['seconds']:.2f}s" for s in result["steps"]))
        for s in result["steps"]:
            for problem in s["problems"]:
                print(f"       {s['words']}: {problem}")
    steps = [s for r in results for s in r["steps"]]
    code = [s["seconds"] for s in steps if s["kind"] == "code" and s["to_question_s"] is None]
    questions = [s["to_question_s"] for s in steps if s["to_question_s"] is not None]
    model_turns = [s["seconds"] for s in steps if s["kind"] == "model"]
    figures = {
        "model": args.model,
        "lookups": lookups_kind,
        "cases": len(results),
        "utterances": len(steps),
        "utterances_right": round(sum(s["right"] for s in steps) / max(1, len(steps)), 4),
        "cases_right": round(sum(r["right"] for r in results) / max(1, len(results)), 4),
        "median_code_turn_s": round(statistics.median(code), 3) if code else None,
        "median_to_question_s": round(statistics.median(questions), 3) if questions else None,
        "median_model_turn_s": round(statistics.median(model_turns), 3) if model_turns else None,
        **reply_check_figures([(s["reply_checks"], s["right"]) for s in steps]),
    }
    print(json.dumps(figures, ensure_ascii=False))
    name = "advisor_eval" + ("" if args.model == "local" else f".{args.model}") + (".partial" if args.only else "")
    out = args.out or ROOT / "bench" / "results" / f"{name}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    draft = out.with_suffix(".json.tmp")
    draft.write_text(
        json.dumps({"source": source_version(), "figures": figures, "cases": results}, ensure_ascii=False, indent=1),
        encoding="utf-8",
    )
    draft.replace(out)


if __name__ == "__main__":
    main()
