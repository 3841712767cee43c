"""The `consulta` command in process (typer's CliRunner): schemas, models, listings, errors."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import pytest
from typer.testing import CliRunner

from consulta.frontends.cli import app
from consulta.runtime import Store

SCRIPT = resources.files("consulta.apps.ln2").joinpath("data", "scripts", "ambiguous_thaw.yaml")


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CONSULTA_HOME", str(tmp_path))
    monkeypatch.setenv("CONSULTA_LANG", "en")
    monkeypatch.delenv("CONSULTA_DATABASE_URL", raising=False)
    return tmp_path


runner = CliRunner()


def test_tools_schema_is_openai_function_format(home: Path) -> None:
    result = runner.invoke(app, ["tools", "ln2", "--schema"])
    assert result.exit_code == 0, result.output
    schemas = json.loads(result.output)
    names = [s["function"]["name"] for s in schemas]
    assert names == [
        "query_inventory",
        "search_records",
        "empty_positions",
        "inventory_stats",
        "audit_history",
        "add_entry",
        "record_thaw",
        "batch_thaw",
        "rollback",
        "question",
    ]
    question = schemas[-1]["function"]
    assert question["parameters"]["required"] == ["questions"]
    item = question["parameters"]["properties"]["questions"]["items"]
    assert item["required"] == ["header", "question"]
    assert "Do not call question in parallel" in question["description"]
    thaw = next(s for s in schemas if s["function"]["name"] == "record_thaw")
    assert thaw["x-consulta-kind"] == "write"
    params = thaw["function"]["parameters"]
    assert not params.get("required") and {"box", "positions", "cell_line", "record_id"} <= set(
        params["properties"]
    )  # tubes in the user's words


def test_models_lists_the_default(home: Path) -> None:
    result = runner.invoke(app, ["models"])
    assert result.exit_code == 0, result.output
    assert "local *" in result.output and "openai:MODEL" in result.output and "scripted:PATH" in result.output


def test_asks_empty_and_unknown_ids_are_clear_errors(home: Path) -> None:
    assert "No pending asks" in runner.invoke(app, ["asks"]).output
    from consulta.frontends.cli import main  # the entry point maps ConsultaError to exit code 2

    with pytest.raises(SystemExit) as exit_info:
        import sys

        argv = sys.argv
        sys.argv = ["consulta", "answer", "ask_nope", "x"]
        try:
            main()
        finally:
            sys.argv = argv
    assert exit_info.value.code == 2


def test_chat_headless_defers_and_asks_lists_it_in_chinese(home: Path) -> None:
    with resources.as_file(SCRIPT) as script:
        result = runner.invoke(
            app, ["chat", "ln2", "--model", f"scripted:{script}", "-p", "帮我取一管K562", "--lang", "zh-CN"]
        )
    assert result.exit_code == 0, result.output
    assert "consulta answer" in result.output and "稍后" in result.output
    store = Store(f"sqlite:///{home / 'consulta.db'}")
    (ask,) = store.list_asks()
    listed = runner.invoke(app, ["asks", "--lang", "zh-CN"])
    assert "待回答的请求" in listed.output and ask.id[:10] in listed.output


def test_stop_cancels_a_waiting_run_and_its_asks(home: Path) -> None:
    with resources.as_file(SCRIPT) as script:
        runner.invoke(app, ["chat", "ln2", "--model", f"scripted:{script}", "-p", "帮我取一管K562"])
    store = Store(f"sqlite:///{home / 'consulta.db'}")
    (ask,) = store.list_asks()
    result = runner.invoke(app, ["stop", ask.run_id])
    assert result.exit_code == 0, result.output
    assert "cancelled" in result.output
    assert store.get_ask(ask.id).status.value == "cancelled"
    assert store.get_run(ask.run_id).status.value == "cancelled"
    assert store.list_asks() == []


def test_an_apps_flags_come_from_its_options_model(tmp_path: Path) -> None:
    from consulta.apps import get_app
    from consulta.frontends.cli._base import new_command
    from consulta.frontends.cli._flags import app_flags
    from consulta.frontends.cli._usage import UsageError

    new_command([])  # a command of its own: not the language of a command an earlier test ran in this process
    ln2 = get_app("ln2")
    read = app_flags(ln2, ["--inventory", "x.yaml", "--timeout", "5"])
    assert read.options == ln2.options(inventory=Path("x.yaml"), question_timeout=5.0) and read.terminal is None
    with pytest.raises(UsageError, match="^--timeout takes a number greater than 0[.]$"):
        app_flags(ln2, ["--timeout", "-1"])  # validated by the model, named by its flag
    with pytest.raises(UsageError, match="--inventory"):
        app_flags(ln2, ["--uploads", "x"])  # another app's flag: refused, the app's own listed
    tutor = get_app("tutor")
    data = tmp_path / "data.csv"
    data.write_text("a\n1\n", encoding="utf-8")
    read = app_flags(tutor, ["--file", str(data), "--file", str(data), "--budget-per-task", "2"])
    assert read.terminal is not None and read.terminal.file == [data, data] and read.options.budget_per_task == 2
    with pytest.raises(UsageError, match="^--file: No file") as refused:
        app_flags(tutor, ["--file", str(tmp_path / "missing.csv")])
    assert "Value error" not in str(refused.value)
    with pytest.raises(UsageError):
        app_flags(tutor, ["--task-id", "task_1"])  # set by the hand-over only


def test_chat_with_prompts_exits_1_when_a_run_fails(home: Path) -> None:
    # A model that repeats the same look-up past every refusal: the run fails as stuck, and the command says so.
    looping = home / "looping.yaml"
    looping.write_text("- tool_calls: [{name: inventory_stats, args: {}}]\n" * 6, encoding="utf-8")
    result = runner.invoke(app, ["chat", "ln2", "--model", f"scripted:{looping}", "-p", "Which tube is the best one?"])
    assert result.exit_code == 1, result.output
    (run,) = Store(f"sqlite:///{home / 'consulta.db'}").list_runs()
    assert run.status == "failed"
    ok = home / "ok.yaml"
    ok.write_text(
        "- tool_calls: [{name: inventory_stats, args: {}}]\n- text: Box 1 holds 30 tubes.\n", encoding="utf-8"
    )
    assert runner.invoke(app, ["chat", "ln2", "--model", f"scripted:{ok}", "-p", "Hello"]).exit_code == 0
