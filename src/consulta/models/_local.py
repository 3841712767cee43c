"""The embedded default model: a GGUF run in process by llama.cpp (llama-cpp-python), as a pydantic-ai `Model`.

This module is the adapter; each other part of a step has its own module:

| module | job |
|---|---|
| `_schema` | the step protocol's JSON schema: tool schemas bounded and joined into one `anyOf` |
| `_grammar` | that schema as the GBNF grammar llama.cpp samples under |
| `_rendering` | the history as chat-template messages; the system prompt's tool list and reply-format line |
| `_parsing` | the generated JSON back into a tool call or text |
| `_local` (here) | `LocalModel`: planning a step from pydantic-ai's request, loading, generating, KV-cache reuse |

How a step works:

* The conversation is rendered (`_rendering`) with the GGUF's own chat template. The system message is the stable
  prefix of every step: system prompts and instructions, then a compact list of the tools, then one line on the
  reply format.
* When tools are offered, generation is constrained by a grammar (`_schema`, `_grammar`): an `anyOf` over
  `{"name": <tool>, "arguments": <its parameters>}` for every callable tool, plus `{"reply": ...}` when the agent may
  answer without a tool, with every string and array bounded. What the model wrote is parsed (`_parsing`) into a
  tool call or a text part.
* One `llama_cpp.Llama` per `LocalModel`, kept across steps and runs: llama-cpp-python keeps the KV cache of its last
  prompt and only evaluates the tokens after the longest common token prefix, so step 2 of a run pays for the tool
  call (as the template writes it back) and its result, not for the system prompt again. `LocalModel.last_stats`
  reports what each step evaluated.
* Across processes (and after another agent's prompt replaced the KV cache), the stable start of the prompt - the
  system message - is loaded from a `PrefixCache` in the data dir when one is given: the first step ever to see a
  system message evaluates it, saves llama.cpp's state right after it, and every later step starting with the same
  tokens loads that file instead of evaluating ~1,200 tokens again.
* llama.cpp blocks and is not thread-safe: calls are serialised by a lock and run on one dedicated thread, so the
  event loop stays free; a cancelled request stops generating at the next token.
"""

from __future__ import annotations

import asyncio
import os
import re
import threading
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import anyio
import anyio.to_thread
from pydantic_ai import RunContext
from pydantic_ai.exceptions import ModelContextWindowExceededError
from pydantic_ai.messages import (
    ModelMessage,
    ModelResponse,
    ModelResponsePart,
    ModelResponseStreamEvent,
    TextPart,
    ToolCallPart,
)
from pydantic_ai.models import Model, ModelRequestParameters, StreamedResponse
from pydantic_ai.models._tool_choice import resolve_tool_choice  # the same resolution every adapter uses
from pydantic_ai.profiles import ModelProfile
from pydantic_ai.settings import ModelSettings
from pydantic_ai.tools import ToolDefinition
from pydantic_ai.usage import RequestUsage

from ..runtime import ConfigError
from ._grammar import schema_to_gbnf
from ._llama_cpu import threads_for_now, without_extra_buffer_types
from ._parsing import parse_step
from ._prefix_cache import PrefixCache, common_prefix
from ._rendering import ChatMessage, chat_template_formatter, describe_tools, format_instruction, render_messages
from ._schema import DEFAULT_BOUNDS, SchemaBounds, bound_schema, build_step_schema

if TYPE_CHECKING:
    from llama_cpp import Llama
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter
    from llama_cpp.llama_grammar import LlamaGrammar

__all__ = ["STEP_MAX_TOKENS", "LocalModel", "RenderedRequest", "StepStats"]

STEP_MAX_TOKENS = 512
"""The tokens a model may write in one step unless a request asks otherwise: the embedded model's cap, and the one
Consulta asks of an OpenAI-compatible server (which otherwise applies its own default, up to its context's end)."""

_LABEL_CHUNK = 32
"""Tokens `label_probabilities` evaluates between two looks at its cancel flag."""


