"""tutor — a pandas tutoring session planned by an orchestrator that consults experts (seed 000's reference app).

So far: the task catalog, the student's uploads (confined, bounded, opened with pandas and checked in code), the
experts (`data_inspector`, `concept_explainer`) and the binding rules. The orchestrator, the instruction packet and
the conversational assistant come next.
"""

from importlib import resources

from ._datasets import MAX_UPLOAD_BYTES, DatasetFacts, Verdict, check_dataset, open_dataset, upload_path
from ._experts import tutor_experts
from ._tasks import DatasetRequirements, Task, TaskCatalog, load_catalog

BINDING_RULES = resources.files(__package__).joinpath("data", "binding_rules.yaml")

__all__ = [
    "BINDING_RULES",
    "MAX_UPLOAD_BYTES",
    "DatasetFacts",
    "DatasetRequirements",
    "Task",
    "TaskCatalog",
    "Verdict",
    "check_dataset",
    "load_catalog",
    "open_dataset",
    "tutor_experts",
    "upload_path",
]
