"""The tutor end to end on the embedded model: 33 student turns (six on public tables from scikit-learn's package data) (zh-CN and en, about half each) through the
orchestrator (consult_expert, then an instruction packet checked against the binding rules) and the conversational
assistant, as `consulta chat tutor` runs them, each in a fresh session with its uploads and the run's language the
turn's. Each turn is checked in code:

- finished: the orchestrator's run finished;
- packet_accepted: an instruction packet was accepted; packet_task: it names the task the student asked about;
- expected_consulted: the expert answered with the expected output type (or, where none is needed, nothing was
  asked beyond the inspection of an upload);
- expected_rule: exactly the expected binding rules fired (none, where none should);
- assistant_replied: the assistant's run finished with a reply;
- reply_consistent: the reply holds to the packet, judged by this file's own lexicon (English and Chinese), not the
  runtime's: on a blocked packet (blocked status, or the task's dataset judged unsuitable) it never says the student
  may start; on a suitable dataset it never says they cannot or need another one; where the evidence was not
  enough it never says the task is done; and it holds no code block and no task's solution (the rules ask for
  hints, never solutions) the student did not write themselves; and it reads as a tutor's words to this student:
  nothing meant for the model (retry prompts, "Your response should be", the packet's field names, an agent's or
  tool's id), the student's language (a Chinese turn answered in English sentences, an English one in Chinese),
  the student addressed rather than spoken of ("the student", "提醒学生"), not spoken as ("好的，老师。我完成了"),
  and not the student's own words said back.

Figures per category (turns right / total, median seconds) and per language are printed at the end and saved with
every reply in the JSON. An evaluation of the model against the app, not a speed benchmark.

    .venv/bin/python bench/eval_tutor.py [--model local] [--only NAME ...] [--limit N]
    .venv/bin/python bench/eval_tutor.py --cases bench/data/heldout/tutor_turns.json   # another file's turns (load_turns)
    .venv/bin/python bench/eval_tutor.py --via web --limit 6   # through the web page's API (bench/_web.py), uploads too
"""

from __future__ import annotations

import argparse
import asyncio
import difflib
import json
import os
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import chain, zip_longest
from pathlib import Path
from typing import Any, Literal

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _web  # noqa: E402
from _common import read_cases, reply_checks_of, source_version  # noqa: E402
from consulta.apps import AppEnv, tutor  # noqa: E402
from consulta.config import Settings  # noqa: E402
from consulta.models import resolve_model  # noqa: E402
from consulta.runtime import ConsultationRecord, RunRecord, RunStatus, Runtime, Store  # noqa: E402

# ---- the students' files ------------------------------------------------------------------------------------------

_CITIES = ["Paris", "Rome", "Oslo", "Lima"]


def _people(rows: int, *, sep: str = ",", age: Any = lambda i: 20 + i % 30) -> str:
    lines = [sep.join(("name", "age", "city"))] + [
        sep.join((f"P{i}", str(age(i)), _CITIES[i % 4])) for i in range(rows)
    ]
    return "\n".join(lines) + "\n"


PEOPLE = _people(120)
"""Fits every task: name, age (numbers), city; 120 rows, no duplicates, no gaps. Mean age 34.5."""
FEW_ROWS = _people(40)
"""Right columns, 40 rows: too few for task_2_1 (100)."""
AGE_TEXT = _people(120, age=lambda i: f"{20 + i % 30} yrs" if i % 3 == 0 else 20 + i % 30)
"""age holds text ("21 yrs"): no task that needs a numeric age can run on it."""
SEMICOLON = _people(120, sep=";")
"""A spreadsheet export with `;` between fields: pandas reads one column named "name;age;city"."""
INDEXED = "".join(f"{i - 1 if i else ''},{line}\n" for i, line in enumerate(PEOPLE.splitlines()))
"""Saved with pandas' index (`to_csv` without `index=False`): an extra unnamed first column; otherwise fine."""
GAPS = _people(120, age=lambda i: "" if i % 10 == 0 else 20 + i % 30)
"""12 empty ages: usable for task_2_1, with a data-quality warning."""
CHINESE_HEADERS = PEOPLE.replace("name,age,city", "姓名,年龄,城市", 1)
"""The right data under Chinese column names."""
SMALL = "name,score\n" + "\n".join(f"S{i},{50 + i}" for i in range(60)) + "\n"
"""60 rows, no age, no city."""
NO_AGE = (
    "name,city,country,occupation\n"
    + "\n".join(
        f"Person {i},{_CITIES[i % 4]},{['France', 'Italy', 'Norway', 'Peru'][i % 4]},{['teacher', 'nurse', 'driver'][i % 3]}"
        for i in range(150)
    )
    + "\n"
)
"""A public-style dataset of 150 people without an `age` column."""
CITIES = (
    "city,country\n"
    + "\n".join(
        f"{c},{k}"
        for c, k in [
            ("Paris", "France"),
            ("Rome", "Italy"),
            ("Oslo", "Norway"),
            ("Lima", "Peru"),
            ("Berlin", "Germany"),
            ("Madrid", "Spain"),
            ("Tokyo", "Japan"),
            ("Cairo", "Egypt"),
            ("Quito", "Ecuador"),
            ("Hanoi", "Vietnam"),
            ("Dakar", "Senegal"),
            ("Perth", "Australia"),
        ]
    )
    + "\n"
)


def _public(name: str) -> str:
    """A public table shipped inside scikit-learn (`sklearn/datasets/data`, BSD-3-Clause; the data are the UCI
    Iris, Wine and Breast Cancer Wisconsin sets and Linnerud's exercise table): files nobody on the team wrote."""
    from importlib import resources

    return resources.files("sklearn.datasets.data").joinpath(name).read_text(encoding="utf-8")


IRIS, WINE, LINNERUD, BREAST_CANCER = (
    _public(n) for n in ("iris.csv", "wine_data.csv", "linnerud_exercise.csv", "breast_cancer.csv")
)
"""As scikit-learn ships them: a first line of counts and class names instead of column names (iris, wine, breast
cancer), and Linnerud's space-separated table: odd files, none with the name, age and city the tasks need."""

