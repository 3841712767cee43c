"""Saved prompt prefixes: llama.cpp's state after the stable start of a prompt, kept on disk and shared by processes.

Every run of an app starts with the same system message (its instructions, the tool list, the reply format). Without
this cache each new process - and each process after another agent used the model - evaluates those ~1,200 tokens
again before the first tool call (12-15 s on 2 cores). With it, the first process to see a prefix saves llama.cpp's
state right after it (`llama_state_save_file`: the KV cache of those tokens), and every later step that starts with
the same tokens loads it (a file read) instead.

Layout: `<directory>/<model key>/<sha256 of the tokens>.state` and, written after it, `….tokens.json` (the token
ids); an entry exists once its tokens file does. The model key hashes what makes a state file usable: the GGUF's name,
size and mtime, the context size and llama-cpp-python's version. Each entry is written to a temporary name and
renamed, so a reader never sees half a file; an entry llama.cpp refuses to load is deleted. At most `keep` entries
per model are kept (the least recently used go first), so a prompt that changes daily (a date in it) cannot fill the
disk.
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .._files import replacing, write_atomic

if TYPE_CHECKING:
    from llama_cpp import Llama

__all__ = ["PrefixCache", "SavedPrefix", "common_prefix"]


class _NotSaved(Exception):
    """llama.cpp could not save the state: the draft is dropped, the entry not made."""


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    """The length of the longest common prefix of two token sequences."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


@dataclass(frozen=True, kw_only=True)
class SavedPrefix:
    """One saved state: the file llama.cpp reads and the tokens it holds the KV cache of."""

    state_path: Path
    tokens: tuple[int, ...]


class PrefixCache:
    """Saved llama.cpp states of prompt prefixes for one model file, under `directory`.

    `min_tokens`: shorter prefixes are not worth a file (loading costs more than evaluating them). Every method is
    safe to call from several processes at once; failures to read or write the cache only cost speed, never a step.
    """

    def __init__(self, directory: Path, *, min_tokens: int = 256, keep: int = 8) -> None:
        self.directory = Path(directory)
        self.min_tokens = min_tokens
        self.keep = keep

    # ---- keys ----------------------------------------------------------------------------------------------------

    @staticmethod
    def model_key(gguf_path: Path, *, n_ctx: int) -> str:
        """What a state file depends on besides its tokens: the model file, the context size, llama.cpp's build."""
        import llama_cpp

        stat = Path(gguf_path).stat()
        identity = f"{Path(gguf_path).name}|{stat.st_size}|{stat.st_mtime_ns}|{n_ctx}|{llama_cpp.__version__}"
        return hashlib.sha256(identity.encode()).hexdigest()[:24]

    def _folder(self, model_key: str) -> Path:
        return self.directory / model_key

    @staticmethod
    def _name(tokens: Sequence[int]) -> str:
        return hashlib.sha256(json.dumps(list(tokens)).encode()).hexdigest()[:32]

    # ---- lookup --------------------------------------------------------------------------------------------------

    def best(self, model_key: str, tokens: Sequence[int]) -> tuple[SavedPrefix | None, int]:
        """The saved prefix sharing the most leading tokens with `tokens`, and how many it shares."""
        best: SavedPrefix | None = None
        best_common = 0
        folder = self._folder(model_key)
        try:
            sidecars = list(folder.glob("*.tokens.json"))
        except OSError:
            return None, 0
        for sidecar in sidecars:
            try:
                saved = tuple(int(t) for t in json.loads(sidecar.read_text()))
            except (OSError, ValueError, TypeError):
                continue
            common = common_prefix(saved, tokens)
            if common > best_common:
                state = sidecar.with_name(sidecar.name.removesuffix(".tokens.json") + ".state")
                best, best_common = SavedPrefix(state_path=state, tokens=saved), common
        return best, best_common

    def covers(self, model_key: str, prefix: Sequence[int]) -> bool:
        """Whether `prefix` itself is saved (so there is nothing to save)."""
        sidecar = self._folder(model_key) / f"{self._name(prefix)}.tokens.json"
        return sidecar.is_file()

    # ---- llama.cpp state in and out ------------------------------------------------------------------------------

    def load(self, llama: Llama, saved: SavedPrefix) -> bool:
        """Load `saved` into `llama`'s context and tell llama-cpp-python which tokens it now holds.

        Returns False (the context emptied, the entry deleted) when llama.cpp refuses the file.
        """
        import llama_cpp

        capacity = len(saved.tokens)
        tokens_out = (llama_cpp.llama_token * capacity)()
        count = ctypes.c_size_t(0)
        ok = llama_cpp.llama_state_load_file(
            llama.ctx, str(saved.state_path).encode(), tokens_out, capacity, ctypes.byref(count)
        )
        if not ok or count.value != capacity or tuple(tokens_out[: count.value]) != saved.tokens:
            llama._ctx.kv_cache_seq_rm(-1, 0, -1)
            llama.reset()
            self._forget(saved)
            return False
        llama.input_ids[:capacity] = saved.tokens
        llama.n_tokens = capacity
        llama._requires_eval = True  # the logits of the last token were not restored: never sample from them
        try:
            os.utime(saved.state_path)  # most recently used
        except OSError:
            pass
        return True

    def save(self, llama: Llama, model_key: str, prefix: Sequence[int]) -> bool:
        """Save `llama`'s state, which must hold exactly the KV cache of `prefix`, as a new entry."""
        import llama_cpp

        if llama.n_tokens != len(prefix) or list(llama.input_ids[: llama.n_tokens]) != list(prefix):
            raise ValueError("the context does not hold exactly this prefix; evaluate it first")
        folder = self._folder(model_key)
        name = self._name(prefix)
        state = folder / f"{name}.state"
        sidecar = folder / f"{name}.tokens.json"
        array = (llama_cpp.llama_token * len(prefix))(*prefix)
        try:
            with replacing(state) as draft:
                if not llama_cpp.llama_state_save_file(llama.ctx, str(draft).encode(), array, len(prefix)):
                    raise _NotSaved
            write_atomic(sidecar, json.dumps(list(prefix)).encode("utf-8"))
        except (OSError, _NotSaved):
            return False
        self._prune(folder)
        return True

    def _forget(self, saved: SavedPrefix) -> None:
        sidecar = saved.state_path.with_name(saved.state_path.name.removesuffix(".state") + ".tokens.json")
        for path in (sidecar, saved.state_path):
            path.unlink(missing_ok=True)

    def _prune(self, folder: Path) -> None:
        """Keep the `keep` most recently used entries; remove temporary files left by a killed writer."""
        try:
            states = sorted(folder.glob("*.state"), key=lambda p: p.stat().st_mtime, reverse=True)
            for stale in states[self.keep :]:
                self._forget(SavedPrefix(state_path=stale, tokens=()))
            cutoff = time.time() - 600  # a writer older than this was killed: its draft will never be renamed
            for draft in folder.glob("*.tmp"):
                if draft.stat().st_mtime < cutoff:
                    draft.unlink(missing_ok=True)
        except OSError:
            pass
