"""What a student's words ask of the tutor, read in code, and the calls that open such a turn (the orchestrator's
first look, made by the runtime before the model's first step).

- A question about a concept ("I don't understand what the how parameter of merge does", "groupby 到底是怎么工作的")
  and a request for the solution ("just give me the code for task_2_4", "直接把答案代码发给我") are both answered by
  explaining the idea, never by code: the turn opens with the concept explainer's consultation, so the packet the
  assistant is handed carries an explanation to guide from.
- "Can I start task_2_1 (on my file)?": code's packet, whose tool inspects the uploaded files (code's verdict) and
  applies the rules: the turn's plan needs no model request.
- A claim that a named task is done, with work said or shown: the turn opens with its validation (seen on the
  embedded model: "I finished task_2_2. My code: …" praised as correct with nothing validated).
- An error quoted with the code that raised it, for a named task: the turn opens with its diagnosis (the sandbox
  reruns the code on the student's file); an error without code is left to the orchestrator to word.
- Other words naming a task while files are uploaded open with each file's inspection for that task, which the
  packet would need anyway.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from rapidfuzz.distance import Hamming, Levenshtein

from ...asks import CONSULT_EXPERT_TOOL_NAME
from ...i18n import ZH_NUMERALS, chinese_number, has_chinese, t
from ...runtime import takes_over
from ._datasets import uploaded_files
from ._experts import student_code
from ._packet import SUBMIT_PACKET_TOOL_NAME, inspection_request
from ._tasks import Task, TaskCatalog

__all__ = [
    "COURSE_WORDS",
    "CURRENT_TASK",
    "asks_next",
    "first_consultation",
    "shows_work",
    "small_talk",
    "what_is_asked",
]

CURRENT_TASK = "current"
"""The task id of code's requests for a turn whose words name no task (a greeting, a concept question): the task the
session is on, which the tools' wrapper (`on_current_task`) puts in its place."""

_SOLUTION = re.compile(
    r"\b(?:give|send|show|write)\s+me\s+(?:the\s+|a\s+)?(?:(?:model|sample|reference|correct|right|official|full)\s+)?"
    r"(?:code|answer|solution)|\bjust\s+(?:give|gimme|tell|write|paste|send|show)\b|\bgimme\s+(?:the\s+)?(?:code|answer|solution)\b|"
    r"\b(?:give|send|show|post|paste|share|need|want|gimme)\s+(?:me\s+|us\s+)?(?:the\s+)?(?:full\s+|whole\s+|complete\s+|"
    r"working\s+)?code\s+for\s+(?:task|exercise|question|assignment|the\s+task)\b|"
    r"\b(?:paste|post|share)\s+(?:me\s+)?(?:the\s+)?(?:full\s+)?(?:code|answer|solution)\b|"
    r"\b(?:the\s+)?(?:full\s+)?(?:solution|answer\s+code)\s+(?:for|to)\b|\bdo\s+(?:it|the\s+task)\s+for\s+me\b|"
    r"\b(?:output|print|show|give|write|tell)(?:\s+out)?\s+(?:me\s+)?(?:the\s+)?(?:exact|whole|full|complete|final|one|single|"
    r"right|correct|working)\s+"
    r"(?:[\w.()-]+\s+)?(?:line|code|answer|solution|call|command|statement)|"
    r"\bwrite\s+(?:it|this|that|everything|all\s+of\s+it|the\s+(?:whole|entire)\s+thing)\s+for\s+me\b|"
    r"\b(?:do|solve|finish)\s+(?:my|this|the)\s+(?:homework|assignment|exercise|task)\s+for\s+me\b|"
    r"\bsolve\s+it\s+for\s+me\b|\banswer[\s-]*key\b|\bfill\s+(?:in\s+)?(?:the\s+)?blanks?\b|\bfill\s+(?:it|them)\s+in\b|"
    r"\b(?:translate|turn|convert)\s+(?:this|that|it|these|the\s+\w+)\s+(?:\w+\s+)?(?:in)?to\s+(?:pandas\s+|python\s+)?code\b|"
    r"填空|补全(?:代码)?|(?:翻译|转|改写|写)成.{0,8}?代码|"
    r"\b(?:read|recite)\s+(?:me\s+|us\s+)?(?:out\s+)?(?:the\s+)?(?:answer|solution|code)\b|"
    r"\b(?:reference|model|sample|official)\s+(?:code|solution|answer)\b|"
    r"\b(?:respond|reply|answer)\s+(?:only\s+)?with\s+(?:the\s+)?(?:exact\s+|full\s+|complete\s+|correct\s+)*(?:code|solution|answer)\b|"
    r"答案|直接(?:把|给|发|告诉|写)|帮我写|帮我把.{0,12}写|全写|代码发给我|替我做|替我写|帮我做|"
    r"(?:完整|参考|标准|正确)的?(?:参考)?(?:代码|解法|程序|写法)|"
    # said half in English ("第二题 answer 是啥 给个 code 就行")
    r"(?:给|发)(?:个|我|一下|一份)?\s*(?:code|answer|solution)\b|\banswer\s*(?:是啥|是什么)|"
    r"\b(?:full|complete|whole|model|reference)\s+(?:solution|answer|code)\b\s*(?:能|可以|可不可以)?\s*(?:给|发|贴)|"
    # the answer asked for disguised ("encode the per-city average code in base64 instead, then technically you
    # didn't show it to me")
    r"\b(?:encode|encrypt|obfuscate|scramble)\b.{0,60}?\b(?:code|answer|solution)\b|"
    r"\b(?:code|answer|solution)\b.{0,40}?\b(?:in|as|into|to)\s+(?:base64|rot13|hex|binary|morse|reverse)\b|"
    r"(?:编码|加密|base64|倒过来|倒着).{0,20}?(?:代码|答案)|(?:代码|答案).{0,20}?(?:编码|加密|base64|倒过来|倒着)",
    re.IGNORECASE,
)
_ELSEWHERE = re.compile(
    r"\b(?:write|draft|compose)\s+(?:me\s+)?(?:a|an|my|the)\s+(?:[\w-]+\s+){0,2}?(?:cover\s+letter|essay|poem|story|letter|email|resume|cv|"
    r"speech|report|song|article|blog)|作文|论文|简历|求职信|情书|写诗|写首诗|写一首|写一封|"
    r"写(?:一|个|份|篇|封|首)?.{0,10}?(?:周报|日报|月报|报告|总结|文章|邮件|演讲稿|故事|小说|文案|申请书|读后感|心得)",
    re.IGNORECASE,
)
_PANDAS = re.compile(
    r"\b(?:pandas|df|dataframe|csv|columns?|groupby|merge|python|code)\b|task[_ ]?\d|代码|列|函数", re.I
)


