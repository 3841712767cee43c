"""Tool policies: Timeout, Retry, Cache, Fallback, their composition, and the signature they keep."""

from __future__ import annotations

import inspect
import threading
from typing import Any

import anyio
import pytest

from consulta.runtime import (
    Agent,
    Cache,
    Fallback,
    Retry,
    Timeout,
    ToolError,
    apply_policies,
    json_schema_for,
    read_tool,
    tool_schemas,
)

pytestmark = pytest.mark.anyio


class Flaky:
    """A sync tool that raises `error` for its first `failures` calls, then returns its argument."""

    def __init__(self, failures: int, error: BaseException | None = None) -> None:
        self.failures = failures
        self.error = error or OSError("transient")
        self.calls = 0

    def __call__(self, x: int) -> dict[str, Any]:
        self.calls += 1
        if self.calls <= self.failures:
            raise self.error
        return {"ok": True, "x": x, "call": self.calls}


@pytest.fixture
def sleeps(monkeypatch) -> list[float]:
    """Record Retry's backoff sleeps instead of sleeping."""
    recorded: list[float] = []

    async def fake_sleep(delay: float) -> None:
        recorded.append(delay)
        await anyio.lowlevel.checkpoint()

    monkeypatch.setattr("consulta.runtime._policies.anyio.sleep", fake_sleep)
    return recorded


# ---- Timeout ---------------------------------------------------------------------------------------------------


async def test_timeout_async_tool_gives_tool_timeout():
    finished = []

    async def slow(x: int) -> int:
        await anyio.sleep(30)
        finished.append(x)
        return x

    wrapped = apply_policies(slow, [Timeout(seconds=0.05)])
    with anyio.fail_after(10), pytest.raises(ToolError) as info:
        await wrapped(x=1)
    assert info.value.error_code == "tool_timeout"
    assert info.value.to_result()["ok"] is False
    assert info.value.to_result()["error_code"] == "tool_timeout"
    assert "0.05 s" in info.value.message
    assert finished == []


async def test_timeout_lets_a_fast_tool_through():
    async def fast(x: int) -> int:
        return x * 2

    def fast_sync(x: int) -> int:
        return x * 3

    assert await apply_policies(fast, [Timeout(seconds=5)])(x=4) == 8
    assert await apply_policies(fast_sync, [Timeout(seconds=5)])(x=4) == 12


async def test_timeout_sync_tool_gives_tool_timeout():
    release = threading.Event()
    returned = []

    def slow_sync(x: int) -> str:
        release.wait(0.5)  # bounded, so a broken Timeout costs half a second, not a hang
        returned.append(x)
        return "finished"

    wrapped = apply_policies(slow_sync, [Timeout(seconds=0.02)])
    try:
        with anyio.fail_after(10), pytest.raises(ToolError) as info:
            await wrapped(x=1)
        assert info.value.error_code == "tool_timeout"
        assert returned == []  # the thread was abandoned, not waited for
    finally:
        release.set()


# ---- Retry -----------------------------------------------------------------------------------------------------


async def test_retry_counts_attempts_until_success(sleeps):
    tool = Flaky(failures=2)
    wrapped = apply_policies(tool, [Retry(attempts=3, backoff=0.01)])
    assert await wrapped(x=7) == {"ok": True, "x": 7, "call": 3}
    assert tool.calls == 3
    assert sleeps == [0.01, 0.02]


async def test_retry_gives_up_after_attempts_and_reraises(sleeps):
    tool = Flaky(failures=10, error=ConnectionError("down"))
    wrapped = apply_policies(tool, [Retry(attempts=4, backoff=0.01, max_backoff=0.025)])
    with pytest.raises(ConnectionError, match="down"):
        await wrapped(x=1)
    assert tool.calls == 4
    assert sleeps == [0.01, 0.02, 0.025]  # doubling, capped at max_backoff; no sleep after the last attempt


