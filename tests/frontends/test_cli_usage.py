"""A mistyped command line, answered in one line in the person's language: unknown flags with the near match among
all the flags that apply, unsupported languages, values that do not fit; help without metavar noise; empty lists
said in words; `consulta serve`'s banner and its quiet log."""

from __future__ import annotations

from pathlib import Path

import pytest

from ._terminal import run_consulta


def one_line(output: str) -> str:
    lines = [line for line in output.splitlines() if line.strip()]
    assert len(lines) == 1, output
    return lines[0]


def test_an_unknown_flag_suggests_the_near_one_among_the_commands_and_the_apps(tmp_path, monkeypatch, capsys):
    code, out = run_consulta(["serve", "ln2", "--prot", "9000"], tmp_path, monkeypatch, capsys)
    line = one_line(out)
    assert code == 2 and "--prot" in line and "did you mean --port?" in line  # the near one, not --host too
    assert "--host" in line and "--inventory" in line  # every flag that applies: the command's and the app's
    code, out = run_consulta(["serve", "ln2", "--inventri", "x"], tmp_path, monkeypatch, capsys, lang="zh-CN")
    assert code == 2 and "您是想用 --inventory 吗" in one_line(out)


def test_an_unsupported_language_is_refused_with_the_list(tmp_path, monkeypatch, capsys):
    code, out = run_consulta(["runs", "--lang", "fr"], tmp_path, monkeypatch, capsys)
    assert code == 2 and one_line(out) == "Error: Consulta does not speak fr: use one of en, zh-CN."


@pytest.mark.parametrize(
    ("argv", "lang", "said"),
    [
        (["serve", "ln2", "--port", "abc"], "en", "Error: --port takes a whole number from 0 to 65535."),
        (["serve", "ln2", "--port", "abc", "--lang", "zh-CN"], "en", "错误：--port 需要0 到 65535 之间的整数。"),
        (["serve", "ln2", "--timeout", "soon"], "en", "Error: --timeout takes a number."),
        (["serve", "ln2", "--timeout", "-5"], "en", "Error: --timeout takes a number greater than 0."),
        (["serve", "ln2", "--timeout", "1e999"], "en", "Error: --timeout takes a number."),  # no endless wait
        (["chat", "tutor", "--file", "/nope.csv", "-p", "hi"], "en", "Error: --file: No file /nope.csv."),
        (["chat", "tutor", "--lang", "zh-CN", "--file", "/nope.csv", "-p", "hi"], "en", "/nope.csv"),
        (["serve", "tutor", "--budget-per-task", "50", "--lang", "zh-CN"], "en", "不大于 20 的数"),
    ],
)
def test_a_wrong_value_is_one_line_in_the_persons_words(tmp_path, monkeypatch, capsys, argv, lang, said):
    code, out = run_consulta(argv, tmp_path, monkeypatch, capsys, lang=lang)
    line = one_line(out)
    assert code == 2 and said in line and "Value error" not in line and "Input should" not in line
    if "zh-CN" in argv:
        assert line.startswith("错误")


def test_help_shows_no_type_after_a_switch(tmp_path, monkeypatch, capsys):
    code, out = run_consulta(["serve", "--help"], tmp_path, monkeypatch, capsys)
    assert code == 0 and "--access-log" in out and "--help" in out
    options = [line for line in out.splitlines() if line.lstrip("│ ").startswith(("-", "APP"))]
    assert len(options) >= 7 and not any("<" in line or "x<=" in line for line in options)
    assert any("APP" in line for line in options) and any("0 to 65535" in line for line in options)


def test_no_runs_is_said_in_words(tmp_path, monkeypatch, capsys):
    code, out = run_consulta(["runs"], tmp_path, monkeypatch, capsys)
    assert code == 0 and one_line(out) == "No runs yet."
    code, out = run_consulta(["runs"], tmp_path, monkeypatch, capsys, lang="zh-CN")
    assert one_line(out) == "还没有运行记录。"
    code, out = run_consulta(["asks", "--all"], tmp_path, monkeypatch, capsys)
    assert code == 0 and one_line(out) == "No asks yet."  # not "no pending asks": closed ones were asked for too