# ---- the turns ----------------------------------------------------------------------------------------------------

Category = Literal["can_i_start", "odd_file", "error", "concept", "claim_done", "chit_chat", "solution_request"]


@dataclass(frozen=True)
class Turn:
    name: str
    category: Category
    lang: Literal["en", "zh-CN"]
    files: tuple[tuple[str, str], ...]
    student: str
    task: str | None
    """The task the packet should name (None: the student named none)."""
    consult: str | None
    """The output type an expert should have answered with; None: no consultation is needed beyond the inspection
    of an upload (seed 000: "don't over-consult; simple questions are the assistant's")."""
    rules: frozenset[str] = frozenset()
    """The binding rules that should fire, exactly."""


def _turn(
    name: str,
    category: Category,
    lang: Literal["en", "zh-CN"],
    files: dict[str, str],
    student: str,
    task: str | None,
    consult: str | None,
    *rules: str,
) -> Turn:
    return Turn(name, category, lang, tuple(files.items()), student, task, consult, frozenset(rules))


UNSUITABLE, HINTS, NOT_ENOUGH = "dataset_not_suitable", "no_solution_in_hints", "evidence_not_enough"
JUDGE, DIAGNOSE, EXPLAIN, VALIDATE = (
    "suitability_judgment",
    "error_diagnosis",
    "concept_explanation",
    "validation_report",
)
PEOPLE_AND_CITIES = {"people.csv": PEOPLE, "cities.csv": CITIES}