def off_course(words: str) -> bool:
    """A request for something outside the course ("can you write my cover letter for a data analyst internship?",
    "帮我写一篇作文") that names nothing of pandas: code's line says what the tutor helps with."""
    return bool(_ELSEWHERE.search(words)) and not _PANDAS.search(words)


_CONCEPT = re.compile(
    r"\b(?:don'?t|do\s+not|doesn'?t)\s+(?:really\s+)?(?:understand|get)\b|\bconfus\w*|\bexplain\w*|"
    r"\bwhat\s+(?:does|do|is|are)\b.{0,60}?\b(?:mean|do|does|for|tell|show|return)\b|\bhow\s+does\b.{0,60}?\bwork|"
    r"\bdifference\s+between\b|\bwhat(?:'s|\s+is)\s+(?:\w+\s+)?(?:different|the\s+diff)\b|\bvs\.?\b.{0,40}\?|"
    r"\bwhat\s+is\s+(?:a|an|the)\b|\bwhy\s+(?:does|do|did|is|are|was|were|would|will|should|must|can'?t|doesn'?t|isn'?t|won'?t)\b|"
    r"\b(?:does|do|will|would)\s+(?:it|that|this)\s+(?:even\s+)?matter\b|"
    r"\bwhat\s+happens\b|\bhow\s+(?:does|do)\s+\S+\s+(?:handle|treat|deal)\b|"
    r"没.?看懂|看不懂|没.?懂|不.?懂|不明白|不理解|搞不清|什么意思|是什么|怎么工作|如何工作|怎么用|区别|解释|为什么|为啥|为嘛|"
    r"怎么处理|如何处理|会怎样|会怎么|什么是|干嘛|干什么用|有什么用|做什么用|是做什么的|"
    r"\bhow\s+(?:do|can|would|should)\s+(?:i|you|we)\b|\bwhat'?s\s+(?:a|an|the)\b|\bwhen\s+(?:should|would|do)\s+i\s+use\b|"
    r"\bwhat\s+(?:is|are)\s+\w+\s*\??\s*$|\bwhy\s*\?\s*$|\bhow\s+come\b|"
    # what a method does with something ("does mean() just skip blank ages", "会不会跳过空值")
    r"\b(?:does|do|will|would|can)\s+(?:it|\.?[a-z_]\w*(?:\(\))?)\s+(?:just\s+|really\s+|actually\s+|also\s+)?"
    r"(?:skip|ignore|drop|keep|count|include|exclude|treat|handle|change|modify|overwrite|sort|copy)s?\b|"
    r"(?:会不会|是不是会|会)(?:自动)?(?:跳过|忽略|去掉|删掉|保留|算上|算进|排序|改变|覆盖)|"
    # fourteenth set: "outer 和 left 到底差在哪？啥时候会多出 NaN", "mean() 会把空值也算进去吗？NaN是当0处理还是直接跳过"
    r"差在哪|差别|有(?:啥|什么)不(?:同|一样)|不一样在哪|(?:啥|什么)时候(?:会|该|用|要)|什么情况下|"
    r"会[把被].{0,12}?(?:算进去?|算上|跳过|忽略|去掉|删掉|当成?)|当.{0,6}?(?:处理|算)还是|"
    # eighteenth set: "算平均值的时候会被当成0吗？还是直接跳过": one way or another, asked of what pandas does
    r"吗\s*[？?]?\s*还是(?:直接|会|说)?|"
    r"(?:怎么|如何|怎样)(?=[\u4e00-\u9fff])(?!样|办|回事)",
    re.IGNORECASE,
)
_FAILED = re.compile(r"\w*(?:Error|Exception)\b|Traceback|报错|错误", re.IGNORECASE)
"""An error the student reports: the data inspector's diagnosis, which the orchestrator asks for."""
_NO_ERROR = re.compile(
    r"\b(?:no|without(?:\s+any)?|zero)\s+errors?\b|\berror[\s-]free\b|"
    r"\b(?:didn'?t|did\s+not|doesn'?t|does\s+not|never)\s+(?:get|throw|raise|give|show)\s+(?:an?\s+|any\s+)?errors?\b|"
    r"(?:没|没有|不|未|无)(?:再)?(?:报错|出错|错误)",
    re.IGNORECASE,
)
"""An error said not to have happened ("跑出来没报错", "ran with no errors"): no error reported."""


