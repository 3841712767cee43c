"""The paper to PDF, offline: Markdown → Typst by code → PDF with the figures embedded and Chinese text in a CJK
font; bad input is a clear ToolError and writes nothing."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import pytest

from consulta.apps.modeling._paper import latex_to_typst_math, markdown_to_typst, render_pdf
from consulta.runtime import ToolError


def _png(path: Path) -> None:
    """A 2×2 PNG written by hand (no plotting library needed)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    raw = b"".join(b"\x00" + b"\xff\x00\x00" * 2 for _ in range(2))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", 2, 2, 8, 2, 0, 0, 0))
        + chunk(b"IDAT", zlib.compress(raw))
        + chunk(b"IEND", b"")
    )


PAPER = """# 区域用电需求预测

## 摘要

我们用 **季节性回归** 预测 2025 年的月度需求，检验期 MAPE 为 *3.2%*（见 `fit.py`）。

## 模型

$$
\\hat{y}_t = \\alpha + \\beta t + \\sum_{k=1}^{12} \\gamma_k m_{k,t} + \\frac{\\theta}{2}
$$

| 月份 | 预测 (GWh) |
|---|---|
| 2025-07 | 9021.4 |

![图 1: 月度需求](../figures/demand.png)

- 一项 with #hash, @at, <angle> and // slashes
"""


def test_a_chinese_paper_with_maths_a_table_and_a_figure_renders(tmp_path: Path) -> None:
    _png(tmp_path / "figures" / "demand.png")
    (tmp_path / "paper").mkdir()
    (tmp_path / "paper" / "paper.md").write_text(PAPER, encoding="utf-8")
    pdf = render_pdf(tmp_path)
    assert pdf == tmp_path / "paper" / "paper.pdf"
    data = pdf.read_bytes()
    assert data.startswith(b"%PDF") and b"/Image" in data
    assert b"NotoSerifCJK" in data or b"NotoSansCJK" in data  # the Chinese text has a font with its glyphs
    typ = (tmp_path / "paper" / "paper.typ").read_text(encoding="utf-8")
    assert "caption: [月度需求]" in typ and "hat(y)" in typ and "\\#hash" in typ
    assert sorted(p.name for p in (tmp_path / "paper").iterdir()) == ["paper.md", "paper.pdf", "paper.typ"]


def test_latex_maths_becomes_typst_maths() -> None:
    assert latex_to_typst_math(r"\frac{a}{b} + x_{i}^2 \leq \alpha") == "(a)/(b) + x _(i)^(2) <= alpha"
    assert latex_to_typst_math(r"\text{MAPE} = \sqrt{ab}") == '"MAPE" = sqrt(a b)'


def test_an_equation_typst_cannot_read_is_kept_as_its_latex(tmp_path: Path) -> None:
    (tmp_path / "paper").mkdir()
    (tmp_path / "paper" / "paper.md").write_text("# T\n\nSee $\\unknowncommand{x}$ here.\n", encoding="utf-8")
    render_pdf(tmp_path)
    assert '#raw("\\\\unknowncommand{x}"' in (tmp_path / "paper" / "paper.typ").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("paper", "code"),
    [
        (None, "paper_missing"),
        ("![x](../figures/none.png)\n", "figure_missing"),
        ("![x](../../../etc/x.png)\n", "figure_missing"),
    ],
)
def test_bad_input_is_a_clear_error_and_writes_nothing(tmp_path: Path, paper: str | None, code: str) -> None:
    (tmp_path / "paper").mkdir()
    if paper is not None:
        (tmp_path / "paper" / "paper.md").write_text(paper, encoding="utf-8")
    with pytest.raises(ToolError) as raised:
        render_pdf(tmp_path)
    assert raised.value.error_code == code
    assert not (tmp_path / "paper" / "paper.pdf").exists() and not (tmp_path / "paper" / "paper.typ").exists()


def test_a_lone_first_heading_is_the_title() -> None:
    typ = markdown_to_typst("# Title\n\n## One\n\ntext\n\n### Sub\n", paper_dir=Path("/tmp"), root=Path("/tmp"))
    assert typ.splitlines()[0].startswith("#align(center") and "\n= One\n" in typ and "\n== Sub\n" in typ


def test_the_papers_own_section_numbers_are_not_numbered_again(tmp_path: Path) -> None:
    """ "2 1 Problem analysis" was Typst's number before the paper's own: the PDF's headings are numbered once."""
    from consulta.apps.modeling._paper import _preamble

    assert "heading(numbering" not in _preamble(cjk=False) and "heading(numbering" not in _preamble(cjk=True)
    typ = markdown_to_typst("# T\n\n## 1 Problem analysis\n\nx\n", paper_dir=tmp_path, root=tmp_path)
    assert "\n= 1 Problem analysis\n" in typ