async def test_retry_really_sleeps_a_tiny_backoff():
    tool = Flaky(failures=1)
    wrapped = apply_policies(tool, [Retry(attempts=2, backoff=0.001)])
    assert (await wrapped(x=1))["call"] == 2


async def test_retry_does_not_retry_tool_error_by_default(sleeps):
    tool = Flaky(failures=5, error=ToolError("bad_input", "no such box"))
    wrapped = apply_policies(tool, [Retry(attempts=3, backoff=0.01)])
    with pytest.raises(ToolError) as info:
        await wrapped(x=1)
    assert info.value.error_code == "bad_input"
    assert tool.calls == 1
    assert sleeps == []


async def test_retry_retries_tool_error_when_listed(sleeps):
    tool = Flaky(failures=1, error=ToolError("busy", "locked"))
    wrapped = apply_policies(tool, [Retry(attempts=3, backoff=0.01, retry_on=(ToolError,))])
    assert (await wrapped(x=1))["call"] == 2
    assert sleeps == [0.01]


async def test_retry_only_retries_listed_exceptions(sleeps):
    tool = Flaky(failures=5, error=KeyError("k"))
    wrapped = apply_policies(tool, [Retry(attempts=3, backoff=0.01, retry_on=(OSError,))])
    with pytest.raises(KeyError):
        await wrapped(x=1)
    assert tool.calls == 1


async def test_retry_outside_timeout_retries_a_timed_out_attempt(sleeps):
    attempts = []

    async def sometimes_hangs(x: int) -> dict[str, Any]:
        attempts.append(x)
        if len(attempts) == 1:
            await anyio.Event().wait()  # hangs (anyio.sleep is faked by the `sleeps` fixture)
        return {"ok": True, "attempt": len(attempts)}

    wrapped = apply_policies(sometimes_hangs, [Retry(attempts=2, backoff=0.01), Timeout(seconds=0.05)])
    with anyio.fail_after(10):
        assert await wrapped(x=1) == {"ok": True, "attempt": 2}


# ---- Cache -----------------------------------------------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def test_cache_serves_hits_within_ttl_and_refetches_after():
    clock = Clock()
    cache = Cache(ttl=10, clock=clock)
    calls = []

    def lookup(name: str) -> dict[str, Any]:
        calls.append(name)
        return {"ok": True, "name": name, "n": len(calls)}

    wrapped = apply_policies(lookup, [cache])
    assert await wrapped(name="a") == {"ok": True, "name": "a", "n": 1}
    clock.now += 9.9
    assert await wrapped(name="a") == {"ok": True, "name": "a", "n": 1}
    assert (cache.hits, cache.misses) == (1, 1)
    clock.now += 0.1  # exactly ttl after the store: expired
    assert await wrapped(name="a") == {"ok": True, "name": "a", "n": 2}
    assert calls == ["a", "a"]
    assert (cache.hits, cache.misses) == (1, 2)


async def test_cache_keys_on_all_arguments_in_any_order():
    cache = Cache(ttl=60, clock=Clock())
    calls = []

    def f(a: int, b: int) -> int:
        calls.append((a, b))
        return a + b

    wrapped = apply_policies(f, [cache])
    assert await wrapped(a=1, b=2) == 3
    assert await wrapped(b=2, a=1) == 3
    assert await wrapped(a=2, b=1) == 3
    assert calls == [(1, 2), (2, 1)]


async def test_cache_does_not_keep_error_results_or_exceptions():
    cache = Cache(ttl=60, clock=Clock())
    results = [{"ok": False, "error_code": "busy"}, RuntimeError("boom"), {"ok": True, "v": 3}]
    calls = []

    def f(k: str) -> dict[str, Any]:
        calls.append(k)
        r = results[len(calls) - 1]
        if isinstance(r, Exception):
            raise r
        return r

    wrapped = apply_policies(f, [cache])
    assert await wrapped(k="x") == {"ok": False, "error_code": "busy"}
    with pytest.raises(RuntimeError):
        await wrapped(k="x")
    assert await wrapped(k="x") == {"ok": True, "v": 3}
    assert await wrapped(k="x") == {"ok": True, "v": 3}
    assert len(calls) == 3
    assert cache.hits == 1