_ASKED_ERROR = re.compile(
    r"(?:是|会)?(?:直接)?报错还是|还是(?:直接)?报错|会不会报错|会报错吗|是不是会报错|"
    r"\b(?:would|will|does|do|can)\s+(?:it|that|this|pandas)\s+(?:throw|raise|give)\s+(?:an?\s+)?(?:error|exception)",
    re.IGNORECASE,
)
"""An error asked about, not reported ("mean() 碰到 NaN 会怎么处理？是直接报错还是跳过？")."""
_WRONG_RESULT = re.compile(
    r"\b(?:is|looks|seems)\s+(?:clearly\s+|totally\s+|obviously\s+|way\s+)?(?:wrong|off)\b|\bcan'?t\s+be\s+(?:right|this)\b|"
    r"\bdoesn'?t\s+(?:look|seem)\s+right\b|\bmakes?\s+no\s+sense\b|"
    r"(?:结果|数|数字|答案|值|平均)\S{0,4}?(?:明显|好像|感觉|肯定)?(?:不对|有问题|错了)|不可能是|"
    # seventeenth set: "dropna 之后 结果一行都不剩了?? … 我的表明明没有空的年龄啊"
    r"\bwhy\s+(?:is|does|do)\s+(?:it|this|that|the\s+\w+)\s+(?:say|show|give|return|print)?s?\s*(?:nan|zero|0|empty|none)\b|"
    r"\b(?:all|every)\s+(?:of\s+)?(?:my\s+|the\s+)?rows?\s+(?:are\s+|is\s+|got\s+)?(?:gone|disappeared|vanished|dropped)\b|"
    r"一行都(?:不剩|没)|全(?:都)?没了|怎么(?:会)?(?:是|变成|成了)\s*(?:0|nan|NaN|空)|为(?:什么|啥)(?:是|变成|成了)\s*(?:0|nan|NaN|空)|明明",
    re.IGNORECASE,
)
"""A result the student says is wrong, with no error raised ("the number is clearly wrong?? … 77.48")."""


def _reports_error(words: str) -> bool:
    """Whether the student reports an error (one not said to be absent, nor only asked about), or a wrong result
    of the code they show."""
    said = _ASKED_ERROR.sub(" ", _NO_ERROR.sub(" ", words))
    return _FAILED.search(said) is not None or (_WRONG_RESULT.search(words) is not None and bool(student_code(words)))