TURNS = [
    # can I start: suitable, too few rows, columns missing, age held as text
    _turn(
        "start_ok_en",
        "can_i_start",
        "en",
        {"people.csv": PEOPLE},
        "I uploaded people.csv. Can I start task_2_1?",
        "task_2_1",
        JUDGE,
    ),
    _turn(
        "start_ok_zh",
        "can_i_start",
        "zh-CN",
        {"classmates.csv": PEOPLE},
        "我上传了 classmates.csv，可以开始做 task_2_4 吗？",
        "task_2_4",
        JUDGE,
    ),
    _turn(
        "few_rows_en",
        "can_i_start",
        "en",
        {"survey.csv": FEW_ROWS},
        "Here is survey.csv from my class survey (40 people). Is it good enough for task_2_1?",
        "task_2_1",
        JUDGE,
        UNSUITABLE,
    ),
    _turn(
        "small_zh",
        "can_i_start",
        "zh-CN",
        {"student_data.csv": SMALL},
        "我上传了数据，可以开始task_2_1吗？",
        "task_2_1",
        JUDGE,
        UNSUITABLE,
    ),
    _turn(
        "no_age_en",
        "can_i_start",
        "en",
        {"public_people.csv": NO_AGE},
        "I found a public dataset online, public_people.csv. Can I use it for task_2_2?",
        "task_2_2",
        JUDGE,
        UNSUITABLE,
    ),
    _turn(
        "no_age_zh",
        "can_i_start",
        "zh-CN",
        {"public_people.csv": NO_AGE},
        "我从网上下载了一个公开数据集 public_people.csv，能用它做 task_2_1 吗？",
        "task_2_1",
        JUDGE,
        UNSUITABLE,
    ),
    _turn(
        "age_text_en",
        "can_i_start",
        "en",
        {"ages.csv": AGE_TEXT},
        "Can I start task_2_4 with ages.csv?",
        "task_2_4",
        JUDGE,
        UNSUITABLE,
    ),
    # odd files a front end accepts (an empty file or one without rows is refused at upload, before any turn)
    _turn(
        "index_column_en",
        "odd_file",
        "en",
        {"export.csv": INDEXED},
        "I saved export.csv from pandas and there's a weird unnamed first column. Can I still start task_2_1?",
        "task_2_1",
        JUDGE,
    ),
    _turn(
        "gaps_en",
        "odd_file",
        "en",
        {"people.csv": GAPS},
        "Some ages in people.csv are blank. Can I start task_2_1 anyway?",
        "task_2_1",
        JUDGE,
        "dataset_warnings",
    ),
    _turn(
        "chinese_headers_zh",
        "odd_file",
        "zh-CN",
        {"同学.csv": CHINESE_HEADERS},
        "我的表头是中文的（姓名、年龄、城市），可以开始 task_2_1 吗？",
        "task_2_1",
        JUDGE,
        UNSUITABLE,
    ),
    _turn(
        "semicolon_zh",
        "odd_file",
        "zh-CN",
        {"people_eu.csv": SEMICOLON},
        "这是我用 Excel 导出的 people_eu.csv，能开始 task_2_1 吗？",
        "task_2_1",
        JUDGE,
        UNSUITABLE,
    ),
    # public tables from scikit-learn's package data, as a student would download them
    _turn(
        "iris_en",
        "odd_file",
        "en",
        {"iris.csv": IRIS},
        "I downloaded the iris table that ships with scikit-learn (iris.csv). Can I use it for task_2_1?",
        "task_2_1",
        JUDGE,
        UNSUITABLE,
    ),
    _turn(
        "iris_zh",
        "odd_file",
        "zh-CN",
        {"iris.csv": IRIS},
        "我用的是 scikit-learn 自带的 iris.csv，可以开始 task_2_4 吗？",
        "task_2_4",
        JUDGE,
        UNSUITABLE,
    ),
    _turn(
        "wine_en",
        "can_i_start",
        "en",
        {"wine_data.csv": WINE},
        "Can I start task_2_2 with wine_data.csv?",
        "task_2_2",
        JUDGE,
        UNSUITABLE,
    ),
    _turn(
        "linnerud_zh",
        "odd_file",
        "zh-CN",
        {"linnerud_exercise.csv": LINNERUD},
        "这是 linnerud_exercise.csv（体能测试数据），能用来做 task_2_1 吗？",
        "task_2_1",
        JUDGE,
        UNSUITABLE,
    ),
    _turn(
        "breast_cancer_en",
        "can_i_start",
        "en",
        {"breast_cancer.csv": BREAST_CANCER},
        "Is breast_cancer.csv good enough for task_2_1? It has 569 rows.",
        "task_2_1",
        JUDGE,
        UNSUITABLE,
    ),
    _turn(
        "wine_error_zh",
        "error",
        "zh-CN",
        {"wine_data.csv": WINE},
        "task_2_2 里我对 wine_data.csv 写了 df['age'].mean()，报错 KeyError: 'age'，为什么？",
        "task_2_2",
        DIAGNOSE,
        HINTS,
        UNSUITABLE,
    ),
    # error diagnosis: KeyError, dtype, merge
    _turn(
        "key_error_en",
        "error",
        "en",
        {"people.csv": PEOPLE},
        "For task_2_2 I ran df['Age'].mean() and got KeyError: 'Age'. Why?",
        "task_2_2",
        DIAGNOSE,
        HINTS,
    ),
    _turn(
        "key_error_zh",
        "error",
        "zh-CN",
        {"people.csv": PEOPLE},
        "做 task_2_2 时我写了 df['年龄'].mean()，报错 KeyError: '年龄'，这是为什么？",
        "task_2_2",
        DIAGNOSE,
        HINTS,
    ),
    _turn(
        "dtype_error_en",
        "error",
        "en",
        {"people.csv": PEOPLE},
        "For task_2_2 I tried df['city'].mean() and got TypeError: Cannot perform reduction 'mean' with string dtype. What does it mean?",
        "task_2_2",
        DIAGNOSE,
        HINTS,
    ),
    _turn(
        "dtype_error_zh",
        "error",
        "zh-CN",
        {"ages.csv": AGE_TEXT},
        "task_2_2 里我写 df['age'] + 1，报错 TypeError: can only concatenate str (not \"int\") to str，怎么回事？",
        "task_2_2",
        DIAGNOSE,
        HINTS,
        UNSUITABLE,
    ),
    _turn(
        "merge_error_en",
        "error",
        "en",
        PEOPLE_AND_CITIES,
        'For task_2_3 I ran pd.merge(people, cities, left_on=\'city\') and got MergeError: Must pass "right_on" OR "right_index". What\'s wrong?',
        "task_2_3",
        DIAGNOSE,
        HINTS,
    ),
    _turn(
        "merge_error_zh",
        "error",
        "zh-CN",
        PEOPLE_AND_CITIES,
        "task_2_3 我运行 pd.merge(people, cities, on='City') 报错 KeyError: 'City'，哪里错了？",
        "task_2_3",
        DIAGNOSE,
        HINTS,
    ),
    # concept questions
    _turn(
        "concept_en",
        "concept",
        "en",
        {"people.csv": PEOPLE},
        "For task_2_3 I don't understand what the how parameter of merge does.",
        "task_2_3",
        EXPLAIN,
    ),
    _turn(
        "concept_zh",
        "concept",
        "zh-CN",
        {"people.csv": PEOPLE},
        "task_2_4 里的 groupby 到底是怎么工作的？“拆分-应用-合并”我没看懂。",
        "task_2_4",
        EXPLAIN,
    ),
    # "I finished, check me": without and with evidence
    _turn(
        "claim_bare_en",
        "claim_done",
        "en",
        {"people.csv": PEOPLE},
        "I finished task_2_4: I used groupby to get the mean age per city.",
        "task_2_4",
        VALIDATE,
        NOT_ENOUGH,
    ),
    _turn(
        "claim_bare_zh",
        "claim_done",
        "zh-CN",
        {"people.csv": PEOPLE},
        "老师，task_2_2 我做完了，平均年龄已经算出来了。",
        "task_2_2",
        VALIDATE,
        NOT_ENOUGH,
    ),
    _turn(
        "claim_evidence_en",
        "claim_done",
        "en",
        {"people.csv": PEOPLE},
        "I finished task_2_2. My code:\nimport pandas as pd\ndf = pd.read_csv('people.csv')\nprint(df['age'].mean())\nIt printed 34.5.",
        "task_2_2",
        VALIDATE,
    ),
    _turn(
        "claim_evidence_zh",
        "claim_done",
        "zh-CN",
        {"people.csv": PEOPLE},
        "task_2_4 做完了。我的代码：\nprint(df.groupby('city')['age'].mean())\n输出：Lima 35.0, Oslo 34.0, Paris 34.0, Rome 35.0",
        "task_2_4",
        VALIDATE,
    ),
    # chit-chat and off-topic (one with no upload at all)
    _turn("chitchat_en", "chit_chat", "en", {}, "Hi! What's your favourite movie?", None, None),
    _turn("offtopic_zh", "chit_chat", "zh-CN", {"people.csv": PEOPLE}, "你能帮我写一篇关于春天的作文吗？", None, None),
    # "just give me the solution"
    _turn(
        "solution_en",
        "solution_request",
        "en",
        {"people.csv": PEOPLE},
        "Just give me the code for task_2_4, I don't have time to learn this.",
        "task_2_4",
        EXPLAIN,
    ),
    _turn(
        "solution_zh",
        "solution_request",
        "zh-CN",
        {"people.csv": PEOPLE},
        "直接把 task_2_3 的答案代码发给我吧，merge 那一行怎么写？",
        "task_2_3",
        EXPLAIN,
    ),
]

# ---- the reply, judged by this file's own lexicon -----------------------------------------------------------------

