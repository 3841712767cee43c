"""modeling (seed 002): a Director-run team — reader, researcher, modeler, data_engineer, code_translator,
model_trainer, validator, writer, visualizer, advisor — whose agents consult each other through the Director, on
record (`consultation/{from}_{to}_{i}.md`), with validation gates between the phases, from a problem to a paper (PDF).

The parts: `_problem` (the problem and its workspace), `_team` (the roles and their typed answers), `_consult` (the
seed's request, reply and record), `_director` (the flow, the gates, each agent's turn), `_consultations` (the
Director's rules for a consultation and its ledger row), `_memo` (what makes a run resumable), `_shape` (the data's
shape), `_plan` (the plan and its checks), `_templates` + `scripts/` (the template scripts, real `.py` files),
`_team_code` (the team's scripts written and run), `families` + `scripts/family_*.py` (the library of model
families) and `_task_models` (a family per task of the statement, chosen, checked, run and answered), `_compose`
(the paper from the result files), `_checks`/`_gates` (validation), `_sandbox_run` (the team's code in the sandbox),
`_paper` (Markdown → PDF by Typst), `_agent`/`_app` (the app's declaration), `_web` (the page's live timeline).
"""

from ._agent import AGENT, ModelingOptions, build_agent, decision_in_words
from ._app import APP
from ._consult import ConsultationRequest, Reply, parse_reply, parse_request, record_markdown, reply_text, request_text
from ._director import Director, Escalation, Refusal, Stopped, TeamConfig
from ._problem import (
    MAX_DATA_BYTES,
    MAX_STATEMENT_BYTES,
    Problem,
    ProblemError,
    load_problem,
    prepare_workspace,
    run_workspace,
    workspace_path,
)
from ._team import AGENTS, ROLES

__all__ = [
    "AGENT",
    "MAX_DATA_BYTES",
    "MAX_STATEMENT_BYTES",
    "AGENTS",
    "APP",
    "ROLES",
    "ConsultationRequest",
    "Director",
    "Escalation",
    "ModelingOptions",
    "Problem",
    "ProblemError",
    "Refusal",
    "Reply",
    "Stopped",
    "TeamConfig",
    "build_agent",
    "decision_in_words",
    "load_problem",
    "parse_reply",
    "parse_request",
    "prepare_workspace",
    "record_markdown",
    "reply_text",
    "request_text",
    "run_workspace",
    "workspace_path",
]
