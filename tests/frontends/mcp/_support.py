"""Shared set-up of the MCP front-end tests: a temp home and inventory, the server, and a scripted person who
answers the client's elicitation requests."""

from __future__ import annotations

import hashlib
import shutil
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from fastmcp import Client, FastMCP
from fastmcp.client.elicitation import ElicitResult
from mcp_types import _v2025_11_25, _v2026_07_28
from pydantic import TypeAdapter

from consulta.apps.ln2 import SAMPLE_INVENTORY, build_agent
from consulta.config import Settings
from consulta.frontends.mcp import build_server
from consulta.runtime import Runtime, Store

MODES = ("legacy", "2026-07-28")
"""Both elicitation patterns: `elicitation/create` on a handshake-era session, input-required rounds on 2026-07-28."""

SCRIPT = resources.files("consulta.apps.ln2").joinpath("data", "scripts", "ambiguous_thaw.yaml")


def copy_sample(path: Path) -> Path:
    with resources.as_file(resources.files("consulta.apps.ln2").joinpath("data", SAMPLE_INVENTORY)) as sample:
        shutil.copyfile(sample, path)
    return path


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@dataclass
class Lab:
    """A temp Consulta home with a copy of the sample inventory."""

    home: Path
    lang: str = "en"
    question_timeout: float = 60.0

    def __post_init__(self) -> None:
        copy_sample(self.inventory)

    @property
    def inventory(self) -> Path:
        return self.home / "inventory.yaml"

    @property
    def settings(self) -> Settings:
        return Settings(
            home=self.home, database_url=f"sqlite:///{self.home}/consulta.db", model="local", lang=self.lang
        )

    def server(self) -> FastMCP:
        options = {"inventory": str(self.inventory), "question_timeout": self.question_timeout}
        return build_server(app="ln2", settings=self.settings, options=options)


@dataclass
class Person:
    """The client's user: answers each form with the next scripted reply (a dict accepts; "decline"/"cancel")."""

    replies: list[Any] = field(default_factory=list)
    seen: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    async def __call__(self, message: str, response_type: Any, params: Any, context: Any) -> Any:
        self.seen.append((message, params.requested_schema))
        reply = self.replies.pop(0)
        if reply in ("decline", "cancel"):
            return ElicitResult(action=reply)
        return ElicitResult(action="accept", content=reply)


def client(server: FastMCP, mode: str, person: Person | None = None) -> Client:
    """An in-memory client speaking `mode`; with a person, it supports elicitation."""
    return Client(server, mode=mode, elicitation_handler=person)


async def call(c: Client, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    """The tool's JSON result (error results included: they carry the seeds' shape)."""
    result = await c.call_tool(tool, args, raise_on_error=False)
    assert result.structured_content is not None, result
    return result.structured_content


def answer_elsewhere(lab: Lab, ask_id: str, value: Any) -> None:
    """Answer an ask the way another front end does (`consulta answer`): through the runtime's ask API, in its own
    store connection, as the machine's own user."""
    store = Store(lab.settings.database_url)
    try:
        runtime = Runtime(store=store, resolve_model=_no_model)
        runtime.register(build_agent(inventory=lab.inventory))
        runtime.answer(ask_id, value, answered_by="local")
    finally:
        store.close()


def _no_model(spec: str) -> Any:
    raise AssertionError(f"answering an ask needs no model ({spec})")


def assert_spec_form(schema: dict[str, Any]) -> None:
    """`schema` is a form every MCP client must render: a flat object whose fields are the spec's primitive schemas
    (2025-11-25 and 2026-07-28), with no key the spec does not define."""
    assert schema["type"] == "object" and set(schema) <= {"type", "properties", "required"}
    for version in (_v2025_11_25, _v2026_07_28):
        field_schema: TypeAdapter[Any] = TypeAdapter(version.PrimitiveSchemaDefinition)
        for name, prop in schema["properties"].items():
            parsed = field_schema.validate_python(prop)
            assert parsed.model_dump(by_alias=True, exclude_none=True, mode="json") == prop, (version.__name__, name)