_USE = r"use\s+(?:(?:this|the|that|your)\s+)?(?:\S+\.(?:csv|tsv|xlsx?)\b|(?:file|dataset|data)\b)"
"""Using the upload ("use the public_people.csv dataset", "use this file")."""
_LOOKING = r"(?!\s+(?:by\s+)?(?:upload|find|look|search|get|collect)ing)"
_MAY_START = [
    re.compile(p, re.IGNORECASE)
    for p in (
        r"\byou\s+(?:can|may|could|are\s+able\s+to)\s+(?:now\s+|already\s+|definitely\s+|safely\s+|go\s+ahead\s+and\s+)?"
        rf"(?:start|begin|proceed|get\s+started|work\s+on\s+(?:the\s+)?task|{_USE}){_LOOKING}",
        r"\b(?:you'?re|you\s+are)\s+(?:all\s+)?(?:set|ready|good)\s+to\s+(?:go|start|begin)",
        r"\b(?:go\s+ahead\s+(?:and\s+(?:start|begin)|with\s+(?:the\s+)?task)|feel\s+free\s+to\s+(?:start|begin))\b",
        r"\blet'?s\s+(?:start|begin|get\s+started)(?:\s+(?:on|with)\s+(?:the\s+)?(?:task|exercise|analysis)|\s*(?:[!.]|$))",
        r"\b(?:dataset|file|data)\s+(?:is|looks|seems)\s+(?:really\s+|perfectly\s+|quite\s+|very\s+)?(?:suitable|fine|good|great|perfect|ready|ok(?:ay)?)\b",
        # not "a dataset that meets the task's requirements": the one the student is asked for
        r"(?<!\bthat\s)(?<!\bwhich\s)\b(?:meets|satisfies|fulfils|fulfills)\s+(?:all\s+)?(?:of\s+)?(?:the\s+)?(?:task'?s?\s+)?requirements",
        r"(?<![不没])(?:可以|能够|能)(?:直接|马上|现在)?(?:开始|着手|动手|进行(?:任务|task)|使用(?:这个|该|此)?(?:数据|文件))(?!寻找|找|准备|上传|收集|检查数据)",
        r"开始吧|没问题",
        r"(?:数据集?|文件)[^。！？\n不没未]{0,6}(?:完全|很|非常)?(?:适合|符合(?:任务)?要求|满足(?:任务)?要求)",
    )
]
"""Telling the student they may start (in a sentence that asserts it: not a question, not after a condition)."""
_YES = re.compile(r"^\W*(?:yes|yeah|sure|absolutely|of\s+course|是的|当然|可以[，,！!。])", re.IGNORECASE)
"""An opening "yes" (to "can I start?")."""

_CANNOT = [
    re.compile(p, re.IGNORECASE)
    for p in (
        r"\b(?:can(?:not|'t|\s+not)|could\s*n[o']t|may\s+not|(?:are|'re)\s*(?:not|n't)\s+(?:yet\s+)?(?:able|ready))\s+(?:to\s+)?(?:yet\s+)?"
        rf"(?:start|begin|proceed|work\s+on\s+(?:the\s+)?task|{_USE})",
        r"\b(?:is\s+not|isn't|not)\s+(?:yet\s+)?(?:suitable|usable)\b|\bunsuitable\b",
        r"\b(?:doesn't|does\s+not|don't|do\s+not)\s+(?:yet\s+)?(?:meet|satisfy|fulfil|fulfill)\b",
        r"\b(?:upload|provide|find|share|use|get|choose|pick)\s+(?:a\s+|another\s+)?(?:new|different|another|better|bigger|larger)\s+(?:dataset|file|csv|data)",
        r"\bblocked\b",
        r"(?:不能|无法|不可以|不可|没法)(?:直接|马上|现在)?(?:开始|着手|使用(?:这个|该|此)?(?:数据|文件))",
        r"(?:数据集?|文件)[^。！？\n]{0,6}(?:不适合|不合适|不符合|不满足)",
        r"(?:换|重新上传|重新提供|上传|提供|找)(?:一个|一份|另一个|另一份)?(?:新的|其他的|别的|更大的|合适的)[^。！？\n]{0,4}(?:数据|文件)",
        r"阻塞|暂时还不能",
    )
]
"""Telling the student they cannot start, or need another dataset (questions count: asking for a new file says it)."""

_DONE = [
    re.compile(p, re.IGNORECASE)
    for p in (
        r"\byou(?:'ve|\s+have)\s+(?:successfully\s+|already\s+)?(?:finished|completed|done|solved)\b",
        r"\b(?:task(?:_\d_\d)?|it)\s+is\s+(?:now\s+)?(?:complete|completed|done|finished)\b|\bcongratulations\b",
        r"(?:任务|task_\d_\d)[^。！？\n不没未还]{0,6}(?:已经|已)(?:完成|通过)|恭喜",
    )
]
"""Telling the student the task is done."""

_CONDITIONAL = re.compile(
    r"\b(?:if|once|after|when|until|unless|before|as\s+soon\s+as|then)\b|如果|若|一旦|之后|以后|然后|再|等|只要|才",
    re.IGNORECASE,
)
_QUESTION = re.compile(r"[?？]\s*$|[吗呢]\s*$")
_SENTENCE = re.compile(r".+?(?:[。！？!?\n]|[.;](?=\s|$)|$)", re.DOTALL)

_Q = r"['\"‘’“”`]"
_SOLUTIONS = [
    re.compile(p.replace("Q", _Q), re.IGNORECASE)
    for p in (
        r"\[\[QnameQ,QageQ,QcityQ\]\]",  # task_2_1
        r"(?:\[QageQ\]|\.age)\.mean\(",  # task_2_2
        r"\bon=QcityQ",  # task_2_3
        r"groupby\(QcityQ\)(?:\[\[?QageQ\]?\]|\.age)?\.(?:mean|agg)\(",  # task_2_4
    )
]
"""The tasks' answers, matched with the spaces taken out."""


