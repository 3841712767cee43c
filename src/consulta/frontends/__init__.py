"""The front ends (terminal, web, desktop, MCP) and what they share: `AppHost` serves one app to principals."""

from ._host import LOCAL_PRINCIPAL, AppHost

__all__ = ["LOCAL_PRINCIPAL", "AppHost"]
