"""Every inventory file a person can get wrong (the corpus in `bad_inventories/`, and the cases that cannot be kept
in git: a missing path, a pipe, files over ln2's limits) is one readable line in their language — naming the file,
the line when there is one, and what to do — on every front end, and nothing is written: not the file, not the
store."""

from __future__ import annotations

import os
import re
import shutil
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from consulta.apps.ln2 import MAX_INVENTORY_BYTES, MAX_INVENTORY_RECORDS, InventoryFile, InventoryFileError
from consulta.apps.ln2._operations import RecordThaw, apply_plan
from consulta.config import Settings
from consulta.frontends.cli import main
from consulta.runtime import Store
from frontends._terminal import run_consulta

from .test_inventory import snapshot

CORPUS = Path(__file__).parent / "bad_inventories"
CJK = re.compile(r"[\u4e00-\u9fff]")

# The corpus, file by file: words of the English message, and its line (None: the message names no line).
EXPECTED: dict[str, tuple[str, int | None]] = {
    "a_folder": ("is a folder, not a YAML file", None),
    "billion_laughs.yaml": ("anchors and aliases", None),
    "binary.yaml": ("is not a text file (binary data at byte 8)", None),
    "bom_and_tabs.yaml": ("found character '\\t'", 21),
    "box_as_text.yaml": ("inventory.2.box: Input should be a valid integer", 21),
    "box_count_zero.yaml": ("meta.box_count: Input should be greater than or equal to 1", 4),
    "dangling_link.yaml": ("is a link to moved_away/inventory.yaml, which does not exist", None),
    "date_in_words.yaml": ("'last Tuesday' is not a date written as YYYY-MM-DD", 23),
    "duplicate_ids.yaml": ("record id 2 is used twice", 19),
    "duplicate_key.yaml": ('found duplicate key "box"', 22),
    "empty.yaml": ("is empty", None),
    "empty_cell_line.yaml": ("inventory.1.parent_cell_line", 13),
    "events_not_a_list.yaml": ("inventory.1.thaw_events: Input should be a valid list", 17),
    "gbk.yaml": ("is not UTF-8 text", None),
    "id_as_text.yaml": ("inventory.2.id: Input should be a valid integer", 19),
    "impossible_date.yaml": ("'2025-02-30' is not a real calendar date", 23),
    "inventory.xlsx": ("is not a text file", None),
    "inventory_not_list.yaml": ("`inventory` must be a list of records", 3),
    "latin1.yaml": ("is not UTF-8 text", None),
    "meta_not_mapping.yaml": ("`meta` must be a mapping", 2),
    "missing_date.yaml": ("inventory.2.frozen_at: Field required", 19),
    "negative_id.yaml": ("inventory.2.id: Input should be greater than or equal to 1", 19),
    "no_box_layout.yaml": ("`meta.box_layout` (the rows and columns of a box) is missing", 2),
    "no_inventory.yaml": ("the `inventory` list of records is missing", 2),
    "no_meta.yaml": ("the `meta` section is missing", None),
    "only_comments.yaml": ("is empty", None),
    "position_as_text.yaml": ("inventory.2.positions.0: Input should be a valid integer", 22),
    "position_outside_box.yaml": ("record 3 holds position 10, outside 1..9", 22),
    "position_zero.yaml": ("record 3 holds position 0, outside 1..9", 22),
    "positions_not_a_list.yaml": ("inventory.2.positions: Input should be a valid list", 22),
    "record_not_a_mapping.yaml": ("inventory.2: Input should be a valid dictionary", 19),
    "rows_zero.yaml": ("meta.box_layout.rows", 3),
    "shared_position.yaml": ("box 1 position 2 (A2) is held by both record 1 and record 2", 15),
    "syntax_bad_indent.yaml": ("YAML syntax error", 21),
    "syntax_unclosed_bracket.yaml": ("YAML syntax error", 16),
    "tabs.yaml": ("found character '\\t'", 3),
    "top_level_list.yaml": ("the top level is a list", 1),
    "top_level_scalar.yaml": ("the top level is a single value", 1),
    "undefined_alias.yaml": ("found undefined alias 'important'", 11),
    "unknown_action.yaml": ("inventory.1.thaw_events.0.action", 18),
    "unknown_box.yaml": ("record 3 is in box 7, but boxes are numbered 1..2", 21),
    "utf16.yaml": ("is UTF-16 text, not UTF-8", None),
}


