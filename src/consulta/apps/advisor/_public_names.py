"""The public names the advisor data is generated over and the page's choices list: schools and majors
(data/names.yaml)."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from ..._yaml_files import load_yaml_model

__all__ = ["Major", "Names", "School", "names"]


class _Named(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    name: str
    en: str


class School(_Named):
    city: str


class Major(_Named):
    code: str


class Names(BaseModel):
    """The public names the data is generated over (data/names.yaml; its aliases are the name normaliser's)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    schools: list[School]
    majors: list[Major]


@cache
def names() -> Names:
    """data/names.yaml's schools and majors."""
    return load_yaml_model(Path(__file__).with_name("data") / "names.yaml", Names, what="advisor names file")
