"""The MCP front end: one app's tools served by a FastMCP server (`consulta mcp <app>`), over stdio or streamable HTTP.

What a client sees, and what is decided here:
- The app's read tools, exactly as Consulta's own agent sees them: the same definitions (names, descriptions, JSON
  schemas from `tool_schemas`), the same argument validation (`invalid_arguments_result`), the same results; a tool's
  refusal comes back in the seeds' shape (`ToolError.to_result()`). `"ok": false` marks an MCP error result.
- The app's write tools stage: the operation is validated against the data and added to the session's plan, and
  the result carries the plan id and a preview; nothing is written. `apply_plan(plan_id)` asks the client's user to
  approve the previews (elicitation) and applies the plan atomically, returning the audit ids; declining rejects it,
  cancelling (or the question timeout) cancels it, and nothing is written (see `_plans`).
- The seed's `question` tool with its parameters, validation, error codes and results (`consulta.asks`), put to the
  client's user as a form: one field per question, titled by its header — a choice among the options, several
  choices for `multiple`, text otherwise. Accepting gives the seed's answered result; declining or cancelling gives
  `question_cancelled`; no answer within the agent's question timeout gives `question_timeout`; a client without
  elicitation (or, on a handshake-era connection, whose form fails) gets `question_unavailable`. A reply that does not fit the questions changes
  nothing and is asked for again with the reason, at most 3 times, then the model gets `invalid_answer`. On
  2026-07-28 connections the form travels in an `InputRequiredResult` and the client calls again with the reply; on
  older ones the server sends `elicitation/create` (see `_asking`). The seed's `question_not_alone` does not apply:
  the server never sees the client model's other calls of the same step.
- Everything on record: each client session is a run (principal `mcp:<session>`, model `mcp:<client name>`; what
  makes a session in each protocol era is said in `_sessions`) whose tool calls, events, asks (`question`, `plan`)
  and plans are stored like any run's, so `consulta runs`, `consulta asks` and the other front ends see them. Answers go through the runtime's ask API (`Runtime.answer`,
  validated by the ask's kind). The run ends `finished` when the server stops (`consulta stop` ends it
  `cancelled`); its pending asks and unapplied plans are cancelled then.
- What people read (form messages, plan approval, tool titles, the run's title) comes from the catalogs (`mcp.*`)
  in the settings' language; what the model reads is English, as everywhere in Consulta.
"""

from ._server import build_server, run_mcp

__all__ = ["build_server", "run_mcp"]