@dataclass(frozen=True, kw_only=True)
class StepStats:
    """What one request to the local model cost, as llama.cpp reports it.

    `reused_tokens` of the `prompt_tokens` came from the KV cache: of the previous request (the longest common token
    prefix) or, `restored_tokens` of them, from a saved prefix loaded from disk; `prefix_saved` tells whether this
    step saved its system message's state for later runs; `prompt_eval_tokens` were evaluated in batches (llama.cpp's perf counter); `generated_tokens` were
    sampled. Times are llama.cpp's own, in seconds. `finish_reason` is llama.cpp's: `"length"` when generation
    stopped at `max_tokens`, `"stop"` otherwise.
    """

    prompt_tokens: int
    reused_tokens: int
    prompt_eval_tokens: int
    prompt_seconds: float
    generated_tokens: int
    generation_seconds: float
    finish_reason: str
    restored_tokens: int = 0
    prefix_saved: bool = False

    @property
    def generation_tokens_per_second(self) -> float:
        """Generated tokens per second of generation time (0 when no time was measured)."""
        return self.generated_tokens / self.generation_seconds if self.generation_seconds else 0.0


@dataclass(frozen=True, kw_only=True)
class RenderedRequest:
    """What one request hands llama.cpp: the chat messages, the templated prompt, and the GBNF grammar (if any)."""

    chat: list[ChatMessage]
    prompt: str
    grammar: str | None


@dataclass(frozen=True, kw_only=True)
class _Plan:
    """Everything one step needs from the pydantic-ai side, computed on the event loop.

    `kind` is what the model writes: free text, one JSON object (a structured answer with no tools), or the step
    protocol (a tool call or a reply, see `_schema`). `schema` is what the grammar is built from (`None`: no grammar);
    `tool_names` the tools this step may call; `structured_reply` whether a reply must match the output schema;
    `sampling` the keyword arguments for `Llama.create_completion`.
    """

    chat: list[ChatMessage]
    kind: Literal["text", "object", "step"]
    schema: dict[str, Any] | None
    tool_names: tuple[str, ...]
    structured_reply: bool
    sampling: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class _Generation:
    """What the worker thread hands back for one step: the generated text and what it cost."""

    text: str
    stats: StepStats


def _open_llama(llama_cpp: Any, **kwargs: Any) -> Llama:
    """`llama_cpp.Llama(**kwargs)`, without llama.cpp's extra buffer types where this CPU cannot run them (see
    `_llama_cpu`; model loads are serialised by the caller's lock)."""
    with without_extra_buffer_types(llama_cpp):
        llama: Llama = llama_cpp.Llama(**kwargs)
    return llama


