"""tutor — a pandas tutoring session planned by an orchestrator that consults experts (seed 000's reference app).

So far: the task catalog, the student's uploads (confined, bounded, opened with pandas and checked in code), the
experts (`data_inspector`, `concept_explainer`), the binding rules and the instruction packet that must carry their
updates; the orchestrator and the conversational assistant it hands each turn to (`APP` declares them).
"""

from importlib import resources

from ._agent import (
    Findings,
    TutorOptions,
    build_agent,
    build_assistant,
    ca_agent,
    ca_request,
    follow_up,
    found_for,
    packet_brief,
    packet_reply,
    reply_language,
    tutor_facts,
)
from ._app import APP  # noqa: E402 - the declaration, over the parts above
from ._datasets import MAX_UPLOAD_BYTES, DatasetFacts, Verdict, check_dataset, open_dataset, say_issue, upload_path
from ._experts import tutor_experts
from ._packet import (
    SUBMIT_PACKET_TOOL_NAME,
    InstructionPacket,
    binding_updates,
    submit_packet_tool,
    uninspected_uploads,
)
from ._tasks import DatasetRequirements, Task, TaskCatalog, load_catalog
from ._turns import CURRENT_TASK

BINDING_RULES = resources.files(__package__).joinpath("data", "binding_rules.yaml")

__all__ = [
    "APP",
    "BINDING_RULES",
    "CURRENT_TASK",
    "MAX_UPLOAD_BYTES",
    "SUBMIT_PACKET_TOOL_NAME",
    "DatasetFacts",
    "DatasetRequirements",
    "Findings",
    "InstructionPacket",
    "Task",
    "TaskCatalog",
    "TutorOptions",
    "Verdict",
    "binding_updates",
    "build_agent",
    "build_assistant",
    "ca_agent",
    "ca_request",
    "check_dataset",
    "follow_up",
    "found_for",
    "load_catalog",
    "open_dataset",
    "packet_brief",
    "packet_reply",
    "reply_language",
    "say_issue",
    "submit_packet_tool",
    "tutor_experts",
    "tutor_facts",
    "uninspected_uploads",
    "upload_path",
]