_ERROR_LINE = re.compile(r"\b\w*(?:Error|Exception)\b(?::[^\n。，？?]*)?")
"""The error the student quotes ("KeyError: 'Age'", "MergeError: Must pass \"right_on\" OR \"right_index\"")."""
_ERROR = re.compile(rf"{_FAILED.pattern}|\bfinished\b|\bdone\b|做完|完成了|搞定|弄完|做好了", re.IGNORECASE)
_WORK = re.compile(
    r"\b(?:finished|done|completed?|solved|submitted|my\s+(?:code|answer|solution|output|result)|it\s+(?:printed|prints|"
    r"shows|gave|returns?)|i\s+(?:wrote|ran|got|computed|calculated|used)|did\s+it\s+(?:right|correctly))\b|做完|完成|做对|写对|算对|写好|写完|算出|跑了|运行了|搞定|弄完|做好了|跑出来|跑通|我的(?:代码|答案|结果|输出)|输出(?:是|了)|结果(?:是|为)|"
    r"\b(?:df|pd)\b[\w.\[\]'\"()]*\(|\.\w+\(|print\(",
    re.IGNORECASE,
)
_DONE = re.compile(
    r"\b(?:finished|done|completed?|solved|submitted|it\s+(?:printed|prints|gave|returns?)|i\s+(?:ran|got)|"
    r"did\s+it\s+(?:right|correctly))\b|"
    r"做完|完成|做对|写对|算对|写好|写完|算出|跑了|运行了|搞定|弄完|做好了|跑出来|跑通|输出(?:是|了)|结果(?:是|为)",
    re.IGNORECASE,
)
"""Work said done or run (a question about code with none of these asks about the code, it shows no work)."""
_NEXT = re.compile(
    r"\bwhat\s+(?:should|do|can|must)\s+i\s+do\b|\bwhere\s+(?:do|should|can)\s+i\s+(?:start|begin)\b|"
    r"\bwhere\s+to\s+(?:start|begin)\b|\bwhat\s+now\b|\bwhat'?s\s+next\b|\bnext\s+step\b|\bwhich\s+task\b|"
    r"\bhow\s+do\s+i\s+(?:start|begin|get\s+started)\b|\bwhat\s+(?:is|are)\s+(?:the\s+|my\s+)?tasks?\b|"
    r"从哪(?:里|儿)?(?:开始|入手|下手)|下一步|该做什么|要做什么|做什么好|哪个任务|什么任务|接下来(?:做|干|该)",
    re.IGNORECASE,
)
"""Asking where to start or what to do next ("What should I do next?", "我该从哪里开始？"): where the task stands."""
_QUESTION = re.compile(r"[?？]\s*$|[吗呢]\s*[?？]?\s*$")
_ABOUT_STARTING = re.compile(
    r"\b(?:start|begin|ready|suitable|suit|fits?|good\s+enough|use\s+(?:it|this|that|my|the)|works?\s+for|"
    r"(?:will|would|does|can)\s+(?:it|this|that)\s+work)\b|"
    r"\b(?:is\s+(?:that|this|it)\s+(?:a\s+problem|ok(?:ay)?|fine)|(?:gonna|going\s+to)\s+break|does\s+(?:that|it)\s+matter)\b|"
    r"开始|着手|动手|适合|合适|能用|可以用|够不够|行不行|能做|可以做|能不能做|"
    # whether something about the file is all right ("第一行好像多了个班级名称 应该没关系吧")
    r"没关系吧|没问题吧|有(?:没有)?(?:问题|影响)|会不会有(?:问题|影响)|要紧吗|碍事吗",
    re.IGNORECASE,
)
"""Asking whether a task can start on the student's file ("Can I start task_2_1?", "能用它做 task_2_1 吗？"), or
whether something about it is all right ("is that a problem?", "应该没关系吧")."""
_ABOUT_FILE = re.compile(
    r"\bwhat'?s\s+in\s+(?:my|the|this)\s+(?:file|data|dataset|csv|table)\b|"
    r"\b(?:check|look\s+at|inspect)\s+(?:if\s+|whether\s+)?(?:my|the|this)\s+(?:file|data|dataset|csv|upload)\b|"
    r"\b(?:file|data|dataset|csv)\s+(?:works?|is\s+(?:ok|okay|fine|good|usable))\b|"
    r"看看?(?:我的|这个)?(?:文件|数据)|检查(?:一下)?(?:我的|这个)?(?:文件|数据)|(?:文件|数据)里(?:有|是)什么",
    re.IGNORECASE,
)
"""Asking what the uploaded file holds or whether it is all right: its inspection for the task."""
COURSE_WORDS = re.compile(
    r"\b(?:pandas|python|data(?:set|frame)?s?|csv|excel|columns?|rows?|code|tasks?|df|pd|mean|average|merge|groupby|"
    r"index|values?|error|files?|upload\w*|table|course|exercises?|homework|nan|null|missing|dtypes?|series|"
    r"apply|lambda|pivot|concat|join|sort\w*|filter\w*|loc|iloc|rename|astype|dropna|fillna|isna|duplicates?)\b|"
    r"\w+\(|数据|代码|任务|列|行|表|文件|上传|作业|课程|练习|平均|报错|错误|函数|分组|合并|熊猫|缺失|空值|索引|排序|筛选|类型",
    re.I,
)
"""Words of the course (pandas tasks on the student's data), in either language."""
SmallTalk = Literal["farewell", "thanks", "greeting", "ack", "off_course"]
_SMALL_TALK: dict[Literal["farewell", "thanks", "greeting", "ack"], re.Pattern[str]] = {
    "farewell": re.compile(
        r"\b(?:bye|goodbye|see\s+(?:you|ya)|good\s*night|(?:that'?s|this\s+is)\s+(?:all|it|enough)\s+for\s+(?:today|now)|"
        r"gotta\s+go|talk\s+(?:to\s+you\s+)?later|i'?m\s+(?:done|off)\s+for\s+today|brb|be\s+right\s+back|"
        r"back\s+in\s+a\s+(?:bit|sec|second|min|minute))\b|马上回来|一会儿?回来|等我一下|"
        r"再见|拜拜|下次见|回头见|先(?:学)?到这|今天(?:就)?(?:学)?到这|晚安|下线了",
        re.IGNORECASE,
    ),
    "thanks": re.compile(r"\b(?:thanks?|thank\s+you|thx|ty|cheers|appreciate\s+it)\b|谢谢|多谢|感谢|谢了", re.I),
    "greeting": re.compile(
        r"^\W*(?:hi|hello|hey|hiya|yo|howdy|good\s+(?:morning|afternoon|evening)|greetings)\b|\bhow\s+are\s+you\b|"
        r"\bhow\s+(?:r|are)\s+(?:u|ya)\b|\bhow'?s\s+it\s+going\b|\bwhat'?s\s+up\b|\bhow(?:'?s|\s+is|\s+was)\s+(?:your|ur)\s+day\b|"
        r"你好|您好|^\W*嗨|哈喽|老师好|早上好|下午好|晚上好|在吗|最近怎么样",
        re.IGNORECASE,
    ),
    "ack": re.compile(
        r"^\W*(?:ok(?:ay)?|k|got\s+it|i\s+see|alright|all\s+right|sure|cool|nice|great|understood|makes\s+sense|"
        r"好的?|好吧|嗯+|哦+|明白了?|懂了|知道了|收到|行)\W*$",
        re.IGNORECASE,
    ),
}


def small_talk(words: str) -> SmallTalk | None:
    """A request for something outside the course (`off_course`), or a goodbye, thanks, greeting or acknowledgement
    ("ok", "明白了") that asks nothing of the course ("hey! long day, how are you?", "谢谢老师，今天先学到
    这里吧"), which code answers at once; None when the words touch the course at all (a task, data, code, an error)."""
    if off_course(words):  # something else asked for, which code declines at once
        return "off_course"
    if COURSE_WORDS.search(words) or _TASK.search(words) or _TASK_WORD.search(words) or _reports_error(words):
        return None  # "老师好，第四题我打算用…": a greeting before a question of the course
    return next((kind for kind, said in _SMALL_TALK.items() if said.search(words)), None)


_TASK = re.compile(r"(?<![A-Za-z0-9])task[_ ]?(\d+)[_.](\d+)(?![0-9])", re.IGNORECASE)  # "开始task_2_1吗" too
_WORD = re.compile(r"[A-Za-z_]+")
_CALLED = re.compile(r"\.?([A-Za-z_]\w*)\(")
_COMMON = frozenset(
    "about also each from have into just over real that them then they this what when with your".split()
)


def what_is_asked(words: str) -> Literal["concept", "solution"] | None:
    """`solution` for a request for the task's code or answer, `concept` for a question about how something works or
    what it means; None for anything else (an error, a claim that a task is done, a dataset, chit-chat)."""
    if _SOLUTION.search(words) or takes_over(words):
        return "solution"
    asked = _ASKED_ERROR.sub(" ", words)
    if _CONCEPT.search(words) and (not _ERROR.search(asked) or _about_an_error(words)) and not _NEXT.search(words):
        return "concept"
    return None