def test_a_sentence_cut_at_its_bound_and_a_cleaning_never_done_are_left_out(tmp_path: Path) -> None:
    from consulta.apps.modeling._compose import PaperParts, compose_paper, whole_sentences

    assert (
        whole_sentences("The model is a Leslie matrix. The model has a F", bound=47) == "The model is a Leslie matrix."
    )
    assert whole_sentences("A short text without an end", bound=200) == "A short text without an end"
    assert whole_sentences("参数为 3.5 时模型", bound=10) == ""  # no sentence end: nothing whole is left
    parts = PaperParts(
        title="T", lang="en", summary="We removed the outliers first. Counts rise with age.",
        discussion="Outliers were dropped before fitting. The fit is good.", data_notes="remove outliers",
    )  # fmt: skip
    paper = compose_paper(tmp_path, parts).read_text(encoding="utf-8")
    assert "outlier" not in paper.lower() and "Counts rise with age." in paper and "The fit is good." in paper


def test_a_sentence_naming_a_model_that_did_not_run_is_left_out(tmp_path: Path) -> None:
    """The modeler wrote "linear regression" before the tasks' families were chosen, and a pharmacokinetic model
    ran: the model section says what ran (code's line per task), the team's sentences naming another family of the
    library are left out, its other sentences stay; the statement's tasks are never cut."""
    from consulta.apps.modeling._compose import PaperParts, compose_paper
    from consulta.apps.modeling._task_models import TaskModel, models_not_run, models_run
    from consulta.apps.modeling._tasks import Task

    models = [
        TaskModel(task=Task(number=1, text="Estimate the rates.", asks="estimate"), status="ran", family="pharmacokinetics"),
        TaskModel(task=Task(number=2, text="Fit a regression.", asks="estimate"), status="could_not", family="regression"),
    ]  # fmt: skip
    not_run = models_not_run(models)
    assert "Linear regression" in not_run and "回归" in not_run and "regression" in not_run
    assert not any("pharmacokinetic" in n.lower() or "药代动力学" in n for n in not_run)
    parts = PaperParts(
        title="T", lang="en", tasks=["Fit a regression."], assumptions=["A linear regression fits the rates.", "The dose is absorbed whole."],
        method="We combine linear regression with half-lives. The drug follows first-order kinetics.",
        abstract="A pharmacokinetic model of the dose. 我们用回归估计速率。", models=models_run(models, lang="en"), not_run=not_run,
    )  # fmt: skip
    paper = compose_paper(tmp_path, parts).read_text(encoding="utf-8")
    assert "- Task 1: One-compartment pharmacokinetic model.\n- Task 2: no model of the library ran." in paper
    assert "linear regression" not in paper.lower() and "回归" not in paper
    assert "The drug follows first-order kinetics." in paper and "The dose is absorbed whole." in paper
    assert "A pharmacokinetic model of the dose." in paper and "- Fit a regression." in paper  # the task as stated


def test_a_list_item_cut_at_its_bound_is_left_out_and_code_names_the_section_of_the_numbers(tmp_path: Path) -> None:
    """ "Markov Chain is a suitable model for this problem as it can capture the temporal" was an assumption the
    item's bound (80 characters) stopped mid-sentence; with the answers by task, the numbers are in section 6."""
    from consulta.apps.modeling._compose import PaperParts, compose_paper
    from consulta.apps.modeling._director import whole_items
    from consulta.apps.modeling._tasks import Task, TaskAnswer
    from consulta.apps.modeling._team import LINE_LENGTH, ModelerWork

    cut = "Markov Chain is a suitable model for this problem as it can capture the temporal dependence of weather"
    long = ("A state. Then a long one cut off " + "x" * 60)[:LINE_LENGTH]
    work = ModelerWork(assumptions=[cut[:LINE_LENGTH], "Days follow a chain.", long])
    assert whole_items(work, "assumptions") == ["", "Days follow a chain.", "A state."]
    answer = TaskAnswer(task=Task(number=1, text="Rank.", asks="ranking"), answered=True, text="Model: x.")
    paper = compose_paper(tmp_path, PaperParts(title="T", lang="en", answers=[answer])).read_text(encoding="utf-8")
    assert "Every number above is taken from the result files (section 6)." in paper and "## 6 Answers by task" in paper


def test_the_teams_whole_prose_without_its_stop_ends_as_a_sentence(tmp_path: Path) -> None:
    """Seen on the embedded model (roads_network_zh): the researcher's "Dijkstra算法" and the modeler's
    "使用Dijkstra算法计算从A到E的最短路径及其长度", whole answers under their bound written without a stop, stood in the
    paper as paragraphs that read as cut sentences; they end with the language's stop, a sentence that ends keeps its."""
    from consulta.apps.modeling._compose import PaperParts, compose_paper

    parts = PaperParts(
        title="T", method="Dijkstra算法", model_description="使用Dijkstra算法计算从A到E的最短路径及其长度",
        summary="三个问题。", discussion="It is simple (and fast)", conclusion="",
    )  # fmt: skip
    paper = compose_paper(tmp_path, parts).read_text(encoding="utf-8")
    assert "\nDijkstra算法。\n" in paper and "\n使用Dijkstra算法计算从A到E的最短路径及其长度。\n" in paper
    assert "\n三个问题。\n" in paper and "\nIt is simple (and fast)。\n" in paper  # a Chinese paper's stop
    english = compose_paper(tmp_path, PaperParts(title="T", lang="en", summary="Three tasks (see below)")).read_text()
    assert "\nThree tasks (see below).\n" in english and "\n(none)\n" in english  # nothing written: code's words


