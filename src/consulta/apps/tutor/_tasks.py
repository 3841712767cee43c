"""The tutor's task catalog: pandas exercises with what a dataset must have, the learning objectives, and what an
explanation must never give away. Shipped as `data/tasks.yaml`; any catalog file of the same shape can replace it."""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ..._yaml_files import load_yaml_model
from ...runtime import ToolError

__all__ = ["DatasetRequirements", "Task", "TaskCatalog", "TaskWords", "load_catalog"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class DatasetRequirements(_Model):
    min_rows: int = Field(default=1, ge=0)
    required_columns: list[str] = Field(default_factory=list)
    column_types: dict[str, Literal["number", "text", "date"]] = Field(default_factory=dict)
    no_nulls_in: list[str] = Field(default_factory=list)
    value_ranges: dict[str, tuple[float, float]] = Field(default_factory=dict)
    """The values a column can hold at all (an age: 0 to 120); others are said, and a result over them is not done."""


class TaskWords(_Model):
    """A task's title and objectives as a student reading another language reads them."""

    title: str
    learning_objectives: str


class Task(_Model):
    id: str = Field(pattern=r"^[A-Za-z0-9_.-]+$")
    title: str
    requirements: str
    dataset: DatasetRequirements = Field(default_factory=DatasetRequirements)
    learning_objectives: str
    must_not_reveal: list[str] = Field(default_factory=list)
    """Code an explanation must not contain (the task's answer), compared without spaces."""
    said: dict[str, TaskWords] = Field(default_factory=dict)
    """The title and objectives in other languages than English, by language code (`zh-CN`); optional."""

    def words_in(self, lang: str) -> TaskWords:
        """The title and objectives a student reading `lang` is told: that language's, else the English ones."""
        return self.said.get(lang) or TaskWords(title=self.title, learning_objectives=self.learning_objectives)

    def revealed_in(self, text: str) -> str | None:
        """The first of `must_not_reveal` that `text` contains (spaces and the kind of quotes ignored), or None."""
        flat = _squeezed(text)
        return next((f for f in self.must_not_reveal if _squeezed(f) in flat), None)


def _squeezed(text: str) -> str:
    """`text` without spaces and with one kind of quote: `df["age"].mean()` is `df['age'].mean()`."""
    return re.sub(r"\s+", "", text).replace('"', "'")


class TaskCatalog(_Model):
    tasks: list[Task]

    def get(self, task_id: str) -> Task | None:
        """The task `task_id`, or None."""
        return next((t for t in self.tasks if t.id == task_id), None)

    def task(self, task_id: str) -> Task:
        """The task `task_id`; ToolError `unknown_task` naming the known ones."""
        found = self.get(task_id)
        if found is None:
            raise ToolError(
                "unknown_task",
                f"There is no task {task_id!r}.",
                hint=f"Tasks: {', '.join(t.id for t in self.tasks)}.",
                field="context.task_id",
            )
        return found


def load_catalog(path: Path | str | None = None) -> TaskCatalog:
    """The catalog at `path`, or the one shipped with the app; ConfigError naming the file and the problem."""
    source = resources.files(__package__).joinpath("data", "tasks.yaml") if path is None else Path(path)
    return load_yaml_model(source, TaskCatalog, what="task catalog")
