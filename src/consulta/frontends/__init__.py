"""The front ends (terminal, web, desktop, MCP) and what they share: `AppHost` serves one app to principals, and does
the app's hand-over from one agent to the next (`HandedOver`). No front end names an app: each reads the app's
declaration (`consulta.apps.AppDef`) and its own parts."""

from ._host import LOCAL_PRINCIPAL, AppHost, HandedOver, HostEvent

__all__ = ["LOCAL_PRINCIPAL", "AppHost", "HandedOver", "HostEvent"]