def test_a_paragraph_the_team_wrote_for_two_sections_and_a_repeated_assumption_are_said_once(tmp_path: Path) -> None:
    """Seen on the embedded model (deer_leslie_zh): one sentence was the abstract, the discussion and the
    conclusion, and an assumption stood twice in the list; the later copies give way to code's words."""
    from consulta.apps.modeling._compose import PaperParts, compose_paper

    same = "模型的优缺点包括 Leslie 矩阵的主特征值（年增长率）和种群的稳定移除率。"
    parts = PaperParts(
        title="T", abstract=same, discussion=same, conclusion=same.rstrip("。"),
        assumptions=["假设雌鹿从 2 岁开始繁殖", "假设数量在繁殖中保持不变", "假设数量在繁殖中保持不变"],
    )  # fmt: skip
    paper = compose_paper(tmp_path, parts).read_text(encoding="utf-8")
    assert paper.count(same) == 1 and paper.count("假设数量在繁殖中保持不变") == 1
    assert "模型的局限：它只利用了题目给出的数据" in paper and "各项数值均来自结果文件，见第 5 节。" in paper
    kept = compose_paper(tmp_path, PaperParts(title="T", abstract="A.", discussion="B.", conclusion="C.")).read_text()
    assert "\nA.\n" in kept and "\nB.\n" in kept and "\nC.\n" in kept


def test_an_assumption_copying_a_line_of_the_problem_is_none() -> None:
    """Seen on the embedded model (bank_queue_zh): the problem's title, a task line and the data files' line were the
    model's assumptions in the paper."""
    from consulta.apps.modeling._director import not_given

    given = "银行窗口的设置\n题目：银行窗口的设置\n# 银行窗口的设置\n任务一：估计顾客的到达率与服务率。\n数据文件：银行.csv（400 行）：顾客, 到达间隔_分钟"
    items = ["银行窗口的设置", "任务一：估计顾客的到达率与服务率", "数据文件：银行.csv（400 行）：顾客, 到达间隔_分钟",
             "顾客的到达服从泊松过程。", "服务时间服从指数分布"]  # fmt: skip
    assert not_given(items, given) == ["顾客的到达服从泊松过程。", "服务时间服从指数分布"]


def test_a_dot_inside_a_file_name_or_a_number_ends_no_sentence(tmp_path: Path) -> None:
    """Seen on the embedded model (bank_queue_zh): the abstract's "通过读取`results/task1_queue.json`文件来获取这些信息。"
    was split at ".json": its half with a digit left out, "json`文件来获取这些信息。" stood in the abstract."""
    from consulta.apps.modeling._compose import PaperParts, compose_paper

    abstract = (
        "我们用排队模型估计到达率。通过读取`results/task1_queue.json`文件来获取这些信息。We keep 0.5 of it. It ends."
    )
    paper = compose_paper(tmp_path, PaperParts(title="T", abstract=abstract)).read_text(encoding="utf-8")
    assert "\n我们用排队模型估计到达率。 It ends.\n" in paper and "json`" not in paper


def test_a_sentence_of_the_team_with_a_number_no_file_holds_is_left_out(tmp_path: Path) -> None:
    """Seen on the embedded model (warehouse_mc_en, customers_kmeans_en): the reader's analysis, written before any
    result, said "3,200 + 1,000 = 4,200 tonnes" and "the second largest group having 50 customers"; the paper gate
    sent the paper back for it. Such a sentence is left out (the gate's own test), a number the problem, the data or
    a result holds stays."""
    import json

    from consulta.apps.modeling._checks import check_paper_numbers
    from consulta.apps.modeling._compose import PaperParts, compose_paper

    (tmp_path / "problem").mkdir()
    (tmp_path / "problem" / "problem.md").write_text("It holds 3,200 tonnes for 30 days.", encoding="utf-8")
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "task1_monte_carlo.json").write_text(json.dumps({"p95": 3221.0}), encoding="utf-8")
    summary = "The depot holds 3,200 tonnes. It should hold 3,200 + 1,000 = 4,200 tonnes. We need 3221 at most."
    parts = PaperParts(title="T", lang="en", summary=summary, method="Groups of 50 and 20 customers. Resample days.")
    paper = compose_paper(tmp_path, parts).read_text(encoding="utf-8")
    assert "\nThe depot holds 3,200 tonnes. We need 3221 at most.\n" in paper and "4,200" not in paper
    assert "\nResample days.\n" in paper and "50" not in paper
    assert check_paper_numbers(tmp_path) == []