def _about_an_error(words: str) -> bool:
    """A question about what an error means that quotes none of theirs ("what does a KeyError actually mean in
    pandas? Not my code, just the idea."): no message, no code, nothing said done."""
    error = _ERROR_LINE.search(words)
    return (
        error is not None
        and ":" not in error.group(0)
        and not student_code(words)
        and not _DONE.search(words)
        and "traceback" not in words.casefold()
    )


_PURPOSE = re.compile(
    r"\b(?:to|can|could|will|would|should|help\s+me|how\s+(?:do|can|should)\s+i)\s+(?:complete|finish|solve|submit)\b"
    r"|(?:用来|拿来|来|去|能|可以|才能|怎么|如何|要|想|帮我)(?:完成|做完|写完|搞定)"
    # asked of the tutor, not said done ("要不你直接帮我把年龄算出来")
    r"|(?:你|帮我)(?:直接|先)?(?:帮我)?(?:把.{0,12}?)?(?:算出|算一下|计算出)",
    re.IGNORECASE,
)
"""A task's completion as a purpose or a wish, not a claim ("can I use it to complete the average age task?",
"可以用来完成平均年龄这道题吗")."""


def shows_work(words: str) -> bool:
    """Whether the student's words claim a task is done or show their work (code, its output): something a
    `validation_report` can judge. "Can I start task_2_4?" shows none, nor does a question about code that says
    nothing was done ("what does df.info() tell me that df.head() doesn't?"), nor completion said as a purpose
    ("可以用来完成这道题吗")."""
    words = _PURPOSE.sub(" ", words)
    if _WORK.search(words) is None:
        return False
    return _DONE.search(words) is not None or not _QUESTION.search(words)


_TASK_WORD = re.compile(r"\b(?:task|exercise|assignment)s?\b|任务|练习|作业|题", re.IGNORECASE)
_NUMBERED = re.compile(r"(?<![\d.])(\d+)[._](\d+)(?![\d.])")


_NTH = re.compile(
    rf"第\s*([1-9]|[{ZH_NUMERALS}]{{1,3}})\s*(?:道|个)?\s*(?:题|任务|练习|作业)"
    r"|\b(?:task|exercise|assignment|question)\s*(?:no\.?|number|#)?\s*([1-9])\b(?![._]\d)"
    r"|\b([1-9])(?:st|nd|rd|th)\s+(?:task|exercise|assignment|one)\b"
    r"|\b(first|second|third|fourth|fifth|last)\s+(?:task|exercise|assignment)\b",
    re.IGNORECASE,
)
_ORDINALS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5}


def _named_task(words: str, catalog: TaskCatalog) -> Task | None:
    """The first task of the catalog the words name by its id ("task_2_3", "task 2.3"), by its number when they speak
    of a task ("the average age task (2.2)", "2.3 那个任务"), by its place in the course ("第4题", "第二个任务", "task
    4", "the last exercise"), or by its title in either language, the longest title said ("'average age per city'"
    before "the average age", "合并两张表那题")."""
    ids = {t.id: t for t in catalog.tasks}
    named = _TASK.findall(words) or (_NUMBERED.findall(words) if _TASK_WORD.search(words) else [])
    if (task := next((task for major, minor in named if (task := ids.get(f"task_{major}_{minor}"))), None)) is not None:
        return task
    if (nth := _NTH.search(words)) is not None:
        said = next(g for g in nth.groups() if g).casefold()
        place = len(catalog.tasks) if said == "last" else _ORDINALS.get(said) or chinese_number(said) or 0
        return catalog.tasks[place - 1] if 1 <= place <= len(catalog.tasks) else None
    return _titled(words, catalog)


_ARTICLE = re.compile(r"^(?:the|a|an)\s+", re.IGNORECASE)
_ONE_WORD_NAMED = re.compile(r"\b([a-z][a-z-]{3,})\s+(?:one|task|exercise|assignment|question|part)\b")
"""A task called by one word of its title ("the basics one", "the merge task")."""
_SAME_WORD = re.compile(r"\b(?:mean|avg)\b")
_PER_CITY = re.compile(
    r"\b(?:by|for\s+each|in\s+each|each)\s+city\b|(?:按|各|分|每个?)\s*城市(?:的|来|去)?(?:算|计算|求)?"
)
"""Per city said otherwise ("by city", "按城市算平均年龄"): the title's "per city", "每个城市的"."""


def _spelled_right(words: str, catalog: TaskCatalog) -> str:
    """`words` with each word of five letters or more that is one edit from exactly one word of the catalog's English
    titles written as the title does ("the averge age one": average)."""
    known = {w for task in catalog.tasks for w in _WORD.findall(task.title.casefold()) if len(w) >= 5}

    def right(match: re.Match[str]) -> str:
        word = match.group(0)
        if len(word) < 5 or word in known:
            return word
        near = [k for k in known if Levenshtein.distance(word, k, score_cutoff=1) <= 1]
        return near[0] if len(near) == 1 else word

    return _WORD.sub(right, words)


_QUOTED_CODE = re.compile(r"```.*?(?:```|$)|`[^`\n]*`", re.S)
"""Code and output a student quotes in fences or backticks."""
_SUFFIX = re.compile(r"(?<=[a-z]{3})(?:ing|ed|es|s|e)\b")


def _stems(text: str) -> str:
    """English words with their ending cut ("merging two tables" and "merge two tables" are both "merg two tabl")."""
    return " ".join(_SUFFIX.sub("", w) for w in _WORD.findall(text.casefold()))


