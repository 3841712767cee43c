"""Suite-wide collection order, and fixtures shared by the test folders (a throwaway PostgreSQL server among them)."""

from __future__ import annotations

import asyncio
import glob
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from pydantic_ai.models import Model

from consulta.runtime import Agent, RunRecord, Runtime, Store


def pytest_configure(config: pytest.Config) -> None:
    _two_workers_for_the_whole_suite(config)
    # The web server answers only its own host names; Starlette's TestClient calls itself "testserver".
    os.environ.setdefault("CONSULTA_ALLOWED_HOSTS", "testserver")
    # Shells here may set PYTHONDONTWRITEBYTECODE=1: every import, in this process and in each child process the
    # tests start (`consulta` commands, servers), would then compile its modules from source again, seconds a process.
    # The suite writes and reuses bytecode like any Python install.
    sys.dont_write_bytecode = False
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    config.addinivalue_line(
        "markers",
        "both_backends: run the test on a SQLite store and on a PostgreSQL one (`store_url`); the PostgreSQL run is "
        "marked postgres: a real server the tests start once per session (per worker), see `postgres_server`",
    )


def _two_workers_for_the_whole_suite(config: pytest.Config) -> None:
    """`pytest` with no paths (the whole default suite) runs on two pytest-xdist workers grouped as scripts/test runs
    them (`-n 2 --dist loadgroup --no-loadscope-reorder`): it waits on servers and child processes as much as it
    computes, and two workers halve it on 2 cores. A run of named paths stays in one process (`-s`, `--pdb` and a
    quick look at one test work as usual); `-n N` on the command line decides otherwise. Runs before pytest-xdist's
    own `pytest_configure` (trylast), which starts the workers from these options."""
    option = config.option
    if (
        config.args_source is not pytest.Config.ArgsSource.TESTPATHS
        or getattr(option, "numprocesses", "no xdist") is not None
        or hasattr(config, "workerinput")
        or option.collectonly
        or option.usepdb
    ):
        return
    option.numprocesses, option.tx = 2, ["popen"] * 2
    option.dist, option.loadscopereorder = "loadgroup", False


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "store_url" in metafunc.fixturenames and metafunc.definition.get_closest_marker("both_backends"):
        metafunc.parametrize(
            "store_url",
            ["sqlite", pytest.param("postgresql", marks=[pytest.mark.postgres])],
            indirect=True,
        )


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Run the Qt tests last. After PySide6's tests have run in a process, Playwright's sync driver (a greenlet
    running an asyncio loop) segfaults in `select` at its next launch (seen with PySide6 6.12.0, playwright 1.65.2,
    greenlet on CPython 3.11; every test passes on its own and in this order).

    Under pytest-xdist (`--dist loadgroup`, as scripts/test runs) each test joins the group it must run in: one
    worker runs all the model tests (two never load the GGUF at once), one the Qt tests (last, as above), and the
    tests of a module that share a module-scoped fixture (a served app, a browser) run on one worker, which builds it
    once."""
    items.sort(key=lambda item: _uses_qt(item.nodeid.replace("\\", "/")))
    if getattr(config.option, "dist", "no") != "loadgroup":
        return
    for item in items:
        group = _xdist_group(item)
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))


def _xdist_group(item: pytest.Item) -> str | None:
    if item.get_closest_marker("model"):
        return "model"
    if _uses_qt(item.nodeid.replace("\\", "/")):
        return "desktop"
    definitions = getattr(getattr(item, "_fixtureinfo", None), "name2fixturedefs", {})
    if any(defs and defs[-1].scope in ("module", "package") for defs in definitions.values()):
        return item.nodeid.split("::", 1)[0]
    return None


def _uses_qt(nodeid: str) -> bool:
    """The desktop window's tests: the Qt package's, and each app's desktop panels' (`tests/apps/<app>/test_desktop.py`)."""
    return "frontends/qt/" in nodeid or (nodeid.startswith("tests/apps/") and "/test_desktop.py" in nodeid)


@pytest.fixture
def run_once() -> Callable[..., RunRecord]:
    """Run an agent once to its end (or pause) in a fresh Runtime on `model`, closing the runtime after."""

    def run(
        store: Store, agent: Agent, prompt: str, model: Model, *, spec: str = "scripted", lang: str = "en"
    ) -> RunRecord:
        async def scenario() -> RunRecord:
            runtime = Runtime(store=store, resolve_model=lambda _: model)
            try:
                return await runtime.run(agent, prompt, model=spec, lang=lang)
            finally:
                await runtime.aclose()

        return asyncio.run(scenario())

    return run


# ---- stores on SQLite and PostgreSQL ----------------------------------------------------------------------------


@pytest.fixture
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The URL of a new, empty store: a SQLite file, or (in tests marked `both_backends`) also a new database on the
    session's PostgreSQL server."""
    if getattr(request, "param", "sqlite") == "sqlite":
        return f"sqlite:///{tmp_path}/s.db"
    server: PostgresServer = request.getfixturevalue("postgres_server")
    return server.new_database()