def _over_bytes(folder: Path) -> Path:
    """A file over the size limit without a byte in it (sparse): refused on its size alone."""
    path = folder / "huge_sparse.yaml"
    with path.open("wb") as handle:
        handle.truncate(50 * 1024 * 1024)
    return path


def _huge_line(folder: Path) -> Path:
    """A valid start, then one note line longer than the whole limit."""
    path = folder / "huge_line.yaml"
    note = "x" * (MAX_INVENTORY_BYTES + 10)
    path.write_text(f"meta:\n  box_layout: {{rows: 3, cols: 3}}\ninventory:\n  - id: 1\n    note: '{note}'\n")
    return path


def _too_many_records(folder: Path) -> Path:
    """More records than the limit, in far fewer bytes than the size limit (one flow mapping a line)."""
    path = folder / "many.yaml"
    lines = ["meta:", "  box_layout: {rows: 9, cols: 9}", "inventory:"]
    lines += [
        f"  - {{id: {i}, parent_cell_line: K, box: 1, positions: [], frozen_at: '2025-01-01'}}"
        for i in range(1, MAX_INVENTORY_RECORDS + 2)
    ]
    path.write_text("\n".join(lines) + "\n")
    assert path.stat().st_size < MAX_INVENTORY_BYTES
    return path


def _pipe(folder: Path) -> Path:
    path = folder / "pipe.yaml"
    os.mkfifo(path)
    return path


def _missing(folder: Path) -> Path:
    return folder / "no_such_inventory.yaml"


GENERATED: dict[str, tuple[Callable[[Path], Path], str]] = {
    "missing": (_missing, "does not exist"),
    "over-the-size-limit": (_over_bytes, "is 50.0 MB, over the limit of 2.0 MB for an inventory file"),
    "huge-line": (_huge_line, "over the limit of 2.0 MB"),
    "too-many-records": (_too_many_records, f"holds {MAX_INVENTORY_RECORDS + 1} records, over the limit"),
    "a-pipe": (_pipe, "is not a regular file"),
}


def corpus_case(name: str, folder: Path) -> Path:
    """Corpus entry `name` copied into `folder` (a link stays a link, a folder a folder)."""
    source, target = CORPUS / name, folder / name
    if source.is_symlink():
        os.symlink(os.readlink(source), target)
    elif source.is_dir():
        shutil.copytree(source, target)
    else:
        shutil.copyfile(source, target)
    return target


def test_the_corpus_is_the_table() -> None:
    assert sorted(p.name for p in CORPUS.iterdir()) == sorted(EXPECTED)


def check_one_line(error: InventoryFileError, path: Path, words: str, line: int | None) -> None:
    """The English line and the Chinese one: each one line, naming the file, ending with what to do."""
    text = str(error)
    assert "\n" not in text and str(path) in text and words in text, text
    assert error.fix and text.endswith(error.fix) and error.hint == error.fix
    assert error.line == line and (f"(line {line})" in text) == (line is not None)
    chinese = error.localized("zh-CN")
    assert "\n" not in chinese and str(path) in chinese and CJK.search(chinese) and chinese != text
    assert chinese.startswith(f"库存文件 {path}") and chinese.endswith(("。", "？"))
    if line is not None:
        assert f"（第 {line} 行）" in chinese


def check_nothing_written(path: Path, folder: Path) -> None:
    """Loading it fails the same way again, and a plan on it is refused without writing anything."""
    before = snapshot(folder)
    with pytest.raises(InventoryFileError) as first:
        InventoryFile.load(path)
    with pytest.raises(InventoryFileError) as again:
        apply_plan(path, [RecordThaw(record_id=1, positions=[1], date="2026-01-01")], plan_id="p", actor="t")
    assert str(again.value) == str(first.value)
    assert snapshot(folder) == before


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_bad_file_is_one_line_in_either_language_and_nothing_is_written(tmp_path: Path, name: str) -> None:
    path = corpus_case(name, tmp_path)
    with pytest.raises(InventoryFileError) as info:
        InventoryFile.load(path)
    check_one_line(info.value, path, *EXPECTED[name])
    check_nothing_written(path, tmp_path)