class LocalModel(Model):
    """A GGUF chat model run in this process by llama.cpp, with grammar-forced tool calls and KV-cache reuse.

    The weights are loaded on the first request, or earlier by `load()` (blocking; a front end can run it in a thread
    while it shows progress). Temperature defaults to 0, so the same conversation gives the same step.
    `model_settings` honoured: `temperature`, `max_tokens`, `top_p`, `top_k`, `seed`, `stop_sequences`,
    `presence_penalty`, `frequency_penalty`, `logit_bias`, `tool_choice`, and `timeout` (seconds, a number): a step
    not done by then stops generating at its next token (or does not start) and raises TimeoutError, as a remote
    model's request times out.
    """

    unsupported_settings = frozenset({"max_retries", "extra_headers", "extra_body"})

    def __init__(
        self,
        gguf_path: Path,
        *,
        n_ctx: int = 8192,
        n_threads: int | None = None,
        max_tokens: int = STEP_MAX_TOKENS,
        seed: int = 0,
        bounds: SchemaBounds = DEFAULT_BOUNDS,
        verbose: bool = False,
        settings: ModelSettings | None = None,
        prefix_cache: PrefixCache | None = None,
    ) -> None:
        """Describe the model; nothing is loaded yet.

        `n_threads` defaults to every core (llama-cpp-python's own default is half of them); each step uses at most
        that many, and no more than the cores other processes leave free at its start (`threads_for_now`: at least
        one; on 2 cores shared with one busy process one thread is twice as fast as two). `max_tokens` is the
        default cap on generated tokens per step. `bounds` limits the strings and arrays the grammar allows.
        `prefix_cache` keeps system-message states on disk for later runs and processes (`None`: memory only).
        """
        self.gguf_path = Path(gguf_path)
        self.n_ctx = n_ctx
        self.n_threads = n_threads or os.cpu_count() or 1
        self.max_tokens = max_tokens
        self.seed = seed
        self.bounds = bounds
        self.verbose = verbose
        self.prefix_cache = prefix_cache
        self._prefix_key: str | None = None
        self.last_stats: StepStats | None = None
        self._llama: Llama | None = None
        self._formatter: Jinja2ChatFormatter | None = None
        self._lock = threading.Lock()
        # Every generation runs on this one long-lived thread. llama.cpp's CPU backend uses OpenMP, whose thread team
        # belongs to the calling thread: a new caller thread per request (anyio's pool, one per event loop) built a
        # new team each time and generated ~25% slower than raw llama-cpp-python called from one thread.
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="consulta-llama")
        self._checked_grammars: set[str] = set()
        profile = ModelProfile(
            supports_tools=True,
            supports_json_schema_output=True,
            supports_json_object_output=True,
            # The Qwen template renders a system message anywhere in the conversation.
            supports_inline_system_prompts=True,
            # The whole prompt is tokenized with special=True, so `<|im_start|>` in content would open a real turn.
            may_tokenize_special_tokens_in_content=True,
            supports_forced_tool_choice=True,
            # The grammar fixes the shape, but only a schema in the prompt tells the model what the fields mean.
            native_output_requires_schema_in_instructions=True,
            context_window=n_ctx,
        )
        super().__init__(settings=settings, profile=profile)

    @property
    def model_name(self) -> str:
        """The GGUF file name without its extension."""
        return self.gguf_path.stem

    @property
    def system(self) -> str:
        """The provider name pydantic-ai records on each response."""
        return "llama.cpp"

    @property
    def loaded(self) -> bool:
        """Whether the weights are in memory now."""
        return self._llama is not None

    def load(self) -> None:
        """Load the weights now (blocking, a few seconds; idempotent and thread-safe).

        Raises `ConfigError` when llama-cpp-python is not installed, the GGUF file does not exist, or it has no chat
        template.
        """
        with self._lock:
            self._load_locked()

    def close(self) -> None:
        """Free the weights and the KV cache; the next request loads them again."""
        with self._lock:
            if self._llama is not None:
                self._llama.close()
            self._llama = None
            self._formatter = None

    @property
    def llama(self) -> Llama:
        """The loaded `llama_cpp.Llama` (loading it if needed), for benchmarks and diagnostics."""
        self.load()
        assert self._llama is not None
        return self._llama

    def _load_locked(self) -> Llama:
        if self._llama is not None:
            return self._llama
        try:
            import llama_cpp
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise ConfigError(
                "The local model needs llama-cpp-python: install it with `uv sync --extra local` "
                "(or pip install 'consulta[local]')."
            ) from exc
        if not self.gguf_path.is_file():
            raise ConfigError(f"The model file {self.gguf_path} does not exist; check CONSULTA_GGUF or reinstall.")
        llama = _open_llama(
            llama_cpp,
            model_path=str(self.gguf_path),
            n_ctx=self.n_ctx,
            n_threads=self.n_threads,
            n_threads_batch=self.n_threads,
            seed=self.seed,
            verbose=self.verbose,
        )
        try:
            self._formatter = chat_template_formatter(llama, gguf_name=self.gguf_path.name)
        except ConfigError:
            llama.close()
            raise
        if self.prefix_cache is not None:
            self._prefix_key = PrefixCache.model_key(self.gguf_path, n_ctx=self.n_ctx)
        self._llama = llama
        return llama

    def render(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None = None,
        model_request_parameters: ModelRequestParameters | None = None,
    ) -> RenderedRequest:
        """What `request` would send for these arguments, without generating (loads the model for its template).

        For debugging prompts and for benchmarks that must feed raw llama-cpp-python the very same prompt.
        """
        settings, params = self.prepare_request(model_settings, model_request_parameters or ModelRequestParameters())
        plan = self._plan(messages, settings or {}, params)
        self.load()
        return RenderedRequest(
            chat=plan.chat,
            prompt=self._formatter(messages=plan.chat).prompt,
            grammar=schema_to_gbnf(plan.schema) if plan.schema is not None else None,
        )

    # ---- pydantic-ai entry point -----------------------------------------------------------------------------------

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        """Run one step: render, generate under the step's grammar, parse into a tool call or a text part."""
        model_settings, params = self.prepare_request(model_settings, model_request_parameters)
        return await self._complete(messages, model_settings, params)

    @asynccontextmanager
    async def request_stream(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
        run_context: RunContext[Any] | None = None,
    ) -> AsyncIterator[StreamedResponse]:
        """The step as a stream: a plain reply's words as they are generated (decoded from the `{"reply": "…` the
        grammar has the model write); a tool call or a structured reply only once its JSON is complete (what the
        model writes for code is never streamed as words)."""
        model_settings, params = self.prepare_request(model_settings, model_request_parameters)
        plan = self._plan(messages, model_settings or {}, params)
        stream = _GeneratingStream(model_request_parameters=params, _model=self, _plan=plan)
        try:
            yield stream
        finally:
            stream.stop.set()  # left early (the run stopped): the worker stops at its next token

    async def _complete(
        self, messages: list[ModelMessage], model_settings: ModelSettings | None, params: ModelRequestParameters
    ) -> ModelResponse:
        """Plan the step here, generate on the worker thread, and parse what came back into one response."""
        plan = self._plan(messages, model_settings or {}, params)
        timeout = (model_settings or {}).get("timeout")
        limit = float(timeout) if isinstance(timeout, int | float) else None  # an httpx.Timeout is a client's
        cancel = threading.Event()
        generation = await self._run_generation(plan, cancel, limit=limit)
        return self._response(plan, generation)

    async def _run_generation(
        self,
        plan: _Plan,
        cancel: threading.Event,
        on_text: Callable[[str], None] | None = None,
        *,
        limit: float | None = None,
    ) -> _Generation:
        """The step generated on the worker thread, within `limit` seconds (None: no limit): a step still queued
        when the caller gives up never starts, a running one stops at its next token and releases the lock."""
        future = self._worker.submit(self._generate, plan, cancel, on_text)
        try:
            with anyio.fail_after(limit):
                return await anyio.to_thread.run_sync(future.result, abandon_on_cancel=True)
        except (TimeoutError, anyio.get_cancelled_exc_class()) as stopped:
            future.cancel()
            cancel.set()
            if isinstance(stopped, TimeoutError):
                raise TimeoutError(f"The local model did not finish its step within {limit:g} s.") from None
            raise

    def _response(self, plan: _Plan, generation: _Generation) -> ModelResponse:
        """What the step generated, as one response (its stats kept as `last_stats`)."""
        self.last_stats = generation.stats
        parts: list[ModelResponsePart]
        if plan.kind == "step":
            parts = parse_step(generation.text, tool_names=plan.tool_names, structured_reply=plan.structured_reply)
        else:
            parts = [TextPart(generation.text.strip() if plan.kind == "text" else generation.text)]
        is_call = any(isinstance(p, ToolCallPart) for p in parts)
        cut_short = generation.stats.finish_reason == "length"
        return ModelResponse(
            parts=parts,
            usage=RequestUsage(
                input_tokens=generation.stats.prompt_tokens,
                cache_read_tokens=generation.stats.reused_tokens,
                output_tokens=generation.stats.generated_tokens,
            ),
            model_name=self.model_name,
            provider_name=self.system,
            finish_reason="tool_call" if is_call else ("length" if cut_short else "stop"),
        )

    def _plan(self, messages: list[ModelMessage], settings: ModelSettings, params: ModelRequestParameters) -> _Plan:
        """Decide the step's kind, grammar schema and callable tools (honouring `tool_choice`) and render the chat."""
        declared = list(params.declared_tool_defs.values())
        instructions = [p.content for p in (self._get_instruction_parts(messages, params) or [])]
        output_schema = params.output_object.json_schema if params.output_object is not None else None
        text_reply: Literal["text"] | Mapping[str, Any] = output_schema if output_schema is not None else "text"

        schema: dict[str, Any] | None
        kind: Literal["text", "object", "step"]
        callable_tools: list[ToolDefinition] = []
        if declared:
            kind = "step"
            choice = resolve_tool_choice(settings, params)
            mode, names = (choice, None) if isinstance(choice, str) else choice
            if mode == "none":
                allowed: list[ToolDefinition] = []
            else:
                allowed = [t for t in declared if names is None or t.name in names]
            callable_tools = allowed
            reply = text_reply if mode in ("auto", "none") else None
            schema = build_step_schema(allowed, reply=reply, bounds=self.bounds)
            # The tool list and format line describe every declared tool, whatever this step allows, so the system
            # prompt - the cached prefix - stays the same from step to step.
            format_reply = text_reply if params.allow_text_output or output_schema is not None else None
            system_tail = [describe_tools(declared), format_instruction(format_reply)]
        elif output_schema is not None:
            kind, schema, system_tail = "object", bound_schema(output_schema, self.bounds), []
        else:
            kind, schema, system_tail = "text", None, []
        system = "\n\n".join([*instructions, *system_tail])
        return _Plan(
            chat=render_messages(messages, system=system or None),
            kind=kind,
            schema=schema,
            tool_names=tuple(t.name for t in callable_tools),
            structured_reply=output_schema is not None,
            sampling=self._sampling(settings),
        )

    def _sampling(self, settings: ModelSettings) -> dict[str, Any]:
        """`create_completion`'s sampling arguments: the model's defaults, overridden by the request's settings."""
        sampling: dict[str, Any] = {
            "max_tokens": settings.get("max_tokens", self.max_tokens),
            "temperature": settings.get("temperature", 0.0),
            "seed": settings.get("seed", self.seed),
            # llama-cpp-python's chat default is 1.1, which penalises the quotes and braces JSON repeats.
            "repeat_penalty": 1.0,
            "stop": list(settings.get("stop_sequences", [])),
        }
        for name in ("top_p", "top_k", "presence_penalty", "frequency_penalty"):
            if name in settings:
                sampling[name] = settings[name]  # type: ignore[literal-required]
        if bias := settings.get("logit_bias"):
            sampling["logit_bias"] = {int(token): float(value) for token, value in bias.items()}
        return sampling

    async def label_probabilities(self, *, system: str, prompt: str, labels: Sequence[str]) -> dict[str, float]:
        """The model's probability of each label as the first token of its reply to `prompt` (under `system`), read
        from ONE forward pass and normalised over the labels (each label is scored by its first token, so labels must
        differ in it; `ValueError` if two do not). Nothing is sampled. The KV cache is reused as for a step: prompts
        sharing a start (a fixed instruction and item) only evaluate what differs."""
        chat: list[ChatMessage] = [{"role": "system", "content": system}, {"role": "user", "content": prompt}]
        cancel = threading.Event()
        try:
            future = self._worker.submit(self._label_logits, chat, tuple(labels), cancel)
            return await anyio.to_thread.run_sync(future.result, abandon_on_cancel=True)
        except anyio.get_cancelled_exc_class():
            cancel.set()  # a caller that gave up (its time limit) frees the model within one chunk of tokens
            raise

    async def last_state(self, *, system: str, prompt: str) -> list[float]:
        """The model's hidden state (the final layer, normalised as the output head reads it) at the last token of the
        prompt it would answer (`prompt` under `system`, the assistant's turn opened): what a linear read-out such as a
        fitted grading probe weighs. One forward pass, the KV cache reused as for `label_probabilities`."""
        chat: list[ChatMessage] = [{"role": "system", "content": system}, {"role": "user", "content": prompt}]
        cancel = threading.Event()
        try:
            future = self._worker.submit(self._last_state, chat, cancel)
            return await anyio.to_thread.run_sync(future.result, abandon_on_cancel=True)
        except anyio.get_cancelled_exc_class():
            cancel.set()
            raise

    def _last_state(self, chat: list[ChatMessage], cancel: threading.Event) -> list[float]:
        import llama_cpp
        import numpy as np

        if cancel.is_set():
            raise TimeoutError("the caller gave up before the model was free")
        with self._lock:
            llama = self._load_locked()
            tokens = self._prompt_tokens(llama, chat)
            keep = _reusable_prefix(llama, tokens)
            llama.n_tokens = keep
            self._fit_threads(llama_cpp, llama)
            for start in range(keep, len(tokens) - 1, _LABEL_CHUNK):
                if cancel.is_set():
                    raise TimeoutError("the caller gave up while the prompt was being read")
                llama.eval(tokens[start : min(start + _LABEL_CHUNK, len(tokens) - 1)])
            # Embeddings on for the last token alone: on for the whole prompt, llama.cpp would compute every token's
            # logits (151k each) as outputs.
            llama_cpp.llama_set_embeddings(llama.ctx, True)
            try:
                llama.eval(tokens[-1:])
                state = np.ctypeslib.as_array(
                    llama_cpp.llama_get_embeddings_ith(llama.ctx, -1), shape=(llama.n_embd(),)
                )
                return [float(x) for x in state]
            finally:
                llama_cpp.llama_set_embeddings(llama.ctx, False)

    def _prompt_tokens(self, llama: Llama, chat: list[ChatMessage]) -> list[int]:
        """`chat` rendered by the model's template and tokenised; a prompt that leaves no room in the context window
        raises `ModelContextWindowExceededError`."""
        formatted = self._formatter(messages=chat)
        tokens = llama.tokenize(formatted.prompt.encode("utf-8"), add_bos=not formatted.added_special, special=True)
        if len(tokens) >= llama.n_ctx():
            raise ModelContextWindowExceededError(self.model_name, f"The prompt is {len(tokens)} tokens, too long.")
        return tokens

    def _fit_threads(self, llama_cpp: Any, llama: Llama) -> None:
        """Give the next step the threads the cores free right now allow (see `threads_for_now`)."""
        threads = threads_for_now(self.n_threads)
        llama_cpp.llama_set_n_threads(llama.ctx, threads, threads)

    def _label_logits(
        self, chat: list[ChatMessage], labels: tuple[str, ...], cancel: threading.Event
    ) -> dict[str, float]:
        import llama_cpp
        import numpy as np

        if cancel.is_set():
            raise TimeoutError("the caller gave up before the model was free")
        with self._lock:
            llama = self._load_locked()
            tokens = self._prompt_tokens(llama, chat)
            firsts = [llama.tokenize(label.encode("utf-8"), add_bos=False, special=False)[0] for label in labels]
            if len(set(firsts)) != len(firsts):
                raise ValueError(f"the labels {list(labels)} do not differ in their first token")
            keep = _reusable_prefix(llama, tokens)
            llama.n_tokens = keep
            self._fit_threads(llama_cpp, llama)
            for start in range(keep, len(tokens), _LABEL_CHUNK):  # eval drops the KV cache after n_tokens first
                if cancel.is_set():
                    raise TimeoutError("the caller gave up while the prompt was being read")
                llama.eval(tokens[start : start + _LABEL_CHUNK])
            logits = np.ctypeslib.as_array(llama._ctx.get_logits_ith(-1), shape=(llama.n_vocab(),))
            chosen = logits[firsts].astype(np.float64)
        weights = np.exp(chosen - chosen.max())
        return {label: float(w) for label, w in zip(labels, weights / weights.sum(), strict=True)}

    # ---- the blocking part, in a worker thread ---------------------------------------------------------------------

    def _generate(
        self, plan: _Plan, cancel: threading.Event, on_text: Callable[[str], None] | None = None
    ) -> _Generation:
        """Generate one step under the lock (loading the model if needed); stops early once `cancel` is set. With
        `on_text`, each piece of text is handed to it as soon as it is generated (on this thread).

        Raises `ModelContextWindowExceededError` when the prompt leaves no room to answer in the context window.
        """
        import llama_cpp

        with self._lock:
            llama = self._load_locked()
            formatted = self._formatter(messages=plan.chat)
            tokens = llama.tokenize(formatted.prompt.encode("utf-8"), add_bos=not formatted.added_special, special=True)
            max_tokens = plan.sampling["max_tokens"]
            if len(tokens) + min(max_tokens, 64) >= llama.n_ctx():
                raise ModelContextWindowExceededError(
                    self.model_name,
                    f"The conversation is {len(tokens)} tokens, too long for the context window of {llama.n_ctx()} "
                    "tokens: start a new conversation, shorten tool results, or raise n_ctx.",
                )
            llama_cpp.llama_perf_context_reset(llama.ctx)
            self._fit_threads(llama_cpp, llama)
            restored, saved = self._use_prefix_cache(llama, plan, tokens)
            reused = _reusable_prefix(llama, tokens)
            grammar = self._grammar(llama, plan.schema) if plan.schema is not None else None

            def stop_on_cancel(_ids: Any, _logits: Any) -> bool:
                return cancel.is_set()

            criteria = llama_cpp.StoppingCriteriaList([stop_on_cancel])
            if formatted.stopping_criteria is not None:
                criteria.extend(formatted.stopping_criteria)
            stop = plan.sampling["stop"] + (
                [formatted.stop] if isinstance(formatted.stop, str) else formatted.stop or []
            )
            completion: Any = llama.create_completion(  # one response, or its chunks when streamed
                prompt=tokens,
                grammar=grammar,
                stopping_criteria=criteria,
                stream=on_text is not None,
                **{**plan.sampling, "stop": stop},
            )
            if on_text is None:
                choice, usage = completion["choices"][0], completion["usage"]
                text, finish = choice["text"], choice["finish_reason"]
                prompt_tokens, generated = usage["prompt_tokens"], usage["completion_tokens"]
            else:
                pieces: list[str] = []
                finish, prompt_tokens, generated = None, len(tokens), 0
                for chunk in completion:  # one chunk a token (llama-cpp-python's stream has no usage: counted here)
                    piece = chunk["choices"][0]
                    finish = piece["finish_reason"] or finish
                    if piece["text"]:
                        pieces.append(piece["text"])
                        generated += 1
                        on_text(piece["text"])
                text = "".join(pieces)
            perf = llama_cpp.llama_perf_context(llama.ctx)
        stats = StepStats(
            prompt_tokens=prompt_tokens,
            reused_tokens=reused,
            prompt_eval_tokens=perf.n_p_eval,
            prompt_seconds=perf.t_p_eval_ms / 1000,
            generated_tokens=generated,
            generation_seconds=perf.t_eval_ms / 1000,
            finish_reason=finish or "stop",
            restored_tokens=min(restored, reused),
            prefix_saved=saved,
        )
        return _Generation(text=text, stats=stats)

    def _use_prefix_cache(self, llama: Llama, plan: _Plan, tokens: list[int]) -> tuple[int, bool]:
        """Bring the system message's KV state in from disk, or save it there; returns (tokens restored, saved?).

        Runs under the lock, before generation. A saved prefix is loaded when it covers more of `tokens` than the
        KV cache already does. The system message is saved when no entry holds it yet: evaluated up to its end
        first (generation then goes on from there, so nothing is evaluated twice).
        """
        cache, key = self.prefix_cache, self._prefix_key
        if cache is None or key is None or not plan.chat or plan.chat[0]["role"] != "system":
            return 0, False
        in_memory = common_prefix(llama.input_ids[: llama.n_tokens], tokens)
        restored = 0
        entry, common = cache.best(key, tokens)
        if entry is not None and common > in_memory + 16 and cache.load(llama, entry):
            restored = in_memory = common
        system_only = self._formatter(messages=plan.chat[:1])
        system_tokens = llama.tokenize(
            system_only.prompt.encode("utf-8"), add_bos=not system_only.added_special, special=True
        )
        stable = common_prefix(system_tokens, tokens)
        if stable < cache.min_tokens or stable >= len(tokens) or cache.covers(key, tokens[:stable]):
            return restored, False
        keep = min(in_memory, stable)
        llama._ctx.kv_cache_seq_rm(-1, keep, -1)
        llama.n_tokens = keep
        llama.eval(tokens[keep:stable])
        return restored, cache.save(llama, key, tokens[:stable])

    def _grammar(self, llama: Llama, schema: dict[str, Any]) -> LlamaGrammar:
        """The grammar for `schema`, checked once per distinct grammar; `ValueError` if llama.cpp cannot parse it."""
        import llama_cpp
        from llama_cpp.llama_grammar import LlamaGrammar

        gbnf = schema_to_gbnf(schema)
        if gbnf not in self._checked_grammars:
            # llama.cpp returns NULL for a grammar it cannot parse, and adding NULL to a sampler chain crashes the
            # process; parse it once on its own first so a bad schema is an exception, not a segfault.
            sampler = llama_cpp.llama_sampler_init_grammar(llama._model.vocab, gbnf.encode(), b"root")
            if not sampler:
                raise ValueError(
                    "llama.cpp could not parse the grammar built from the tool schemas; "
                    f"simplify the offending tool's parameters. Grammar starts:\n{gbnf[:2000]}"
                )
            llama_cpp.llama_sampler_free(sampler)
            self._checked_grammars.add(gbnf)
        return LlamaGrammar.from_string(gbnf, verbose=self.verbose)


