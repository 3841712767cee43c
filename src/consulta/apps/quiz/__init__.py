"""quiz — adaptive test generation and auto-scoring (seed 004's reference app).

The six tools (`QuizTools`: profile, templates, difficulty keywords, validation, save, score) with the seed's
checks, timeouts, retries, cache, fallbacks and a durable retry queue for saves; the shipped bank; Mode 1 (generate →
validate → save) and Mode 2 (score and explain) as runs of the runtime; all six over MCP (`APP` declares them).
"""

from ._agent import AGENT, RETRY_JOURNAL, QuizOptions, build_agent, quiz_tools
from ._app import APP  # noqa: E402 - the declaration, over the parts above
from ._bank import CATEGORIES, ITEM_TYPES, BankItem, bank_items, content_hash, ensure_bank
from ._db import create_tables
from ._modes import PASS_SCORE, AnswerIn, Draft, GenerateRequest, ScoreRequest, read_request
from ._profiles import DEFAULT_PROFILE, Profile, level_difficulty, load_profile, save_profile
from ._retry_queue import RetryQueue
from ._tools import (
    DEFAULT_KEYWORDS,
    KEYWORD_CACHE_TTL,
    TIMEOUTS,
    TOOL_NAMES,
    InvalidArgument,
    InvalidArgumentType,
    QuizTools,
    parse_round_id,
)

__all__ = [
    "AGENT",
    "APP",
    "CATEGORIES",
    "DEFAULT_KEYWORDS",
    "DEFAULT_PROFILE",
    "ITEM_TYPES",
    "KEYWORD_CACHE_TTL",
    "PASS_SCORE",
    "RETRY_JOURNAL",
    "TIMEOUTS",
    "TOOL_NAMES",
    "AnswerIn",
    "BankItem",
    "Draft",
    "GenerateRequest",
    "InvalidArgument",
    "InvalidArgumentType",
    "Profile",
    "QuizOptions",
    "QuizTools",
    "RetryQueue",
    "ScoreRequest",
    "bank_items",
    "build_agent",
    "content_hash",
    "create_tables",
    "ensure_bank",
    "level_difficulty",
    "load_profile",
    "parse_round_id",
    "quiz_tools",
    "read_request",
    "save_profile",
]