@pytest.mark.parametrize("case", sorted(GENERATED))
def test_what_git_cannot_hold_is_refused_the_same_way(tmp_path: Path, case: str) -> None:
    make, words = GENERATED[case]
    path = make(tmp_path)
    error = _load_within(path, seconds=10)
    check_one_line(error, path, words, None)
    check_nothing_written(path, tmp_path)


def _load_within(path: Path, *, seconds: float) -> InventoryFileError:
    """The error of loading `path`, in a thread that must end within `seconds` (a pipe would block a reader)."""
    outcome: list[BaseException | None] = []

    def load() -> None:
        try:
            InventoryFile.load(path)
            outcome.append(None)
        except BaseException as error:  # noqa: BLE001 - checked below
            outcome.append(error)

    worker = threading.Thread(target=load, daemon=True)
    worker.start()
    worker.join(seconds)
    assert outcome, f"loading {path.name} did not end within {seconds} s"
    assert isinstance(outcome[0], InventoryFileError), outcome[0]
    return outcome[0]


def test_a_file_over_the_size_limit_is_refused_before_a_byte_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _over_bytes(tmp_path)

    def no_reading(*args: object, **kwargs: object) -> None:
        raise AssertionError("the file was opened")

    monkeypatch.setattr(Path, "open", no_reading)
    monkeypatch.setattr(Path, "read_bytes", no_reading)
    started = time.monotonic()
    with pytest.raises(InventoryFileError) as info:
        InventoryFile.load(path)
    assert time.monotonic() - started < 1.0
    assert info.value.localized("zh-CN").startswith(f"库存文件 {path} 大小为 50.0 MB，超过库存文件 2.0 MB 的上限")


def test_too_many_records_are_refused_before_the_yaml_is_parsed(tmp_path: Path) -> None:
    path = _too_many_records(tmp_path)
    started = time.monotonic()
    with pytest.raises(InventoryFileError):
        InventoryFile.load(path)
    assert time.monotonic() - started < 2.0  # parsing 10,001 records takes tens of seconds


def test_bytes_over_the_limit_are_refused_too() -> None:
    with pytest.raises(InventoryFileError) as info:
        InventoryFile.from_bytes(b"#" * (MAX_INVENTORY_BYTES + 1), path=Path("/x/inv.yaml"))
    assert "over the limit of 2.0 MB" in str(info.value)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads every file")
def test_an_unreadable_file(tmp_path: Path) -> None:
    path = corpus_case("empty.yaml", tmp_path)
    path.chmod(0)
    with pytest.raises(InventoryFileError) as info:
        InventoryFile.load(path)
    assert "cannot be read: Permission denied" in str(info.value)
    assert "无法读取" in info.value.localized("zh-CN")


def test_a_bom_alone_is_fine(tmp_path: Path) -> None:
    text = (CORPUS / "a_folder" / "inventory.yaml").read_bytes()
    path = tmp_path / "bom.yaml"
    path.write_bytes(b"\xef\xbb\xbf" + text)
    assert len(InventoryFile.load(path).inventory.records) == 3


# --------------------------------------------------------------------------------------------------------------
# Front ends: the terminal's commands, the desktop's message, the web's status and body


def no_runs(home: Path) -> bool:
    db = home / "consulta.db"
    if not db.exists():
        return True
    store = Store(f"sqlite:///{db}")
    try:
        return store.list_runs() == []
    finally:
        store.close()