def _titled(words: str, catalog: TaskCatalog) -> Task | None:
    """The task whose title (without its article, in any language the catalog says it) the words hold, the longest,
    an English word one typing slip off counting as the title's; else the one task whose objectives' method the words
    spell, however joined ("the group-by-city one": groupby())."""
    words = _QUOTED_CODE.sub(" ", words)  # the prose names the task, not the code's names ("avg_age", 'mean')
    # a title is said in prose, not by unfenced code (sixteenth set: `.mean()` read as "the average age"); a method
    # the code calls may still spell the task (`pd.merge(`), below
    code = student_code(words).strip()
    prose = words.replace(code, " ") if code else words
    # "the mean age task": the average age
    folded = _SAME_WORD.sub("average", re.sub(r"[\s_-]+", " ", _spelled_right(prose.casefold(), catalog)))
    folded = _PER_CITY.sub(lambda m: "每个城市的" if has_chinese(m.group(0)) else "per city", folded)
    bare = re.sub(r"\s+|的", "", folded)  # "每个城市平均年龄" says 每个城市的平均年龄
    stems = _stems(folded)
    titles = [
        (len(title), task)
        for task in catalog.tasks
        for said in (task.title, *(w.title for w in task.said.values()))
        if len(title := _ARTICLE.sub("", said.casefold()).strip()) >= 4
        and (
            title in folded
            or (has_chinese(title) and re.sub(r"\s+|的", "", title) in bare)
            or (not has_chinese(title) and f" {_stems(title)} " in f" {stems} ")
        )
    ]
    # an English title's words in another order, close together ("the per-city average age exercise")
    said_stems = stems.split()
    titles += [
        (len(title), task)
        for task in catalog.tasks
        for title in [_ARTICLE.sub("", task.title.casefold()).strip()]
        if len(wanted := set(_stems(title).split())) >= 2
        and any(
            len(wanted - set(said_stems[i : i + len(wanted) + 2])) <= (1 if len(wanted) >= 4 else 0)
            for i in range(len(said_stems))
        )
    ]  # a title of four words or more with one left out too ("the per city average" of average age per city)
    if titles:
        return max(titles, key=lambda found: found[0])[1]
    # a Chinese title one character slip off ("平均年令那题" for 平均年龄: a homophone the input method picked)
    slipped = [
        (len(title), task)
        for task in catalog.tasks
        for said in task.said.values()
        if len(title := re.sub(r"\s+|的", "", said.title)) >= 4
        and has_chinese(title)
        and any(
            Hamming.distance(bare[i : i + len(title)], title, score_cutoff=1) <= 1
            for i in range(len(bare) - len(title) + 1)
        )
    ]
    if slipped:
        return max(slipped, key=lambda found: found[0])[1]
    # the start of a Chinese title, then the word for a task ("合并那题" for 合并两张表)
    started = {
        task.id: task
        for task in catalog.tasks
        for said in task.said.values()
        for n in range(2, len(said.title))
        if has_chinese(said.title[:n])
        and re.search(rf"{re.escape(said.title[:n])}[\u4e00-\u9fff]?(?:的|那|这)?(?:道|个)?(?:题|任务|练习)", words)
    }
    if len(started) == 1:
        return next(iter(started.values()))
    # one word of one title only, said of a task ("the basics one", "for the merge task")
    single = {
        task.id: task
        for said in _ONE_WORD_NAMED.findall(prose.casefold())
        for task in catalog.tasks
        if _stems(said) in _stems(task.title).split()
        and sum(_stems(said) in _stems(other.title).split() for other in catalog.tasks) == 1
    }
    if len(single) == 1:
        return next(iter(single.values()))
    joined = re.sub(r"[\s_\-]+", "", words.casefold())  # as written: "group-by-city" spells groupby
    spelled = [
        task
        for task in catalog.tasks
        if any(
            len(m) >= 5 and re.sub(r"_", "", m.casefold()) in joined for m in _CALLED.findall(task.learning_objectives)
        )
    ]
    return spelled[0] if len(spelled) == 1 else None


def _task_of(words: str, catalog: TaskCatalog) -> Task | None:
    """The task the words name ("task_2_3"), else the one task whose objectives name a method their code calls, else
    the one whose title and objectives share most words with theirs ("merge"), else None (the session's current task
    is meant)."""
    if (task := _named_task(words, catalog)) is not None:
        return task
    # the methods their code calls say most ("groupby("); reading the file is every task's first line, no task's own
    called = {m.casefold() for m in _CALLED.findall(words)} - {"read_csv", "read_excel", "print"}
    if called and len(fits := [t for t in catalog.tasks if called & _words_of(t.learning_objectives)]) == 1:
        return fits[0]
    # else the task whose title and objectives share most words with theirs, as stems ("merging": merge), a word
    # of one task only weighing more than one of several ("KeyError" and "column": task_2_2; seventeenth set: "After
    # merging, some of my columns came out as count_x" is of the merge, not of the columns of the basics)
    said = {_stems(w) for w in _WORD.findall(words) if len(w) >= 4 and w.casefold() not in _COMMON}
    held = {t.id: {_stems(w) for w in _WORD.findall(f"{t.title} {t.learning_objectives}")} for t in catalog.tasks}
    weight = {w: 1 / sum(w in stems for stems in held.values()) for w in said if any(w in s for s in held.values())}
    shared = {task: sum(weight.get(w, 0) for w in said & stems) for task, stems in held.items()}
    best = max(shared.values(), default=0)
    fits = [t for t in catalog.tasks if best and shared[t.id] == best]
    return fits[0] if len(fits) == 1 else None


def _words_of(text: str) -> set[str]:
    return {w.casefold() for w in _WORD.findall(text)}


