"""The consultation ledger: numbered consult_0001… per store, never shared or reused under concurrent writers;
each consultation readable as a markdown record, written atomically; `consulta consultations` lists and shows them."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from consulta.asks import consultation_markdown, write_consultation_markdown
from consulta.runtime import NotFoundError, Store

REQUEST = {
    "expert_id": "data_inspector",
    "question": "请检查文件'student_data.csv'是否适合用于任务task_2_1。",
    "context": {
        "file_name": "student_data.csv",
        "task_id": "task_2_1",
        "task_requirements": "至少100行；name、age、city列",
    },
    "expected_output_type": "suitability_judgment",
    "scenario_id": "dataset_suitability_check",
    "reasoning": "学生刚上传了新的数据文件。",
}
OUTPUT = {
    "is_suitable": False,
    "blocking_issues": ["只有 12 行"],
    "warning_issues": [],
    "evidence": ["行数: 12"],
    "recommended_next_step": "换一个数据集",
}


def record(store: Store, **kw):  # noqa: ANN003, ANN201
    fields = dict(
        expert_id="data_inspector",
        status="done",
        request=REQUEST,
        started_at="2026-11-22T19:00:00.000+00:00",
        duration_ms=12.5,
        attempts=1,
        expert_output=OUTPUT,
    )
    return store.record_consultation(**{**fields, **kw})


def test_numbers_are_sequential_and_never_shared_by_concurrent_writers(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/consulta.db"
    Store(url).close()
    ids: list[str] = []
    lock = threading.Lock()

    def writer() -> None:
        store = Store(url)  # its own connections, as another process would have
        for _ in range(25):
            rec = record(store)
            with lock:
                ids.append(rec.id)
        store.close()

    threads = [threading.Thread(target=writer) for _ in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=60)
    assert sorted(ids) == [f"consult_{n:04d}" for n in range(1, 101)]
    store = Store(url)
    assert record(store).id == "consult_0101"
    assert [c.id for c in store.list_consultations(limit=3)] == ["consult_0101", "consult_0100", "consult_0099"]


def test_a_record_reads_back_whole_and_renders_as_markdown(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path}/consulta.db")
    rec = record(
        store,
        binding_rules=[{"rule_name": "dataset_not_suitable", "action": "require_new_dataset"}],
        instruction_updates={"guidance_for_ca": "先请学生换一个符合要求的数据集。"},
    )
    again = store.get_consultation(rec.id)
    assert again == rec and again.request == REQUEST and again.expert_output == OUTPUT
    with pytest.raises(NotFoundError):
        store.get_consultation("consult_9999")
    text = consultation_markdown(again, lang="zh-CN")
    assert text.startswith("# consult_0001 · data_inspector · suitability_judgment")
    for piece in (
        "学生刚上传了新的数据文件。",
        "`dataset_not_suitable` → require_new_dataset",
        "先请学生换一个符合要求的数据集。",
        "只有 12 行",
        "## 咨询理由",
    ):
        assert piece in text
    path = write_consultation_markdown(again, tmp_path / "consultations")
    assert path.name == "consult_0001.md" and path.read_text(encoding="utf-8") == consultation_markdown(again)
    assert [p.name for p in path.parent.iterdir()] == ["consult_0001.md"]  # no temp file left


@pytest.mark.slow
@pytest.mark.subprocess  # subprocesses: still run in CI (scripts/test runs slow or not slow)
def test_the_cli_lists_and_shows_consultations(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path}/consulta.db")
    run = store.create_run(app="tutor", prompt="p", model="scripted", lang="en")
    record(store, run_id=run.id, binding_rules=[{"rule_name": "dataset_not_suitable", "action": "require_new_dataset"}])
    record(store)
    store.close()
    env = {**os.environ, "CONSULTA_HOME": str(tmp_path), "CONSULTA_LANG": "en", "COLUMNS": "200"}

    def consulta(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "consulta", "consultations", *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    listed = consulta()
    assert listed.returncode == 0 and "consult_0001" in listed.stdout and "consult_0002" in listed.stdout
    only_run = consulta("--run", run.id)
    assert (
        "consult_0001" in only_run.stdout
        and "consult_0002" not in only_run.stdout
        and "dataset_not_suitable" in only_run.stdout
    )
    shown = consulta("consult_0001")
    assert shown.returncode == 0 and "consult_0001" in shown.stdout and "Why consult" in shown.stdout
    missing = consulta("consult_0404")
    assert missing.returncode == 2 and "No consultation with id 'consult_0404'" in missing.stdout + missing.stderr
