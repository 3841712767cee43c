"""A settings YAML file a person wrote (binding rules, a task catalog) that cannot be used is one line naming it."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel

from consulta._yaml_files import MAX_YAML_BYTES, load_yaml_model
from consulta.runtime import ConfigError


class _Rules(BaseModel):
    rules: list[str] = []


def _write(tmp_path: Path, data: bytes) -> Path:
    path = tmp_path / "rules.yaml"
    path.write_bytes(data)
    return path


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda p: _write(p, b"rules: [a, b\n  c: d\n"), "is not valid YAML"),
        (lambda p: _write(p, b"rules: 5\n"), "has a problem at rules"),
        (lambda p: _write(p, "rules: [caf\xe9]\n".encode("latin-1")), "is not UTF-8 text"),
        (lambda p: _write(p, b"\x89PNG\r\n\x1a\n\xff\xfe"), "is not UTF-8 text"),
        (lambda p: p, "is a folder"),
        (lambda p: p / "missing.yaml", "Cannot read the rules file"),
    ],
    ids=["syntax", "wrong-type", "latin1", "binary", "folder", "missing"],
)
def test_a_bad_file_is_one_line_naming_it(tmp_path: Path, make, words: str) -> None:
    path = make(tmp_path)
    with pytest.raises(ConfigError) as info:
        load_yaml_model(path, _Rules, what="rules file")
    text = str(info.value)
    assert words in text and str(path) in text and "\n" not in text


def test_a_file_over_the_limit_is_refused_before_it_is_read(tmp_path: Path) -> None:
    path = tmp_path / "rules.yaml"
    with path.open("wb") as handle:
        handle.truncate(MAX_YAML_BYTES + 1)
    with pytest.raises(ConfigError, match="is over 1 MB"):
        load_yaml_model(path, _Rules, what="rules file")
    assert load_yaml_model(_write(tmp_path, b"rules: [a]\n"), _Rules, what="rules file").rules == ["a"]
