"""`consulta chat tutor --file` end to end with the scripted test double: the orchestrator consults the data
inspector on the real upload, the packet is accepted only with the binding update, the assistant talks to the
student, and the consultation is on record."""

from __future__ import annotations

import os
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest

from consulta.i18n import catalog
from consulta.runtime import Store

SCRIPT = resources.files("consulta.apps.tutor").joinpath("data", "scripts", "unsuitable_upload.yaml")


@pytest.mark.slow
@pytest.mark.subprocess  # a subprocess: still run in CI (scripts/test runs slow or not slow)
def test_chat_tutor_consults_then_the_assistant_speaks_from_the_packet(tmp_path: Path) -> None:
    data = tmp_path / "student_data.csv"
    data.write_text("name,city\nAda,Paris\nBo,Rome\nCy,Oslo\n", encoding="utf-8")
    env = {**os.environ, "CONSULTA_HOME": str(tmp_path / "home"), "CONSULTA_LANG": "en", "COLUMNS": "200"}
    with resources.as_file(SCRIPT) as script:
        chat = subprocess.run(
            [
                sys.executable,
                "-m",
                "consulta",
                "chat",
                "tutor",
                "--file",
                str(data),
                "--model",
                f"scripted:{script}",
                "-p",
                "我上传了数据，可以开始task_2_1吗？",
            ],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    assert chat.returncode == 0, chat.stderr
    en = catalog("en")  # the orchestrator's steps in the student's words, not its tools' names
    # "can I start task_2_1?" is code's packet, whose tool makes the inspection (on record: see below)
    assert en["tutor.step.submit_instruction_packet"] in chat.stdout and "consult_expert" not in chat.stdout
    assert "缺少列：age" in chat.stdout  # the reply to the student: code says its own packet (no model request)
    store = Store(f"sqlite:///{tmp_path / 'home' / 'consulta.db'}")
    (kept,) = store.list_consultations()
    assert (
        kept.expert_output is not None and kept.expert_output["is_suitable"] is False
    )  # the code's verdict, not the model's
    assert [r["rule_name"] for r in kept.binding_rules] == ["dataset_not_suitable"]
    assert (tmp_path / "home" / "apps" / "tutor" / "uploads" / "student_data.csv").read_bytes() == data.read_bytes()
    assert (tmp_path / "home" / "apps" / "tutor" / "consultations" / f"{kept.id}.md").exists()
    # Two runs of the turn: the orchestrator's, then the assistant's (the host's hand-over), each with its own options
    # and no runtime settings among them.
    orchestrator, assistant = sorted(store.list_runs(app="tutor"), key=lambda r: r.created_at)
    assert orchestrator.options["task_id"] is None and assistant.options["task_id"] == "task_2_1"
    # what code found is handed over in code's words, for code's own reply in the student's language
    assert assistant.options["issues"] == kept.expert_output["blocking_issues"] + kept.expert_output["warning_issues"]
    assert assistant.options["issues"] and assistant.options["rules"] == ["dataset_not_suitable"]
    assert not {"database_url", "model", "models_dir", "lang"} & (set(orchestrator.options) | set(assistant.options))
    if hasattr(assistant, "agent"):  # RunRecord.agent (the store's part of issue 9)
        assert (orchestrator.agent, assistant.agent) == ("orchestrator", "assistant")
    listed = subprocess.run(
        [sys.executable, "-m", "consulta", "consultations"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert kept.id in listed.stdout and "data_inspector" in listed.stdout


@pytest.mark.subprocess  # `consulta chat` as a child process
def test_file_is_refused_by_an_app_without_uploads(tmp_path: Path) -> None:
    data = tmp_path / "x.csv"
    data.write_text("a\n", encoding="utf-8")
    env = {**os.environ, "CONSULTA_HOME": str(tmp_path / "home"), "CONSULTA_LANG": "en"}
    refused = subprocess.run(
        [sys.executable, "-m", "consulta", "chat", "ln2", "--file", str(data), "-p", "hi"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    said = " ".join((refused.stdout + refused.stderr).split())
    assert refused.returncode != 0 and "--file" in said and "The flags here" in said and "--inventory" in said
