"""`Agent.check_reply`: the agent's final text is checked in code; a refused text goes back to the model with the
reason and it writes again (a run whose model never passes ends at its step limit, readably)."""

from __future__ import annotations

from pathlib import Path

from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from consulta.runtime import Agent, RunStatus, Store, TurnFacts

REASON = "No code blocks, please."


def no_code(text: str, facts: TurnFacts) -> None:
    if "```" in text:
        raise ValueError(REASON)


def run_with(tmp_path: Path, run_once, replies: list[str], *, max_steps: int = 25):  # noqa: ANN001, ANN201
    told: list[str] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        last = messages[-1]  # the reason comes back as automated feedback in the next request
        told.extend(
            REASON
            for p in getattr(last, "parts", [])
            if isinstance(last, ModelRequest) and REASON in str(getattr(p, "content", ""))
        )
        return ModelResponse(parts=[TextPart(replies[min(len(told), len(replies) - 1)])])

    store = Store(f"sqlite:///{tmp_path}/consulta.db")
    agent = Agent(app="t", instructions="Help.", tools=(), check_reply=no_code, max_steps=max_steps)
    return run_once(store, agent, "How do I see the columns?", FunctionModel(model)), told


def test_a_refused_reply_is_written_again_with_the_reason(tmp_path: Path, run_once) -> None:  # noqa: ANN001
    run, told = run_with(
        tmp_path, run_once, ["```python\nprint(df.columns)\n```", "Which attribute of a DataFrame lists its columns?"]
    )
    assert run.status == RunStatus.finished and run.output == "Which attribute of a DataFrame lists its columns?"
    assert told == [REASON]


def test_a_model_that_never_passes_ends_at_the_step_limit(tmp_path: Path, run_once) -> None:  # noqa: ANN001
    run, told = run_with(tmp_path, run_once, ["```x```"], max_steps=3)
    assert run.status == RunStatus.failed and run.error is not None and "step limit" in run.error
    assert told and set(told) == {REASON}