_FOR_THE_MODEL = re.compile(
    r"<pyai|failed the application's validation|automated feedback|your (?:previous )?response should|"
    r"here is (?:the|my) (?:reply|response)|回复应为|\b(?:mention_to_student|task_status|instruction[_ ]packet|"
    r"binding[_ ]rules?|expected_output_type|consult_expert|submit_\w+|orchestrator)\b|"
    r"(?<![\w./-])[a-z\u4e00-\u9fff]+_(?:inspector|explainer|validator|diagnos\w*|expert)\b|"
    r"\b(?:consult|ask)\s+(?:an?\s+|the\s+)?experts?\b|(?:咨询|请教)专家|"
    r"\b(?:data|concept)\s+(?:inspector|explainer)s?\b|suitability\s+judge?ment|"
    r"(?:数据|概念)(?:检查|检验|审查|解释|讲解)(?:员|器)|适合(?:性)?的?判断|"
    r"使用.{0,4}工具|工具的?结果|用户批准|"
    # the model answering a retry prompt instead of the student ("好的，我会重新写一遍，确保所有内容都是中文。")
    r"\b(?:I'll|I\s+will|let\s+me)\s+(?:re-?write|rephrase)\b|我(?:会|来|将|再)?(?:重新写|重写)|确保.{0,6}都是(?:中文|英文)",
    re.IGNORECASE,
)
"""Words meant for the model, or the app's inner names (an expert's id such as data_inspector or 数据_inspector, or
said in words: "the data inspector", 数据检查员)."""
_OF_THE_STUDENT = re.compile(
    r"\bthe student(?:'s)?\b|(?:提醒|告诉|指导|帮助|通知|让|请)学生|学生(?:可以|需要|应该|应当|已经|必须|还|的任务)",
    re.IGNORECASE,
)
_AS_THE_STUDENT = re.compile(
    r"^\W*(?:好的[，,]?\s*老师|老师[，,]|ok(?:ay)?,?\s+teacher)|\bI(?:'ve|\s+have)\s+(?:already\s+)?(?:completed|finished|done)\b"
    r"|^\W*我(?:已经)?完成了|我(?:会|将)[^。！？\n]{0,16}我(?:的|运行的)|\bI(?:'ll|\s+will)\s+(?:show|send|upload)\s+(?:you\s+)?my\b"
    r"|我(?:会|将)(?:在[^。！？\n]{0,12})?(?:再次|重新)?(?:继续|尝试|努力|改正|提交)|\bI(?:'ll|\s+will)\s+try\s+again\b",
    re.IGNORECASE,
)
_CJK = re.compile(r"[\u4e00-\u9fff]")
_CODE = re.compile(r"`[^`]*`|\b\w+\.(?:csv|tsv|xlsx?)\b|\b\w+_\w+\b")
_EN_WORDS = re.compile(
    r"\b(?:the|is|are|you|your|to|of|and|a|an|this|that|can|with|for|please|have|it)\b", re.IGNORECASE
)


def _wrong_language(reply: str, lang: str) -> str | None:
    """A sentence not in the student's language: for a Chinese turn, one with no Chinese and four or more English
    words, two of them function words; for an English one, a sentence with more Chinese characters than words."""
    for sentence in _sentences(_CODE.sub(" ", reply)):
        words = re.findall(r"[A-Za-z]{2,}", sentence)
        if lang.startswith("zh"):
            if not _CJK.search(sentence) and len(words) >= 4 and len(_EN_WORDS.findall(sentence)) >= 2:
                return sentence
        elif len(_CJK.findall(sentence)) > max(len(words), 3):
            return sentence
    return None


def reading_problems(reply: str, *, student: str, lang: str) -> list[str]:
    """What makes the reply read as something other than a tutor's words to this student (see the docstring)."""
    problems = [f"words meant for the model: {m.group(0)!r}" for m in [_FOR_THE_MODEL.search(reply)] if m]
    problems += [f"speaks of the student: {m.group(0)!r}" for m in [_OF_THE_STUDENT.search(reply)] if m]
    problems += [f"speaks as the student: {m.group(0)!r}" for m in [_AS_THE_STUDENT.search(reply)] if m]
    if (sentence := _wrong_language(reply, lang)) is not None:
        problems.append(f"not in the student's language: {sentence[:80]!r}")
    flat = re.sub(r"\W+", "", reply).lower()
    if flat and difflib.SequenceMatcher(None, flat, re.sub(r"\W+", "", student).lower()).ratio() >= 0.8:
        problems.append("the student's words said back")
    return problems


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.findall(text) if s.strip()]


def _said(
    text: str, lexicon: Sequence[re.Pattern[str]], *, questions: bool = False, conditionals: bool = False
) -> list[str]:
    """The phrases of `text` that `lexicon` finds, sentence by sentence; questions, and phrases after a condition in
    their sentence ("once you have …, you can start"), are left out unless asked for."""
    found = []
    for sentence in _sentences(text):
        if not questions and _QUESTION.search(sentence):
            continue
        found += [
            m.group(0)
            for p in lexicon
            if (m := p.search(sentence)) and (conditionals or not _CONDITIONAL.search(sentence[: m.start()]))
        ]
    return found


def _solutions(text: str, student: str) -> list[str]:
    """Code blocks, and the tasks' answers the student did not write themselves."""
    flat, theirs = re.sub(r"\s+", "", text), re.sub(r"\s+", "", student)
    leaked = ["code block"] if "```" in text else []
    return leaked + [m.group(0) for p in _SOLUTIONS if (m := p.search(flat)) and not p.search(theirs)]


Stance = Literal["blocked", "open", "unknown"]


def packet_stance(packet: dict[str, Any] | None, consulted: Iterable[ConsultationRecord]) -> Stance:
    """What the packet tells the assistant: `blocked` (status blocked, or the packet's task's dataset judged
    unsuitable), `open` (its dataset judged suitable, nothing blocking), else `unknown` (no dataset judged)."""
    if packet is None:
        return "unknown"
    verdicts = [
        bool(c.expert_output.get("is_suitable"))
        for c in consulted
        if c.status == "done"
        and c.expert_output is not None
        and c.request.get("expected_output_type") == JUDGE
        and (c.request.get("context") or {}).get("task_id") == packet["task_id"]
    ]
    if packet["task_status"] == "blocked" or not all(verdicts):
        return "blocked"
    return "open" if verdicts else "unknown"


def reply_problems(reply: str | None, *, student: str, lang: str, stance: Stance, rules: Iterable[str]) -> list[str]:
    """What in the reply contradicts the packet or gives a solution away (empty: consistent)."""
    if not (reply or "").strip():
        return ["no reply"]
    assert reply is not None
    problems = []
    if stance == "blocked":
        opening = (_sentences(reply) or [""])[0]
        may = ([m.group(0)] if (m := _YES.search(opening)) else []) + _said(reply, _MAY_START)
        problems += [f"says they may start on a blocked packet: {p!r}" for p in may]
    if stance == "open":
        problems += [
            f"says they cannot on a suitable dataset: {p!r}"
            for p in _said(reply, _CANNOT, questions=True, conditionals=True)
        ]
    if NOT_ENOUGH in rules:
        problems += [f"says the task is done without the evidence: {p!r}" for p in _said(reply, _DONE)]
    problems += reading_problems(reply, student=student, lang=lang)
    return problems + [f"gives a solution: {p!r}" for p in _solutions(reply, student)]