_REPLY_OPENS = re.compile(r'\s*\{\s*"reply"\s*:\s*"')
_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


def reply_so_far(raw: str) -> str | None:
    """The words of a plain reply in `raw`, the step's JSON as generated so far (`{"reply": "…`), decoded up to its
    last complete character; None while `raw` is not (or not yet known to be) such a reply."""
    opened = _REPLY_OPENS.match(raw)
    if opened is None:
        return None
    out: list[str] = []
    body, i = raw, opened.end()
    while i < len(body):
        c = body[i]
        if c == '"':
            break  # the reply's end
        if c != "\\":
            out.append(c)
            i += 1
            continue
        if i + 1 >= len(body):
            break  # an escape cut in half: wait for the rest
        kind = body[i + 1]
        if kind in _ESCAPES:
            out.append(_ESCAPES[kind])
            i += 2
            continue
        if kind != "u" or i + 6 > len(body):
            break
        code = int(body[i + 2 : i + 6], 16) if all(ch in "0123456789abcdefABCDEF" for ch in body[i + 2 : i + 6]) else -1
        if code < 0:
            break
        if 0xD800 <= code < 0xDC00:  # a surrogate pair: both halves or nothing
            low = body[i + 8 : i + 12] if body[i + 6 : i + 8] == "\\u" else ""
            if len(low) < 4 or not all(ch in "0123456789abcdefABCDEF" for ch in low):
                break
            out.append(chr(0x10000 + ((code - 0xD800) << 10) + (int(low, 16) - 0xDC00)))
            i += 12
            continue
        out.append(chr(code))
        i += 6
    return "".join(out)


