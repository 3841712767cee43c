"""Settings: one data directory, the store's URL, the model, the language, the traces — from the environment or the CLI."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from platformdirs import user_data_path

__all__ = ["DEFAULT_MODEL", "Settings"]

DEFAULT_MODEL = "local"


@dataclass(frozen=True, kw_only=True)
class Settings:
    """Where Consulta keeps its data and which model it uses.

    - `home`: `CONSULTA_HOME`, default the user's data dir (e.g. ~/.local/share/consulta): the SQLite store, app
      data (ln2's inventory) and the joined model file live here.
    - `database_url`: `CONSULTA_DATABASE_URL`, default `sqlite:///{home}/consulta.db`.
    - `model`: `CONSULTA_MODEL` (or `--model`), default `local` (the embedded GGUF).
    - `lang`: `CONSULTA_LANG`, `en` or `zh-CN`.
    - `traces`: `CONSULTA_TRACES`, where run traces go: `off` (the default), `console`, `file:PATH`, `otlp` or
      `otlp:URL` (read as it is; `consulta.runtime.tracing_from_setting` parses it and says what is wrong).
    """

    home: Path
    database_url: str
    model: str = DEFAULT_MODEL
    lang: str = "en"
    traces: str = "off"

    @classmethod
    def from_env(cls, *, model: str | None = None, lang: str | None = None, home: Path | None = None) -> Settings:
        home = home or Path(os.environ.get("CONSULTA_HOME") or user_data_path("consulta", appauthor=False))
        home.mkdir(parents=True, exist_ok=True)
        url = os.environ.get("CONSULTA_DATABASE_URL") or f"sqlite:///{home / 'consulta.db'}"
        return cls(
            home=home,
            database_url=url,
            model=model or os.environ.get("CONSULTA_MODEL") or DEFAULT_MODEL,
            lang=lang or os.environ.get("CONSULTA_LANG") or "en",
            traces=os.environ.get("CONSULTA_TRACES") or "off",
        )

    @property
    def models_dir(self) -> Path:
        return self.home / "models"

    def app_dir(self, app: str) -> Path:
        path = self.home / "apps" / app
        path.mkdir(parents=True, exist_ok=True)
        return path