# ---- one turn -----------------------------------------------------------------------------------------------------

RESULTS = Path(__file__).resolve().parent / "results"
CHECKS = (
    "finished",
    "packet_accepted",
    "packet_task",
    "expected_consulted",
    "expected_rule",
    "assistant_replied",
    "reply_consistent",
)


Via = Literal["cli", "web"]


@dataclass
class _Ran:
    """What one turn did, whichever front end ran it: its store (closed by the judging), the orchestrator's run and
    the assistant's it handed over to, and when each part ended."""

    store: Store
    run: RunRecord | None = None
    reply: RunRecord | None = None
    crashed: str | None = None
    started: float = 0.0
    planned: float = 0.0
    ended: float = 0.0
    shown_model_words: list[str] = field(default_factory=list)


async def one_turn(
    turn: Turn, *, model_spec: str, models_dir: Path, via: Via = "cli", timeout: float = 600.0
) -> dict[str, Any]:
    """One turn in a fresh session: in process as `consulta chat tutor` runs it (`cli`), or through the web page's
    API on a `consulta serve tutor` of its own (`web`: the files uploaded with `POST /api/tutor/uploads`); judged
    the same way from its store."""
    with tempfile.TemporaryDirectory(prefix="consulta-eval-tutor-") as tmp:
        if via == "web":
            ran = await asyncio.to_thread(
                _web_turn, turn, home=Path(tmp), model_spec=model_spec, models_dir=models_dir, timeout=timeout
            )
        else:
            ran = await _chat_turn(turn, tmp=Path(tmp), model_spec=model_spec, models_dir=models_dir)
        try:
            return _judged(turn, ran)
        finally:
            ran.store.close()


async def _chat_turn(turn: Turn, *, tmp: Path, model_spec: str, models_dir: Path) -> _Ran:
    uploads = Path(tmp, "uploads")
    uploads.mkdir()
    for name, content in turn.files:
        Path(uploads, name).write_text(content, encoding="utf-8")
    store = Store(f"sqlite:///{tmp}/eval.db")
    runtime = Runtime(store=store, resolve_model=lambda spec: resolve_model(spec, models_dir=models_dir))
    env = AppEnv(store=store, resolve_model=runtime.resolve_model, model=model_spec, lang=turn.lang, data_dir=tmp)
    agent = tutor.APP.build(tutor.APP.main_agent, tutor.TutorOptions(uploads=uploads), env)
    ran = _Ran(store, started=time.perf_counter())
    ran.planned = ran.started
    try:
        ran.run = await runtime.run(agent, turn.student, model=model_spec, lang=turn.lang)
        ran.planned = time.perf_counter()
        handed = tutor.follow_up(ran.run, env) if ran.run.status == RunStatus.finished else None
        if handed is not None:  # as the host hands over: the next agent over the run's options and the hand-over's
            options = tutor.APP.recorded_options({**ran.run.options, **handed.options})
            ran.reply = await runtime.run(
                tutor.APP.build(handed.agent, options, env), handed.prompt, model=model_spec, lang=turn.lang
            )
    except Exception as error:  # noqa: BLE001 - one turn's crash is that turn's failure, not the evaluation's
        ran.crashed = f"{type(error).__name__}: {error}"
    finally:
        await runtime.aclose()
    ran.ended = time.perf_counter()
    return ran


def _web_turn(turn: Turn, *, home: Path, model_spec: str, models_dir: Path, timeout: float) -> _Ran:
    """The turn on the page's API: the files uploaded, the student's words sent, the orchestrator's run followed
    and the assistant's run it hands over to; the store read while the server still runs."""
    (home / "models").symlink_to(models_dir)
    env = {"CONSULTA_MODEL": model_spec, "CONSULTA_LANG": turn.lang, "NO_COLOR": "1"}
    ran = _Ran(Store(f"sqlite:///{home}/consulta.db"), started=time.perf_counter())
    ran.planned = ran.started
    try:
        with _web.WebServer("tutor", home=home, env=env) as server:
            for name, content in turn.files:
                server.upload(name, content)
            ran.started = time.perf_counter()  # as in process: from the student's words (the server is up)
            seen = server.turn(turn.student, lang=turn.lang, timeout=timeout)
            ran.ended = time.perf_counter()
            ran.planned = seen.ended_at[0] if seen.ended_at else ran.ended
            ran.shown_model_words = _web.model_words_shown(seen.events, prompt=turn.student, lang=turn.lang)
            if seen.failed and seen.status != "failed":  # a failed run says why in its record
                ran.crashed = seen.failed
            if seen.runs:
                ran.run = ran.store.get_run(seen.runs[0])
            if len(seen.runs) > 1:
                ran.reply = ran.store.get_run(seen.runs[1])
    except RuntimeError as error:
        ran.crashed = ran.crashed or str(error)[:300]
    ran.ended = ran.ended or time.perf_counter()
    return ran


