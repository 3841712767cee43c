"""The terminal front end starts at once: importing it (what `consulta --help` pays) brings neither the engine
(pydantic-ai), the web (FastAPI), the store (SQLAlchemy) nor any app; each command imports what it uses. Checked in
a fresh interpreter's `sys.modules`, not timed (bench/bench_cli_startup.py times it)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.subprocess  # each test starts a Python child process (what the terminal imports at start-up)

HEAVY = (
    "pydantic_ai",
    "fastapi",
    "sqlalchemy",
    "alembic",
    "asyncio",
    "consulta.runtime._agent",
    "consulta.frontends._host",
    "consulta.apps.ln2",
    "consulta.apps.quiz",
)


def imported_after(code: str, *, home: Path | None = None) -> set[str]:
    """The modules a fresh interpreter holds after running `code` (with its data in `home`, English messages)."""
    probe = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    env = {**os.environ, "CONSULTA_LANG": "en", **({"CONSULTA_HOME": str(home)} if home else {})}
    env.pop("CONSULTA_DATABASE_URL", None)
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True, env=env
    )
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


def test_importing_the_cli_imports_no_engine_web_store_or_app() -> None:
    loaded = imported_after("import consulta.frontends.cli")
    assert "typer" in loaded  # the probe sees what was imported
    assert sorted(loaded & set(HEAVY)) == []


def test_the_help_lists_the_commands_and_names_the_apps_without_importing_them() -> None:
    code = (
        "from typer.testing import CliRunner\n"
        "from consulta.frontends.cli import app\n"
        "result = CliRunner().invoke(app, ['--help'])\n"
        "assert result.exit_code == 0 and 'answer' in result.output and 'quiz' in result.output, result.output"
    )
    assert sorted(imported_after(code) & set(HEAVY)) == []


def test_listing_asks_opens_the_store_without_the_engine(tmp_path: Path) -> None:
    code = (
        "from typer.testing import CliRunner\n"
        "from consulta.frontends.cli import app\n"
        "result = CliRunner().invoke(app, ['asks'])\n"
        "assert result.exit_code == 0 and 'No pending asks' in result.output, result.output"
    )
    loaded = imported_after(code, home=tmp_path)
    assert "sqlalchemy" in loaded and (tmp_path / "consulta.db").exists()
    assert sorted(loaded & {"pydantic_ai", "fastapi", "consulta.runtime._agent"}) == []


def test_listing_asks_on_an_up_to_date_store_does_not_import_alembic(tmp_path: Path) -> None:
    """The store's revision is one query; Alembic (a third of a second of imports) runs only for a store behind."""
    code = (
        "from typer.testing import CliRunner\n"
        "from consulta.frontends.cli import app\n"
        "result = CliRunner().invoke(app, ['asks'])\n"
        "assert result.exit_code == 0, result.output"
    )
    assert "alembic" in imported_after(code, home=tmp_path)  # the new store is made by the migrations
    assert "alembic" not in imported_after(code, home=tmp_path)