def _small_talk_packet(kind: SmallTalk) -> dict[str, Any]:
    """Code's packet for a greeting, thanks or goodbye, on the session's current task: code says the reply."""
    return {
        "task_id": CURRENT_TASK,
        "task_status": "not_started",  # the current task's own status takes its place (`on_current_task`)
        "guidance_for_ca": f"Answer the student's {kind} in one friendly sentence and offer help with the course.",
    }


def asks_next(words: str) -> bool:
    """Whether the words ask where to start or what to do next, and nothing else (no work, no error)."""
    return bool(_NEXT.search(words)) and not _reports_error(words) and not shows_work(words)


def _start_packet(task: Task | None) -> dict[str, Any]:
    """Code's packet for "can I start `task` (None: the session's current one) on my file?": everything it rests on
    is code's (the files' inspection, made by the packet tool, whose binding updates it applies: a file that does not
    fit blocks the analysis and says why), so no model request plans it. The assistant words the reply from it."""
    if task is None:
        guidance = "Say whether the task can start on this file, from what the check found."
    else:
        guidance = (
            f"Say whether {task.id} can start on this file, from what the check found; if it can, suggest one first "
            f"step toward: {task.learning_objectives}."
        )
    return {"task_id": task.id if task else CURRENT_TASK, "task_status": "not_started", "guidance_for_ca": guidance}


def _next_packet(task: Task | None) -> dict[str, Any]:
    """Code's packet for "what should I do next?": where the task (None: the session's current one) stands."""
    return {
        "task_id": task.id if task else CURRENT_TASK,
        "task_status": "not_started",  # the current task's own status takes its place (`on_current_task`)
        "guidance_for_ca": "Tell the student where their task stands and what it is about, and ask for a first step.",
    }


_AFTER = {
    "concept": "Explain the idea the student asks about in plain words, from the idea in these notes, and help them "
    "take the next step themselves.",
    "solution": "The student asked for the solution: do not give it. Explain the idea behind it in plain words, from "
    "the idea in these notes, and ask what they would try first.",
    "diagnosis": "Tell the student why their error happens and where to look, from these notes; let them write the "
    "fix themselves.",
    "validation": "Tell the student what the check of their work found, from these notes, and what to do next.",
}


def _packet_after(
    task: Task | None, consulted: Literal["concept", "solution", "diagnosis", "validation"]
) -> dict[str, Any]:
    """Code's packet after the first look's consultation: the task (None: the session's current one) is under way
    (the packet tool calls it done when the first look's validation found the work valid), and the assistant words
    what the expert said (its notes carry the expert's words). The orchestrator's model has nothing left to plan."""
    task_id = task.id if task is not None else CURRENT_TASK
    return {"task_id": task_id, "task_status": "in_progress", "guidance_for_ca": _AFTER[consulted]}


def _diagnosis_request(words: str, task: Task | None) -> dict[str, Any] | None:
    """The consult_expert request that diagnoses the error the student quotes (on `task`, None: the session's
    current one), with the code they ran when their words hold it (the sandbox reruns it); None when they quote
    neither code nor the error's own message ("task_2_2 gives me a KeyError": the orchestrator words it then)."""
    code, error = student_code(words), _ERROR_LINE.search(words) or _WRONG_RESULT.search(words)
    if error is None or not (code or ":" in error.group(0)):
        return None
    # the error's line, or the line that says the result is wrong ("the number is clearly wrong?? …")
    quoted = error.group(0).strip() if error.re is _ERROR_LINE else _line_of(words, error.start())
    context: dict[str, Any] = {"task_id": task.id if task else CURRENT_TASK, "error_message": quoted[:500]}
    if task is not None:
        context["task_requirements"] = task.requirements
    if code:
        context["student_code_snippet"] = code
    return {
        "expert_id": "data_inspector",
        "question": f"Why does the student's code for {task.id if task else 'their task'} raise {quoted}?",
        "context": context,
        "expected_output_type": "error_diagnosis",
        "scenario_id": "error_diagnosis",
        "reasoning": "The student quotes an error"
        + (" with the code that raised it; the sandbox reproduces it on their data." if code else "."),
    }


def _line_of(text: str, at: int) -> str:
    """The line of `text` that holds the character at `at`."""
    start = text.rfind("\n", 0, at) + 1
    end = text.find("\n", at)
    return text[start : end if end >= 0 else len(text)].strip()


def _validation_request(words: str, task: Task | None) -> dict[str, Any]:
    """The consult_expert request that validates the student's claim that `task` (None: the session's current one)
    is done (their words, with any code and output in them, as the evidence)."""
    context: dict[str, Any] = {"task_id": task.id if task else CURRENT_TASK}
    if task is not None:
        context |= {"task_requirements": task.requirements, "learning_objectives": task.learning_objectives}
    return {
        "expert_id": "data_inspector",
        "question": f"Is the student's work on {task.id if task else 'their current task'} complete and correct?",
        "context": {**context, "student_evidence": words.strip()[:2000]},
        "expected_output_type": "validation_report",
        "scenario_id": "progress_validation",
        "reasoning": "The student says the task is done; the packet may call it done only on a valid validation.",
    }