async def test_cache_evicts_least_recently_used_beyond_maxsize():
    cache = Cache(ttl=60, maxsize=2, clock=Clock())
    calls = []

    def f(k: str) -> str:
        calls.append(k)
        return k.upper()

    wrapped = apply_policies(f, [cache])
    await wrapped(k="a")
    await wrapped(k="b")
    await wrapped(k="a")  # hit: "a" becomes the most recently used
    await wrapped(k="c")  # evicts "b"
    assert calls == ["a", "b", "c"]
    await wrapped(k="a")
    assert calls == ["a", "b", "c"]
    await wrapped(k="b")
    assert calls == ["a", "b", "c", "b"]
    assert len(cache._entries) == 2


async def test_cache_clear():
    cache = Cache(ttl=60, clock=Clock())
    calls = []
    wrapped = apply_policies(lambda k: calls.append(k) or k, [cache])
    await wrapped(k="a")
    cache.clear()
    await wrapped(k="a")
    assert calls == ["a", "a"]


# ---- Fallback --------------------------------------------------------------------------------------------------


async def test_fallback_replaces_an_exception_and_marks_the_result():
    def broken(x: int) -> dict[str, Any]:
        raise RuntimeError("service down")

    wrapped = apply_policies(broken, [Fallback(value={"ok": True, "items": []})])
    assert await wrapped(x=1) == {"ok": True, "items": [], "_fallback": True}


async def test_fallback_value_is_copied_not_mutated():
    value = {"ok": True, "items": []}

    def broken(x: int) -> Any:
        raise RuntimeError

    await apply_policies(broken, [Fallback(value=value)])(x=1)
    assert value == {"ok": True, "items": []}


async def test_fallback_callable_gets_args_and_error():
    seen = []

    def make(args: dict[str, Any], error: Any) -> dict[str, Any]:
        seen.append((args, type(error).__name__, str(error)))
        return {"ok": True, "guess": args["x"]}

    def broken(x: int) -> Any:
        raise ValueError("nope")

    assert await apply_policies(broken, [Fallback(value=make)])(x=5) == {"ok": True, "guess": 5, "_fallback": True}
    assert seen == [({"x": 5}, "ValueError", "nope")]


async def test_fallback_non_dict_value_is_returned_as_is():
    def broken(x: int) -> Any:
        raise RuntimeError

    assert await apply_policies(broken, [Fallback(value="n/a")])(x=1) == "n/a"


async def test_fallback_on_error_result_only_when_asked():
    def refuses(x: int) -> dict[str, Any]:
        return {"ok": False, "error_code": "busy"}

    assert await apply_policies(refuses, [Fallback(value={"ok": True})])(x=1) == {"ok": False, "error_code": "busy"}
    got = await apply_policies(refuses, [Fallback(value={"ok": True, "v": 0}, on_error_result=True)])(x=1)
    assert got == {"ok": True, "v": 0, "_fallback": True}


async def test_fallback_passes_success_through():
    def fine(x: int) -> dict[str, Any]:
        return {"ok": True, "x": x}

    assert await apply_policies(fine, [Fallback(value={"ok": True}, on_error_result=True)])(x=2) == {"ok": True, "x": 2}


# ---- composition -----------------------------------------------------------------------------------------------


async def test_first_policy_is_outermost():
    trace: list[str] = []

    class Mark:
        def __init__(self, name: str) -> None:
            self.name = name

        async def __call__(self, args: dict[str, Any], proceed: Any) -> Any:
            trace.append(f"{self.name}>")
            result = await proceed({**args, "path": args["path"] + [self.name]})
            trace.append(f"<{self.name}")
            return result

    def tool(path: list[str]) -> list[str]:
        trace.append("tool")
        return path

    wrapped = apply_policies(tool, [Mark("A"), Mark("B"), Mark("C")])
    assert await wrapped(path=[]) == ["A", "B", "C"]
    assert trace == ["A>", "B>", "C>", "tool", "<C", "<B", "<A"]


