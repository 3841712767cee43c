"""The front ends (terminal, web, desktop, MCP) and what they share: `AppHost` serves one app to principals, and does
the app's hand-over from one agent to the next (`HandedOver`); `PersonView` is what a person reads of it. No front end names an app: each reads the app's
declaration (`consulta.apps.AppDef`) and its own parts.

The names are imported when first used: `consulta --help` (the terminal front end) must not pay for the runtime."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_names

if TYPE_CHECKING:
    from ._host import LOCAL_PRINCIPAL, AppHost, HandedOver, HostEvent
    from ._person_view import PersonView

__all__ = ["LOCAL_PRINCIPAL", "AppHost", "HandedOver", "HostEvent", "PersonView"]

__getattr__ = lazy_names(__name__, __file__)