@pytest.fixture(scope="session")
def migrated_sqlite_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A SQLite store made once per test session (per worker) by the store's migrations, closed: a test that needs
    a new store (not its making) starts from a copy (`new_store_at`), not from the migrations again."""
    path = tmp_path_factory.mktemp("migrated") / "consulta.db"
    Store(f"sqlite:///{path}").close()
    return path


@pytest.fixture
def new_store_at(request: pytest.FixtureRequest) -> Callable[[str], Store]:
    """`new_store_at(url)`: a new store at `url`, already at the newest revision; on SQLite a copy of
    `migrated_sqlite_store` (a file copy instead of the migrations: tests that check the making of a store open
    `Store(url)` themselves)."""

    def new(url: str) -> Store:
        if url.startswith("sqlite:///"):
            shutil.copyfile(request.getfixturevalue("migrated_sqlite_store"), url.removeprefix("sqlite:///"))
        return Store(url)

    return new


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """A PostgreSQL server of its own for this test session (initdb in a temporary directory, a unix socket there,
    a free port), stopped and removed after. Skipped when the server is not installed, except in CI (`CI` set),
    where that is a failure: `scripts/test-system-deps` installs it."""
    bindir = _postgres_bindir()
    if bindir is None:
        reason = "PostgreSQL server binaries (initdb, pg_ctl) are not installed; scripts/test-system-deps installs them"
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(reason)
        pytest.skip(reason)
    server = PostgresServer(bindir)
    try:
        server.start()
        yield server
    finally:
        server.stop()


class PostgresServer:
    """A throwaway PostgreSQL cluster run by the tests. As root, it runs as the `postgres` user (initdb refuses root)."""

    USER = "consulta"

    def __init__(self, bindir: Path) -> None:
        self.bindir = bindir
        # In memory when the machine has a tmpfs: removing a session's databases (a gigabyte and more) from a disk
        # took a minute of the last test's teardown on a busy machine.
        shm = Path("/dev/shm")
        in_memory = shm.is_dir() and os.access(shm, os.W_OK)
        self.dir = Path(tempfile.mkdtemp(prefix="consulta-pg-", dir=shm if in_memory else None))
        self.data = self.dir / "data"
        self.port = _free_port()
        self._as = []
        if os.geteuid() == 0:
            owner = "postgres" if _user_exists("postgres") else "nobody"
            shutil.chown(self.dir, owner)
            self._as = ["runuser", "-u", owner, "--"]

    def start(self) -> None:
        self._run(
            "initdb", "-D", str(self.data), "-U", self.USER, "--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C"
        )
        options = f"-k {self.dir} -p {self.port} -c listen_addresses='' -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        self._run(
            "pg_ctl", "-D", str(self.data), "-l", str(self.dir / "server.log"), "-w", "-t", "60", "-o", options, "start"
        )

    def url(self, database: str) -> str:
        return f"postgresql+psycopg://{self.USER}@/{database}?host={self.dir}&port={self.port}"

    def new_database(self) -> str:
        """A new empty database on the server; its URL."""
        import psycopg

        name = f"t_{uuid.uuid4().hex[:16]}"
        with psycopg.connect(
            host=str(self.dir), port=self.port, user=self.USER, dbname="postgres", autocommit=True
        ) as conn:
            # FILE_COPY: copy the template's files (PostgreSQL 15's default writes them through the WAL too, twice
            # the bytes and time; earlier servers only copy).
            strategy = " STRATEGY FILE_COPY" if conn.info.server_version >= 150000 else ""
            conn.execute(f'CREATE DATABASE "{name}"{strategy}')
        return self.url(name)

    def stop(self) -> None:
        if (self.data / "postmaster.pid").exists():
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "-t", "60", "stop")
        shutil.rmtree(self.dir, ignore_errors=True)

    def _run(self, program: str, *args: str) -> None:
        done = subprocess.run(
            [*self._as, str(self.bindir / program), *args], capture_output=True, text=True, timeout=120
        )
        if done.returncode != 0:
            log = self.dir / "server.log"
            raise RuntimeError(
                f"{program} failed ({done.returncode}): {done.stderr.strip() or done.stdout.strip()}"
                + (f"\nserver log:\n{log.read_text()}" if log.exists() else "")
            )


def _postgres_bindir() -> Path | None:
    found = shutil.which("pg_ctl")
    if found:
        return Path(found).parent
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=lambda p: int(Path(p).parts[-3]))
    return Path(candidates[-1]).parent if candidates else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _user_exists(name: str) -> bool:
    import pwd

    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True
