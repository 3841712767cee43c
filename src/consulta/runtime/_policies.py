"""Tool policies: timeout, retries with backoff, TTL cache, fallback value — composable per tool.

A policy wraps one call of a tool: `await policy(args, proceed)` where `proceed(args)` runs the rest of the chain.
`apply_policies(fn, [Fallback(...), Cache(...), Retry(...), Timeout(...)])` composes them, first = outermost, and
keeps the function's signature so tool schemas are still generated from its type hints. The same wrapped function
serves the agent, the MCP server and direct calls.
"""

from __future__ import annotations

import functools
import inspect
import json
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import anyio

from ._errors import ToolError

__all__ = ["Cache", "Fallback", "Retry", "Timeout", "ToolPolicy", "apply_policies"]

Proceed = Callable[[dict[str, Any]], Awaitable[Any]]


class ToolPolicy(Protocol):
    async def __call__(self, args: dict[str, Any], proceed: Proceed) -> Any: ...


@dataclass(frozen=True, kw_only=True)
class Timeout:
    """Give up after `seconds`; the model gets `tool_timeout`. A sync tool's thread is not killed, only abandoned."""

    seconds: float

    async def __call__(self, args: dict[str, Any], proceed: Proceed) -> Any:
        with anyio.move_on_after(self.seconds) as scope:
            return await proceed(args)
        if scope.cancelled_caught:
            raise ToolError(
                "tool_timeout",
                f"The tool did not finish within {self.seconds:g} s.",
                hint="Try again later or with a smaller request.",
            )
        raise AssertionError("unreachable")  # pragma: no cover


@dataclass(frozen=True, kw_only=True)
class Retry:
    """Retry transient failures: up to `attempts` calls in all, sleeping `backoff * 2**i` between them.

    A ToolError is the tool's considered answer about bad input, so it is not retried — except the codes in
    `retry_codes` (by default a timed-out attempt, so `[Retry(...), Timeout(...)]` retries slow calls).
    """

    attempts: int = 3
    backoff: float = 0.5
    max_backoff: float = 10.0
    retry_on: tuple[type[BaseException], ...] = (Exception,)
    retry_codes: tuple[str, ...] = ("tool_timeout",)

    async def __call__(self, args: dict[str, Any], proceed: Proceed) -> Any:
        for attempt in range(self.attempts):
            try:
                return await proceed(args)
            except ToolError as error:
                retriable = ToolError in self.retry_on or error.error_code in self.retry_codes
                if not retriable or attempt == self.attempts - 1:
                    raise
                last: BaseException = error
            except self.retry_on as error:
                if attempt == self.attempts - 1:
                    raise
                last = error
            await anyio.sleep(min(self.backoff * (2**attempt), self.max_backoff))
        raise AssertionError(f"unreachable: {last!r}")  # pragma: no cover


def _cache_key(args: dict[str, Any]) -> str:
    return json.dumps(args, sort_keys=True, ensure_ascii=False, default=str)


@dataclass(kw_only=True)
class Cache:
    """Keep successful results for `ttl` seconds, keyed on the arguments. Errors are never cached."""

    ttl: float
    maxsize: int = 1024
    clock: Callable[[], float] = time.monotonic
    _entries: OrderedDict[str, tuple[float, Any]] = field(default_factory=OrderedDict, init=False, repr=False)
    hits: int = field(default=0, init=False)
    misses: int = field(default=0, init=False)

    async def __call__(self, args: dict[str, Any], proceed: Proceed) -> Any:
        key = _cache_key(args)
        now = self.clock()
        entry = self._entries.get(key)
        if entry is not None and entry[0] > now:
            self.hits += 1
            self._entries.move_to_end(key)
            return entry[1]
        self.misses += 1
        result = await proceed(args)
        if not (isinstance(result, dict) and result.get("ok") is False):
            self._entries[key] = (now + self.ttl, result)
            self._entries.move_to_end(key)
            while len(self._entries) > self.maxsize:
                self._entries.popitem(last=False)
        return result

    def clear(self) -> None:
        self._entries.clear()


@dataclass(frozen=True, kw_only=True)
class Fallback:
    """On failure (an exception, a timeout, or an `ok: false` result when `on_error_result`), return `value` instead.

    `value` may be a callable `(args, error) -> result`. A dict result is marked `"_fallback": true` so the model
    and the record can tell a fallback from a real answer.
    """

    value: Any
    on_error_result: bool = False

    async def __call__(self, args: dict[str, Any], proceed: Proceed) -> Any:
        try:
            result = await proceed(args)
        except Exception as error:  # noqa: BLE001 - a fallback is for any failure
            return self._fallback(args, error)
        if self.on_error_result and isinstance(result, dict) and result.get("ok") is False:
            return self._fallback(args, result)
        return result

    def _fallback(self, args: dict[str, Any], error: Any) -> Any:
        value = self.value(args, error) if callable(self.value) else self.value
        if isinstance(value, dict):
            value = {**value, "_fallback": True}
        return value


def apply_policies(fn: Callable[..., Any], policies: tuple[ToolPolicy, ...] | list[ToolPolicy]) -> Callable[..., Any]:
    """Wrap `fn` (sync or async) in `policies`, first = outermost; the result is async and keeps fn's signature."""
    is_async = inspect.iscoroutinefunction(fn)

    async def call_fn(args: dict[str, Any]) -> Any:
        if is_async:
            return await fn(**args)
        return await anyio.to_thread.run_sync(functools.partial(fn, **args), abandon_on_cancel=True)

    chain: Proceed = call_fn
    for policy in reversed(list(policies)):
        chain = functools.partial(policy, proceed=chain)  # type: ignore[assignment]

    @functools.wraps(fn)
    async def wrapper(**kwargs: Any) -> Any:
        return await chain(kwargs)

    return wrapper