def _judged(turn: Turn, ran: _Ran) -> dict[str, Any]:
    store, run, reply, crashed = ran.store, ran.run, ran.reply, ran.crashed
    seconds = ran.ended - ran.started
    calls = store.list_tool_calls(run.id) if run is not None else []
    reply_checks = reply_checks_of(store, [reply.id] if reply is not None else [])
    consulted = (
        sorted(store.list_consultations(run_id=run.id, limit=1000), key=lambda c: c.id) if run is not None else []
    )
    done = [c for c in consulted if c.status == "done"]
    types = [str(c.request.get("expected_output_type")) for c in done]
    packets = [
        c.result["packet"]
        for c in calls
        if c.tool_name == tutor.SUBMIT_PACKET_TOOL_NAME and isinstance(c.result, dict) and c.result.get("accepted")
    ]
    packet = packets[-1] if packets else None
    fired = sorted({r["rule_name"] for c in done for r in c.binding_rules})
    text = reply.output if reply is not None and reply.status == RunStatus.finished else None
    stance = packet_stance(packet, done)
    problems = reply_problems(text, student=turn.student, lang=turn.lang, stance=stance, rules=fired)
    checks = {
        "finished": run is not None and run.status == RunStatus.finished,
        "packet_accepted": packet is not None,
        "packet_task": packet is not None and (turn.task is None or packet["task_id"] == turn.task),
        "expected_consulted": turn.consult in types if turn.consult else all(t == JUDGE for t in types),
        "expected_rule": set(fired) == turn.rules,
        "assistant_replied": bool((text or "").strip()),
        "reply_consistent": not problems,
    }
    return {
        "turn": turn.name,
        "category": turn.category,
        "lang": turn.lang,
        "student": turn.student,
        "files": [n for n, _ in turn.files],
        "expected": {"task": turn.task, "consult": turn.consult, "rules": sorted(turn.rules)},
        **checks,
        "right": all(checks.values()),
        "error": crashed or (run.error if run is not None else None) or (reply.error if reply is not None else None),
        "stance": stance,
        "reply_problems": problems,
        "steps": len(calls),
        "refusals": [c.error_code for c in calls if c.error_code],
        "consultations": [f"{c.expert_id}/{c.request.get('expected_output_type')}/{c.status}" for c in consulted],
        "consultation_attempts": [c.attempts for c in consulted],  # the expert model's tries (0: code's answer)
        "consultation_errors": [c.error for c in consulted if c.error],  # why a consultation failed (its last refusal)
        "rules": fired,
        "expert_outputs": [c.expert_output for c in done if c.attempts],  # the experts' models' words (not code's)
        "packet": packet,
        "reply": reply.output if reply else None,
        "reply_checks": reply_checks,
        "shown_model_words": ran.shown_model_words,  # `--via web`: shown texts with words meant for the model
        "seconds": round(seconds, 1),
        # where the turn's time went: the orchestrator's run (its consultations inside it), then the assistant's
        "seconds_parts": {
            "orchestrator": round(ran.planned - ran.started, 1),
            "consultations": round(sum(c.duration_ms or 0 for c in consulted) / 1000, 1),
            "assistant": round(ran.ended - ran.planned, 1) if reply is not None else None,
        },
    }


# ---- the run ------------------------------------------------------------------------------------------------------


def load_turns(path: Path) -> list[Turn]:
    """The turns of a JSON file (`--cases FILE`), in place of TURNS and judged the same way: `{"turns": [{...}]}`,
    each turn's fields those of `Turn` (`rules` a list; `consult` one of the four output types or null; `task` one of
    the tutor's tasks or null), its `files` a list of uploads, each `{"name": ..., "text": ...}` or a table a
    package ships, `{"name": ..., "package": ..., "path": ...}` (read from the installed package; `.gz` unpacked).
    A file that cannot be used is a SystemExit with one line naming the file, the turn and why."""
    import gzip
    from importlib import resources

    from pydantic import TypeAdapter, ValidationError
    from ruamel.yaml import YAML

    def bad(why: str) -> SystemExit:
        return SystemExit(f"{path}: {why}")

    listed = read_cases(path, "turns")
    catalog = YAML(typ="safe").load(resources.files(tutor).joinpath("data", "tasks.yaml").read_text(encoding="utf-8"))
    tasks = {t["id"] for t in catalog["tasks"]}
    adapter = TypeAdapter(Turn)
    known = set(Turn.__dataclass_fields__)
    turns: list[Turn] = []
    for n, raw in enumerate(listed, 1):
        where = f"turn {n}" + (
            f" ({raw['name']})" if isinstance(raw, dict) and isinstance(raw.get("name"), str) else ""
        )
        if not isinstance(raw, dict):
            raise bad(f"{where}: expected an object")
        if unknown := sorted(set(raw) - known):
            raise bad(f"{where}: unknown field {', '.join(unknown)} (fields: {', '.join(sorted(known))})")
        files: list[tuple[str, str]] = []
        for upload in raw.get("files") or []:
            if not isinstance(upload, dict) or not isinstance(upload.get("name"), str):
                raise bad(f"{where}: each file needs a name and its text, or a package and path")
            if isinstance(upload.get("text"), str) and set(upload) == {"name", "text"}:
                files.append((upload["name"], upload["text"]))
                continue
            if set(upload) != {"name", "package", "path"}:
                raise bad(f"{where}: file {upload['name']!r} needs either text, or package and path")
            try:
                content = resources.files(upload["package"]).joinpath(upload["path"]).read_bytes()
                if upload["path"].endswith(".gz"):
                    content = gzip.decompress(content)
                files.append((upload["name"], content.decode("utf-8")))
            except (ImportError, OSError, TypeError, UnicodeDecodeError, EOFError) as error:
                raise bad(
                    f"{where}: cannot read {upload['path']!r} from package {upload['package']!r} "
                    f"({error.__class__.__name__}: {error})"
                ) from None
        try:
            turn = adapter.validate_python({**raw, "files": files})
        except ValidationError as error:
            first = error.errors()[0]
            raise bad(f"{where}: {'.'.join(map(str, first['loc'])) or 'turn'}: {first['msg']}") from None
        if not turn.student.strip():
            raise bad(f"{where}: the student's words are empty")
        if turn.task is not None and turn.task not in tasks:
            raise bad(f"{where}: task {turn.task!r} is not one of the tutor's ({', '.join(sorted(tasks))})")
        if turn.consult not in (None, JUDGE, DIAGNOSE, EXPLAIN, VALIDATE):
            raise bad(
                f"{where}: consult {turn.consult!r} is not an output type ({JUDGE}, {DIAGNOSE}, {EXPLAIN}, {VALIDATE})"
            )
        turns.append(turn)
    if len({t.name for t in turns}) != len(turns):
        raise bad("two turns share a name")
    return turns