async def test_fallback_outside_timeout_turns_a_timeout_into_the_fallback():
    async def hangs(x: int) -> Any:
        await anyio.sleep(30)

    wrapped = apply_policies(hangs, [Fallback(value={"ok": True, "items": []}), Timeout(seconds=0.02)])
    with anyio.fail_after(10):
        assert await wrapped(x=1) == {"ok": True, "items": [], "_fallback": True}


async def test_cache_outside_retry_caches_the_retried_success(sleeps):
    tool = Flaky(failures=1)
    cache = Cache(ttl=60, clock=Clock())
    wrapped = apply_policies(tool, [cache, Retry(attempts=2, backoff=0.01)])
    assert (await wrapped(x=1))["call"] == 2
    assert (await wrapped(x=1))["call"] == 2
    assert tool.calls == 2
    assert cache.hits == 1


async def test_cache_outside_fallback_does_cache_a_fallback_but_inside_does_not():
    # Fallback's value is a success, so a cache outside it keeps it; a cache inside only sees the exception.
    calls = []

    def broken(x: int) -> Any:
        calls.append(x)
        raise RuntimeError

    inner = apply_policies(broken, [Fallback(value={"ok": True}), Cache(ttl=60, clock=Clock())])
    await inner(x=1)
    await inner(x=1)
    assert len(calls) == 2
    calls.clear()
    outer = apply_policies(broken, [Cache(ttl=60, clock=Clock()), Fallback(value={"ok": True})])
    await outer(x=1)
    assert await outer(x=1) == {"ok": True, "_fallback": True}
    assert len(calls) == 1


# ---- the wrapped function keeps its signature ------------------------------------------------------------------


def _search(text: str, limit: int = 10, exact: bool = False) -> dict[str, Any]:
    """Search the records.

    Args:
        text: Words to look for.
        limit: At most this many results.
        exact: Match exactly.
    """
    return {"ok": True}


def test_apply_policies_keeps_signature_and_docstring():
    wrapped = apply_policies(_search, [Timeout(seconds=1), Retry(), Cache(ttl=1), Fallback(value=None)])
    assert inspect.signature(wrapped) == inspect.signature(_search)
    assert wrapped.__name__ == "_search"
    assert wrapped.__doc__ == _search.__doc__
    assert inspect.iscoroutinefunction(wrapped)


def test_schema_of_a_tool_with_policies_is_generated_from_its_hints():
    plain = read_tool(_search, name="search")
    guarded = read_tool(_search, name="search", policies=[Timeout(seconds=1), Retry(), Cache(ttl=1)])
    schema = json_schema_for(guarded)
    assert schema == json_schema_for(plain)
    assert set(schema["properties"]) == {"text", "limit", "exact"}
    assert schema["required"] == ["text"]
    assert schema["properties"]["limit"]["type"] == "integer"
    assert schema["properties"]["limit"]["default"] == 10
    assert schema["properties"]["text"]["description"] == "Words to look for."
    agent = Agent(app="t", instructions="x", tools=(guarded,))
    [fn] = tool_schemas(agent)
    assert fn["function"]["name"] == "search"
    assert fn["function"]["description"] == "Search the records."
    assert fn["function"]["parameters"]["required"] == ["text"]


async def test_policies_apply_when_a_tool_is_called_through_its_tooldef(sleeps):
    tool = Flaky(failures=1)
    td = read_tool(tool.__call__, name="flaky", policies=[Retry(attempts=2, backoff=0.01)])
    assert (await td.call(x=3)) == {"ok": True, "x": 3, "call": 2}
    assert td.call is td.call  # wrapped once
