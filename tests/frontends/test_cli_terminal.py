"""The ambiguous-request flow at a real terminal: `consulta chat ln2` on a pseudo-terminal, a person typing the
request, picking an option at the question prompt and approving the plan; the inventory file changes once."""

from __future__ import annotations

import os
import pty
import re
import select
import shutil
import subprocess
import sys
import time
from importlib import resources
from pathlib import Path

import pytest

from consulta.apps import ln2

SCRIPT = resources.files("consulta.apps.ln2").joinpath("data", "scripts", "ambiguous_thaw.yaml")
SAMPLE = resources.files("consulta.apps.ln2").joinpath("data", "sample_inventory.yaml")
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


class Terminal:
    """A process on a pseudo-terminal: type lines, wait (bounded) for text to appear."""

    def __init__(self, argv: list[str], env: dict[str, str]) -> None:
        self.master, slave = pty.openpty()
        self.proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env, start_new_session=True)
        os.close(slave)
        self.seen = ""

    def expect(self, text: str, *, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while text not in ANSI.sub("", self.seen):
            left = deadline - time.monotonic()
            if left <= 0 or self.proc.poll() is not None and not select.select([self.master], [], [], 0)[0]:
                raise AssertionError(f"{text!r} did not appear; the terminal showed:\n{ANSI.sub('', self.seen)}")
            if select.select([self.master], [], [], min(left, 0.5))[0]:
                try:
                    self.seen += os.read(self.master, 65536).decode("utf-8", "replace")
                except OSError:  # the process closed the terminal
                    pass

    def type(self, line: str) -> None:
        os.write(self.master, (line + "\n").encode())

    def close(self) -> int:
        try:
            return self.proc.wait(timeout=30)
        finally:
            os.close(self.master)


@pytest.mark.slow
@pytest.mark.subprocess
def test_chat_at_a_terminal_question_then_plan_approval(tmp_path: Path) -> None:
    inventory = tmp_path / "inventory.yaml"
    with resources.as_file(SAMPLE) as sample, resources.as_file(SCRIPT) as script:
        shutil.copyfile(sample, inventory)
        env = {
            **os.environ,
            "CONSULTA_HOME": str(tmp_path / "home"),
            "CONSULTA_LANG": "en",
            "COLUMNS": "160",
            "TERM": "xterm",
        }
        term = Terminal(
            [
                sys.executable,
                "-m",
                "consulta",
                "chat",
                "ln2",
                "--inventory",
                str(inventory),
                "--model",
                f"scripted:{script}",
            ],
            env,
        )
    try:
        term.expect("you>")
        term.type("帮我取一管K562")
        term.expect("Type a number, or your own answer")
        assert "K562-dTAG-BRD4" in ANSI.sub("", term.seen)
        term.type("2")
        term.expect("Apply these changes?")
        term.type("y")
        term.expect("Applied. Audit entries: a_000001")
        term.expect("you>")
        term.type("exit")
        assert term.close() == 0
    finally:
        if term.proc.poll() is None:
            term.proc.kill()
    record = ln2.load_inventory(inventory).record(9)
    assert record is not None and record.positions == [2, 3]