def chosen_turns(*, only: Sequence[str] | None, limit: int | None, among: Sequence[Turn] = TURNS) -> list[Turn]:
    """The turns of `among` named by `only` (all without it); with `limit`, at most that many, taken in turn from each
    category (in both languages) so a short run still sees every kind."""
    unknown = sorted(set(only or ()) - {t.name for t in among})
    if unknown:
        raise SystemExit(f"No turn named {', '.join(unknown)}; turns: {', '.join(t.name for t in among)}.")
    turns = [t for t in among if not only or t.name in only]
    if limit is None:
        return turns
    by_category: dict[str, list[Turn]] = {}
    for t in turns:
        by_category.setdefault(t.category, []).append(t)
    # every other category starts from its second turn: the turns alternate English and Chinese, so a short run sees both
    rotated = [group[k % 2 :] + group[: k % 2] for k, group in enumerate(by_category.values())]
    return [t for t in chain.from_iterable(zip_longest(*rotated)) if t is not None][:limit]


def figures(rows: list[dict[str, Any]], key: str) -> dict[str, dict[str, Any]]:
    """Turns right / total and the median seconds, per value of `key`."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault(r[key], []).append(r)
    return {
        name: {
            "right": sum(r["right"] for r in group),
            "total": len(group),
            "median_seconds": round(statistics.median(r["seconds"] for r in group), 1),
        }
        for name, group in groups.items()
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=os.environ.get("CONSULTA_MODEL", "local"))
    parser.add_argument("--only", action="append", metavar="NAME", help="run only this turn (repeatable)")
    parser.add_argument("--limit", type=int, metavar="N", help="at most N turns, taken in turn from each category")
    parser.add_argument(
        "--out",
        type=Path,
        help="where the JSON goes (default: results/tutor_local.json for a full run, the temp dir for a partial one)",
    )
    parser.add_argument(
        "--cases",
        type=Path,
        metavar="FILE",
        help="the turns of this JSON file instead of the built-in ones (load_turns)",
    )
    parser.add_argument(
        "--via",
        choices=["cli", "web"],
        default="cli",
        help="the front end: in process as `consulta chat` runs a turn, or the web page's API (`consulta serve`, one "
        "per turn)",
    )
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per turn (--via web)")
    args = parser.parse_args()
    base = load_turns(args.cases) if args.cases else TURNS
    turns = chosen_turns(only=args.only, limit=args.limit, among=base)
    full = len(turns) == len(base)
    out = args.out or (
        RESULTS / (f"tutor_local.{args.cases.stem}.json" if args.cases else "tutor_local.json")
        if full
        else Path(tempfile.gettempdir()) / "tutor_local.partial.json"
    )
    settings = Settings.from_env(model=args.model)
    model = resolve_model(args.model, models_dir=settings.models_dir)
    if args.via == "cli" and callable(load := getattr(model, "load", None)):  # (each server loads its own)
        load()
    rows = []
    for turn in turns:
        row = await one_turn(
            turn, model_spec=args.model, models_dir=settings.models_dir, via=args.via, timeout=args.timeout
        )
        rows.append(row)
        marks = " ".join(f"{k}={'✓' if row[k] else '✗'}" for k in CHECKS)
        print(
            f"{turn.name:18s} {marks} steps={row['steps']} refusals={row['refusals']} {row['seconds']:6.1f} s",
            flush=True,
        )
        print(f"    consultations: {row['consultations']}  rules: {row['rules']}  stance: {row['stance']}", flush=True)
        if row["error"]:
            print(f"    error: {row['error']}", flush=True)
        if row["reply_problems"]:
            print(f"    reply problems: {row['reply_problems']}", flush=True)
        print(f"    reply: {(row['reply'] or '').strip()[:300]!r}", flush=True)
    passed = {k: sum(bool(r[k]) for r in rows) for k in CHECKS}
    complete = sum(r["right"] for r in rows)
    median = statistics.median(r["seconds"] for r in rows)
    categories, languages = figures(rows, "category"), figures(rows, "lang")
    print(f"\n{'category':18s} {'right':>8s} {'median s':>9s}")
    for name, f in [*categories.items(), *languages.items()]:
        print(f"{name:18s} {f['right']:>3d} / {f['total']:<2d} {f['median_seconds']:9.1f}")
    print(f"\n{complete} of {len(rows)} turns passed every check; by check: {passed}; median {median:.1f} s per turn")
    fired = [r for r in rows if r["reply_checks"]]
    replaced = [r for r in rows if any(done for _, done in r["reply_checks"])]
    by_check: dict[str, int] = {}
    for r in fired:
        for check in {c for c, _ in r["reply_checks"]}:
            by_check[check] = by_check.get(check, 0) + 1
    print(
        f"the runtime's reply checks fired in {len(fired)} turns {dict(sorted(by_check.items()))}; code's reply shown "
        f"in {len(replaced)}, of which {sum(r['reply_consistent'] for r in replaced)} hold to the packet"
    )
    shown = sum(len(r["shown_model_words"]) for r in rows)
    if args.via == "web":
        print(f"texts the page showed with words meant for the model: {shown} (the runtime's detector; target 0)")
    out.write_text(
        json.dumps(
            {
                "evaluation": "tutor turns",
                "source": source_version(),
                "model": args.model,
                "cpus": os.cpu_count(),
                "command": "python bench/eval_tutor.py " + " ".join(sys.argv[1:]),
                "complete": complete,
                "total": len(rows),
                "passed": passed,
                "median_seconds": median,
                "reply_checks_fired": len(fired),
                "reply_checks_by": dict(sorted(by_check.items())),
                "replaced": len(replaced),
                "replaced_consistent": sum(r["reply_consistent"] for r in replaced),
                "via": args.via,
                "model_words_shown": shown,
                "categories": categories,
                "languages": languages,
                "turns": rows,
            },
            indent=2,
            ensure_ascii=False,
        )
        + "\n",
        encoding="utf-8",
    )
    print(f"written: {out}")


if __name__ == "__main__":
    asyncio.run(main())