def test_serve_prints_where_to_open_it_and_keeps_the_access_log_off(tmp_path: Path, monkeypatch, capsys):
    import consulta.frontends.web as web
    from consulta.frontends.web._app import _log_config

    served: dict[str, object] = {}
    monkeypatch.setattr(web, "serve", lambda **kw: served.update(kw))
    script = tmp_path / "s.json"
    script.write_text('[{"text": "hi"}]', encoding="utf-8")
    code, out = run_consulta(
        ["serve", "ln2", "--port", "8123", "--model", f"scripted:{script}"], tmp_path, monkeypatch, capsys
    )
    assert code == 0 and "Open http://localhost:8123 in your browser." in out
    assert served["access_log"] is False
    quiet, loud = _log_config(access_log=False), _log_config(access_log=True)
    assert quiet["loggers"]["consulta.web"]["level"] == "WARNING" == quiet["loggers"]["uvicorn.error"]["level"]
    assert loud["loggers"]["consulta.web"]["level"] == "INFO"


def test_an_app_command_s_help_and_flags_speak_like_the_rest(tmp_path, monkeypatch, capsys):
    code, out = run_consulta(["quiz", "take", "--help"], tmp_path, monkeypatch, capsys)
    assert code == 0 and "--resume" in out and "<" not in out
    code, out = run_consulta(["quiz", "take", "--nwe"], tmp_path, monkeypatch, capsys)
    line = one_line(out)
    assert code == 2 and "did you mean --new?" in line and "--resume" in line and "--lang" in line


def test_an_unknown_flag_before_the_app_is_a_flag_not_an_app(tmp_path, monkeypatch, capsys):
    code, out = run_consulta(["serve", "--prot", "9000"], tmp_path, monkeypatch, capsys)
    line = one_line(out)
    assert code == 2 and "did you mean --port" in line and "--inventory" in line and "Unknown app" not in line


@pytest.mark.parametrize(
    ("argv", "lang", "said"),
    [
        (["chat"], "en", "Error: APP is missing: add it to the command."),
        (["answer"], "en", "Error: ASK_ID is missing: add it to the command."),
        (["serve", "ln2", "--port"], "en", "Error: --port needs a value after it."),
        (["runs", "--lang"], "zh-CN", "错误：--lang 后面需要一个值。"),
        (["servee"], "en", "Error: There is no command servee; did you mean serve?"),
        (["lnn2", "take"], "zh-CN", "错误：没有命令 lnn2；您是想用 ln2 吗？"),
        (["ln2", "take"], "en", "Error: ln2 has no commands of its own: talk to it with consulta chat ln2"),
        (["--lang", "zh-CN", "runs"], "en", "错误：命令前没有参数 --lang"),
        (["runs", "extra"], "en", "Error: Unexpected words at the end: extra"),
        (["runs", "--status", "bogus"], "en", "Error: --status takes one of running, waiting, finished"),
        (["chat", "ln2", "--ask-policy", "x", "-p", "hi"], "en", "Error: --ask-policy is one of wait, defer, fail"),
        (["quiz", "take", "--lang", "fr"], "en", "Error: Consulta does not speak fr: use one of en, zh-CN."),
    ],
)
def test_every_mistyped_command_line_is_one_worded_line(tmp_path, monkeypatch, capsys, argv, lang, said):
    """Missing arguments, flags without their value, unknown commands, extra words and a language an app's own
    command does not know: one line in the person's language, never click's wording or a traceback."""
    code, out = run_consulta(argv, tmp_path, monkeypatch, capsys, lang=lang)
    assert code == 2 and one_line(out).startswith(said)
