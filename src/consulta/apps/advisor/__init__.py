"""advisor — a graduate-advisor ranking site with a voice assistant (seed 003's reference app).

The agent fills the seed's form from free text (school and major names normalised in code: aliases, pinyin, fuzzy
matching; an ambiguous name becomes a `question`), fires `update_ranking` and `recommend_advisors` in code when the
form allows, resolves "第一个 / 这个 / 他" from the page context, and replies with the seed's
`{voice_response, tool_calls}` (at most 50 字). Sessions are durable, per principal.
"""

from ._agent import AGENT, TURN_TOOL, AdvisorOptions, AdvisorTurns, SiteLookups, agent_over, build_agent, session_of
from ._app import APP  # noqa: E402 - the declaration, over the parts above
from ._form import FormState, FormStatus, Preferences, UserForm, extract, merge, status
from ._names import Ambiguous, Match, NameBook, NameResult, Unknown, majors, schools
from ._sessions import Session, SessionBook
from ._turn import LIMIT, Lookups, SiteLookupError, ToolCall, TurnOutput, fit, spoken_length

__all__ = [
    "AGENT",
    "APP",
    "LIMIT",
    "TURN_TOOL",
    "AdvisorOptions",
    "AdvisorTurns",
    "Ambiguous",
    "FormState",
    "FormStatus",
    "SiteLookupError",
    "Lookups",
    "Match",
    "NameBook",
    "NameResult",
    "Preferences",
    "Session",
    "SessionBook",
    "SiteLookups",
    "ToolCall",
    "TurnOutput",
    "Unknown",
    "UserForm",
    "agent_over",
    "build_agent",
    "extract",
    "fit",
    "majors",
    "merge",
    "schools",
    "session_of",
    "spoken_length",
    "status",
]