SCRIPTED = ["--model", "scripted:none.yaml"]
COMMANDS = {
    "chat": ["chat", "ln2", *SCRIPTED, "-p", "hello"],
    "serve": ["serve", "ln2", *SCRIPTED, "--port", "1"],
    "mcp": ["mcp", "ln2"],
    "desktop": ["desktop", "ln2", *SCRIPTED],
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_the_terminal_says_each_in_one_line_and_exits_2(
    tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "files"
    folder.mkdir()
    path = corpus_case(name, folder)
    before = snapshot(folder)
    code, printed = run_consulta([*COMMANDS["chat"], "--inventory", str(path)], tmp_path / "home", monkeypatch, capsys)
    assert code == 2
    lines = printed.strip().splitlines()
    # ln2 resolves the path it is given: a dangling link is named by where it leads
    words = "moved_away/inventory.yaml does not exist" if name == "dangling_link.yaml" else EXPECTED[name][0]
    assert len(lines) == 1 and lines[0].startswith("Error: The inventory file ") and words in lines[0]
    assert snapshot(folder) == before and no_runs(tmp_path / "home")


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize(("lang", "how"), [("en", "flag"), ("zh-CN", "flag"), ("zh-CN", "env")])
@pytest.mark.parametrize("name", ["duplicate_ids.yaml", "binary.yaml", "a_folder"])
def test_every_command_says_it_in_the_persons_language(
    tmp_path: Path,
    command: str,
    lang: str,
    how: str,
    name: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = corpus_case(name, tmp_path)
    argv = [*COMMANDS[command], "--inventory", str(path)] + (["--lang", lang] if how == "flag" else [])
    code, printed = run_consulta(argv, tmp_path / "home", monkeypatch, capsys, lang=lang if how == "env" else "en")
    assert code == 2
    lines = printed.strip().splitlines()
    assert len(lines) == 1 and str(path) in lines[0] and "Traceback" not in printed
    if lang == "en":
        assert lines[0].startswith("Error: The inventory file ")
    else:
        assert lines[0].startswith(f"错误：库存文件 {path}") and CJK.search(lines[0].split(str(path))[1])
    assert no_runs(tmp_path / "home")


def test_mcp_over_stdio_keeps_stdout_for_the_protocol(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = corpus_case("empty.yaml", tmp_path)
    monkeypatch.setenv("CONSULTA_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(sys, "argv", ["consulta", *COMMANDS["mcp"], "--inventory", str(path), "--lang", "zh-CN"])
    with pytest.raises(SystemExit) as exited:
        main()
    output = capsys.readouterr()
    assert exited.value.code == 2 and output.out == ""
    assert output.err.strip() == f"错误：{InventoryFileError(str(path), 'empty').localized('zh-CN')}"


def test_the_web_answers_a_file_broken_while_serving_with_a_4xx_and_the_line(tmp_path: Path) -> None:
    from fastapi.testclient import TestClient

    from consulta.frontends.web import create_app

    settings = Settings(home=tmp_path, database_url=f"sqlite:///{tmp_path}/consulta.db", model="scripted:none.yaml")
    with TestClient(create_app(app="ln2", settings=settings)) as client:
        headers = {"Authorization": f"Bearer {client.post('/api/sessions').json()['token']}"}
        assert client.get("/api/ln2/grid", headers=headers).status_code == 200
        path = tmp_path / "apps" / "ln2" / "inventory.yaml"
        broken = (CORPUS / "shared_position.yaml").read_bytes()
        path.write_bytes(broken)
        for route in ("/api/ln2/grid", "/api/ln2/boxes/1/positions/2"):
            response = client.get(route, headers=headers)
            assert 400 <= response.status_code < 500
            body = response.json()
            assert body["error_code"] == "inventory_file_error" and str(path) in body["message"]
            assert "held by both record 1 and record 2" in body["message"] and "\n" not in body["message"]
        # in the reader's language: ?lang= or Accept-Language
        for extra in ({"params": {"lang": "zh-CN"}}, {"headers": {**headers, "Accept-Language": "zh-CN,zh;q=0.9"}}):
            response = client.get("/api/ln2/grid", **({"headers": headers} | extra))
            assert response.status_code < 500
            zh = response.json()["message"]
            assert str(path) in zh and any("\u4e00" <= c <= "\u9fff" for c in zh) and "\n" not in zh
        assert path.read_bytes() == broken


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["chat", "ln2", "--model", "bogus:x", "-p", "hi"], "Unknown model 'bogus:x'"),
        (["chat", "ln2", "--model", "scripted:/no/such/script.yaml", "-p", "hi"], "Cannot read the model script"),
    ],
    ids=["unknown-model", "missing-script"],
)
def test_a_model_that_cannot_be_used_is_refused_before_the_first_run(
    tmp_path: Path, argv: list[str], words: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, printed = run_consulta(argv, tmp_path / "home", monkeypatch, capsys)
    assert code == 2 and words in printed.strip().splitlines()[-1] and "Traceback" not in printed
    assert no_runs(tmp_path / "home")