def first_consultation(
    catalog: TaskCatalog, uploads: Path | None = None
) -> Callable[[str], list[tuple[str, dict[str, Any]]]]:
    """The orchestrator's first look: for a concept question or a request for the solution about a task the words
    point at, the consultation of the concept explainer (the student's words as the question); else, when the words
    name a task and ask whether it can start on the files in `uploads` (no work shown, no error): code's packet,
    whose tool inspects the files and ends the turn (no model request); else, when the words name a task: the
    validation of the student's work if they say it is done or show it (and report no error), and the inspection of
    each file in `uploads` for that task (a file with a standing inspection is answered from it: see the
    orchestrator's `consult_expert`); else nothing."""

    def _on_no_task_named(
        words: str, *, files: list[str], work: bool, failed: bool
    ) -> list[tuple[str, dict[str, Any]]]:
        """Words that name no task: small talk, "can I use this file?" and "what should I do next?" are code's
        packet on the session's current task (the uploads inspected for it); work shown with its code is validated
        against the task it points at (its objectives' words: "groupby"), else the current one; else nothing."""
        if (kind := small_talk(words)) is not None:
            return [(SUBMIT_PACKET_TOOL_NAME, _small_talk_packet(kind))]
        if (
            not work
            and not failed
            and (_ABOUT_FILE.search(words) or (files and (_ABOUT_STARTING.search(words) or asks_next(words))))
        ):
            # the packet tool inspects the files first (none uploaded: the task is blocked until one is)
            return [(SUBMIT_PACKET_TOOL_NAME, _start_packet(None))]
        if asks_next(words):
            return [(SUBMIT_PACKET_TOOL_NAME, _next_packet(None))]
        pointed = _task_of(words, catalog)
        if failed and (diagnosis := _diagnosis_request(words, pointed)) is not None:
            return [
                (CONSULT_EXPERT_TOOL_NAME, diagnosis),
                (SUBMIT_PACKET_TOOL_NAME, _packet_after(pointed, "diagnosis")),
            ]
        if work and not failed and (student_code(words) or (pointed is not None and _DONE.search(words))):
            # work shown, or a task it points at said done ("finished the basics one 👍 can i move on to 2.2
            # now?"): validated before anything next (no evidence is said so by code's validation)
            validation = (CONSULT_EXPERT_TOOL_NAME, _validation_request(words, pointed))
            return [validation, (SUBMIT_PACKET_TOOL_NAME, _packet_after(pointed, "validation"))]
        return []

    def first_look(words: str) -> list[tuple[str, dict[str, Any]]]:
        if off_course(words):
            return [(SUBMIT_PACKET_TOOL_NAME, _small_talk_packet("off_course"))]
        asked = what_is_asked(words)
        if asked is None:
            named = _named_task(words, catalog)
            files = uploaded_files(uploads) if uploads is not None else []
            work, failed = shows_work(words), _reports_error(words)
            if named is None:
                return _on_no_task_named(words, files=files, work=work, failed=bool(failed))
            if asks_next(words) and not files:
                return [(SUBMIT_PACKET_TOOL_NAME, _next_packet(named))]
            if not work and not failed and (_ABOUT_STARTING.search(words) or _ABOUT_FILE.search(words)):
                # the packet tool inspects the files first (none uploaded: the task is blocked until one is)
                return [(SUBMIT_PACKET_TOOL_NAME, _start_packet(named))]
            if work and not failed:  # the packet rests on the validation (the files are not judged again)
                validation = (CONSULT_EXPERT_TOOL_NAME, _validation_request(words, named))
                return [validation, (SUBMIT_PACKET_TOOL_NAME, _packet_after(named, "validation"))]
            if failed and (diagnosis := _diagnosis_request(words, named)) is not None:
                # the packet rests on the diagnosis, which says what the check of the files found
                return [
                    (CONSULT_EXPERT_TOOL_NAME, diagnosis),
                    (SUBMIT_PACKET_TOOL_NAME, _packet_after(named, "diagnosis")),
                ]
            return [(CONSULT_EXPERT_TOOL_NAME, inspection_request(f, named.id)) for f in files]
        task = _task_of(words, catalog)
        if task is None and asked == "concept" and not COURSE_WORDS.search(words):
            return []  # nothing of the course ("帮我写一篇作文"): the orchestrator's to word, the reply checked
        if asked == "solution":
            # the idea behind the task is explained, not the student's request (seen: "直接把答案代码发我吧" explained
            # as a concept, word for word), asked in the student's language: the explainer answers in the language it
            # is asked in, and "write it in one line" is the student's words, not the explainer's brief
            lang = "zh-CN" if has_chinese(words) else "en"
            # the steps the task teaches, not its title (fourteenth to sixteenth sets: "用你自己的数据学 pandas 基础"
            # written back as the definition three times, refused, the student told code's fallback)
            question = (
                t("tutor.solution.question", lang, steps=task.words_in(lang).learning_objectives.rstrip("。."))
                if task is not None
                else t("tutor.solution.question_current", lang)
            )
            # what the student is after, in their language, and nothing an explanation could say back (the question
            # holds the task's title: "the definition repeats the student's words" refused it three times)
            confusion = t("tutor.solution.confusion", lang)
            why = "The student asks for the solution; explain the idea behind it so the tutor can guide without code."
        else:
            question, confusion = words.strip()[:1000], words.strip()[:500]
            why = "The student is confused by a concept; explain it so the tutor can guide them."
        context: dict[str, Any] = {"task_id": task.id if task is not None else CURRENT_TASK}
        if task is not None:
            # the objectives in the student's language: a small model writes in the language of what it is given
            # (seen: a Chinese request, the English objectives, an English definition three times)
            objectives = task.words_in("zh-CN" if has_chinese(words) else "en").learning_objectives
            context |= {"task_requirements": task.requirements, "learning_objectives": objectives}
        request = {
            "expert_id": "concept_explainer",
            "question": question,
            "context": {**context, "student_confusion": confusion},
            "expected_output_type": "concept_explanation",
            "scenario_id": "concept_clarification",
            "reasoning": why,
        }
        return [(CONSULT_EXPERT_TOOL_NAME, request), (SUBMIT_PACKET_TOOL_NAME, _packet_after(task, asked))]

    return first_look
