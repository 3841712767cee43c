"""Reading a YAML file a person wrote (a rules file, a task catalog) into a pydantic model, with errors that name
the file and the place of the problem, in one line."""

from __future__ import annotations

from importlib.resources.abc import Traversable
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError
from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from .runtime import ConfigError

__all__ = ["MAX_YAML_BYTES", "load_yaml_model"]

M = TypeVar("M", bound=BaseModel)

MAX_YAML_BYTES = 1024 * 1024
"""The largest settings file read (rules, catalogs are a few kB): a bigger one is refused before it is read."""


def load_yaml_model(source: Path | Traversable, model: type[M], *, what: str) -> M:
    """The file at `source` validated as `model`; ConfigError, one line ("Cannot read the {what} …", "… is not valid
    YAML …", "… has a problem at rules.0.when: …", "… is over 1 MB") when it cannot be used. An empty file is an
    empty mapping."""
    try:
        if isinstance(source, Path):
            if source.is_dir():
                raise ConfigError(f"The {what} {source} is a folder: give the path of the YAML file in it.")
            if source.exists() and source.stat().st_size > MAX_YAML_BYTES:
                raise ConfigError(
                    f"The {what} {source} is over {MAX_YAML_BYTES // (1024 * 1024)} MB: is it the right file?"
                )
        data = YAML(typ="safe").load(source.read_text(encoding="utf-8")) or {}
        return model.model_validate(data)
    except OSError as error:
        raise ConfigError(f"Cannot read the {what} {source}: {error.strerror or error}.") from None
    except UnicodeDecodeError as error:
        raise ConfigError(f"The {what} {source} is not UTF-8 text (byte {error.start}): save it as UTF-8.") from None
    except YAMLError as error:
        raise ConfigError(f"The {what} {source} is not valid YAML: {' '.join(str(error).split())}") from None
    except ValidationError as error:
        problem = error.errors()[0]
        where = ".".join(str(p) for p in problem["loc"]) or "the top"
        raise ConfigError(f"The {what} {source} has a problem at {where}: {problem['msg']}.") from None
