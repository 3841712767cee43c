"""`consulta quiz take` in the terminal (typer's CliRunner with typed input): the profile asked field by field (a bad
value asked again, with the reason in the person's language), items answered by number, feedback after each, a test
left half-way (end of input) continued by the next `consulta quiz take`, and the end with θ ± SE, the text plot and
the review. And apps' own commands are mounted as `consulta <app> <command>` with no app named by the CLI."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine, func, select
from typer.testing import CliRunner

from consulta.apps import TerminalPart, get_app, register_app
from consulta.apps.quiz._cat import CatRules
from consulta.apps.quiz._cat_sessions import Point, TestSessions, test_items
from consulta.apps.quiz._take_cli import commands, text_plot
from consulta.config import Settings
from consulta.frontends.cli import app as cli
from consulta.i18n import t
from consulta.runtime import Store

from .test_cat_sessions import add_items, keyword_grader
from .test_take_web import quiz_app

runner = CliRunner()
RULES = CatRules(se_target=0.01, min_items=4, max_items=4, randomesque=1)
PROFILE_ZH = "2\nmany\n数据分析师\n做报表\nSQL，统计\n3\n"  # years "many" is refused and asked again: 3


def sessions(settings: Settings, store: Store) -> TestSessions:
    return TestSessions(store.engine, rules=RULES, short_answers=keyword_grader)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    engine = create_engine(f"sqlite:///{tmp_path}/consulta.db")
    add_items(engine, "en")
    add_items(engine, "zh-CN")
    engine.dispose()
    monkeypatch.setenv("CONSULTA_HOME", str(tmp_path))
    monkeypatch.setenv("CONSULTA_DATABASE_URL", f"sqlite:///{tmp_path}/consulta.db")
    monkeypatch.delenv("CONSULTA_LANG", raising=False)
    before = get_app("quiz") if "quiz" in __import__("consulta.apps", fromlist=["app_names"]).app_names() else None
    register_app(quiz_app(terminal=TerminalPart(commands=lambda: commands(sessions=sessions))))
    yield tmp_path
    if before is not None:
        register_app(before)


def answered(home: Path) -> int:
    engine = create_engine(f"sqlite:///{home}/consulta.db")
    try:
        with engine.connect() as conn:
            return conn.execute(
                select(func.count()).select_from(test_items).where(test_items.c.answer.is_not(None))
            ).scalar()
    finally:
        engine.dispose()


def test_take_a_test_leave_half_way_and_finish_it(home: Path) -> None:
    first = runner.invoke(cli, ["quiz", "take", "--lang", "zh-CN"], input=PROFILE_ZH + "1\n1\n")
    assert first.exit_code == 0, first.output
    out = first.output
    assert t("quiz.take.cli.profile_intro", "zh-CN") in out
    assert "个人资料的“工作年限”：请填一个整数。" in out  # the bad value, said once, and asked again
    assert t("quiz.take.cli.started", "zh-CN", max=4) in out
    assert out.count("第 1 题，最多 4 题") == 1 and "第 2 题，最多 4 题" in out and "第 3 题，最多 4 题" in out
    assert out.count("θ = ") >= 2  # the estimate after each answer
    assert t("quiz.take.cli.left", "zh-CN") in out  # input ended at item 3: the test is saved
    assert answered(home) == 2

    second = runner.invoke(cli, ["quiz", "take", "--lang", "zh-CN"], input="1\n1\n")
    assert second.exit_code == 0, second.output
    out = second.output
    assert t("quiz.take.cli.resuming", "zh-CN", answered=2, position=3) in out
    assert t("quiz.take.cli.profile_intro", "zh-CN") not in out
    assert t("quiz.take.cli.result_head", "zh-CN") in out and "能力估计：θ = " in out
    assert t("quiz.take.stop.max_items", "zh-CN") in out
    assert t("quiz.take.plot.x_text", "zh-CN") in out and out.count("│") >= 2 * 5  # the prior and 4 items
    assert t("quiz.take.cli.review_title", "zh-CN") in out
    assert answered(home) == 4

    again = runner.invoke(cli, ["quiz", "take", "--resume", "--lang", "en"])
    assert again.exit_code == 2 and t("quiz.take.error.no_open_test", "en") in again.output


def test_the_saved_profile_is_offered_and_new_starts_over(home: Path) -> None:
    runner.invoke(cli, ["quiz", "take", "--lang", "en"], input="3\n5\nEngineer\nBuilds pipelines\nSQL, Python\n1\n")
    assert answered(home) == 1
    kept = runner.invoke(cli, ["quiz", "take", "--new", "--lang", "en"], input="\n\n\n\n\n")  # Enter keeps each value
    assert kept.exit_code == 0, kept.output
    assert "[Engineer]" in kept.output and "[SQL, Python]" in kept.output and "[3]" in kept.output
    assert t("quiz.take.cli.started", "en", max=4) in kept.output


def test_apps_commands_are_mounted_under_their_names(home: Path) -> None:
    top = runner.invoke(cli, ["--help"])
    assert top.exit_code == 0 and "quiz" in top.output
    group = runner.invoke(cli, ["quiz", "--help"])
    assert group.exit_code == 0 and "take" in group.output
    assert runner.invoke(cli, ["ln2", "take"]).exit_code == 2  # an app with no commands of its own: no such command
    assert runner.invoke(cli, ["apps"]).exit_code == 0  # consulta's own commands come first


def test_text_plot() -> None:
    lines = text_plot(
        [Point(position=0, theta=0.0, se=1.0), Point(position=1, theta=0.8, se=0.7, is_correct=True)], lang="en"
    )
    assert len(lines) == 4 and "●" in lines[1] and "✓ +0.80 ± 0.70" in lines[2]
    assert lines[1].index("●") < lines[2].index("●")