@dataclass
class _GeneratingStream(StreamedResponse):
    """One step of a `LocalModel` as it is generated: a plain reply's words as text deltas, then the step's parts
    exactly as `LocalModel.request` would give them (the streamed reply replaced by the parsed one)."""

    _model: LocalModel
    _plan: _Plan
    stop: threading.Event = field(default_factory=threading.Event)
    _timestamp: datetime = field(default_factory=lambda: datetime.now(UTC))

    async def _get_event_iterator(self) -> AsyncIterator[ModelResponseStreamEvent]:
        plan = self._plan
        words = plan.kind == "step" and not plan.structured_reply  # a plain reply may come: its words stream
        loop = asyncio.get_running_loop()
        pieces: asyncio.Queue[str] = asyncio.Queue()

        def heard(piece: str) -> None:
            loop.call_soon_threadsafe(pieces.put_nowait, piece)

        generating = asyncio.ensure_future(
            self._model._run_generation(plan, self.stop, heard if words or plan.kind == "text" else None)
        )
        raw, shown = "", 0
        try:
            while not (generating.done() and pieces.empty()):
                getting = asyncio.ensure_future(pieces.get())
                await asyncio.wait({getting, generating}, return_when=asyncio.FIRST_COMPLETED)
                if not getting.done():
                    getting.cancel()
                    continue
                raw += getting.result()
                text = raw if plan.kind == "text" else reply_so_far(raw)
                if text is not None and len(text) > shown:
                    for event in self._parts_manager.handle_text_delta(vendor_part_id="reply", content=text[shown:]):
                        yield event
                    shown = len(text)
            response = self._model._response(plan, generating.result())
        finally:
            if not generating.done():
                self.stop.set()
                generating.cancel()
        self._usage = response.usage
        self.finish_reason = response.finish_reason
        for index, part in enumerate(response.parts):
            # The reply as parsed replaces the words streamed (the same text, but for a reply cut short).
            yield self._parts_manager.handle_part(vendor_part_id="reply" if shown and index == 0 else index, part=part)

    async def close_stream(self) -> None:
        self.stop.set()

    @property
    def model_name(self) -> str:
        return self._model.model_name

    @property
    def provider_name(self) -> str | None:
        return self._model.system

    @property
    def provider_url(self) -> str | None:
        return None

    @property
    def timestamp(self) -> datetime:
        return self._timestamp


def _reusable_prefix(llama: Llama, tokens: Sequence[int]) -> int:
    """How many of `tokens` llama-cpp-python will take from its KV cache (mirrors `Llama.generate`)."""
    cached = llama.input_ids[: llama.n_tokens]
    common = 0
    for a, b in zip(cached, tokens, strict=False):
        if a != b:
            break
        common += 1
    # A fully cached prompt still replays its last token to get fresh logits.
    return common - 1 if common == len(tokens) and common > 0 else common
