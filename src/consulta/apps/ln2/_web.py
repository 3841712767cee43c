"""ln2's part of the web API: the box grid, one tube, the audit history, and a person's own rollback.

(No `from __future__ import annotations`: FastAPI reads the routes' annotations, which name the kit's local types.)"""

import asyncio
import secrets
from pathlib import Path as FilePath
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query

from ...runtime import ToolError
from .._def import AppView, WebKit
from ._audit import AuditEntry
from ._inventory import load_inventory
from ._operations import ApplyResult
from ._views import GridView, TubeView, audit_entries, grid_view, rollback_now, tube_view

__all__ = ["router"]


def router(kit: WebKit) -> APIRouter:
    """The routes under /api/ln2, with the web front end's host, principal and errors."""
    Host: Any = kit.host  # noqa: N806 - FastAPI dependency annotations
    Principal: Any = kit.principal  # noqa: N806
    ApiError = kit.error  # noqa: N806
    router = kit.api_router("ln2")

    def _inventory(host: AppView) -> FilePath:
        path = host.data_path
        if path is None:  # pragma: no cover - ln2 always has one
            raise ApiError(503, "no_inventory", "This server has no inventory file.")
        return path

    @router.get("/grid", summary="Every box as rows × cols cells")
    async def grid(host: Host, _: Principal) -> GridView:
        """Cells are listed row by row (position 1 = A1 first); occupied ones name their record. `sha256` changes
        whenever the file does."""
        return await asyncio.to_thread(grid_view, _inventory(host))

    @router.get("/boxes/{box}/positions/{position}", summary="The tube at one position")
    async def tube(
        box: Annotated[int, Path(ge=1, le=1000)], position: Annotated[int, Path(ge=1, le=10000)], host: Host, _: Principal
    ) -> TubeView:
        path = _inventory(host)
        inventory = await asyncio.to_thread(load_inventory, path)
        if box > inventory.meta.box_count or position > inventory.layout.capacity:
            raise ApiError(
                404,
                "not_found",
                f"No position {position} in box {box}: there are {inventory.meta.box_count} boxes of "
                f"{inventory.layout.capacity} positions.",
            )
        return await asyncio.to_thread(tube_view, path, box=box, position=position)

    @router.get("/audit", summary="The audit history, newest first")
    async def audit(host: Host, _: Principal, limit: Annotated[int, Query(ge=1, le=500)] = 50) -> list[AuditEntry]:
        """Each entry: audit_id, ts, plan_id, run_id, actor, op, args, summary (English) and its translations,
        before_sha256, after_sha256, backup."""
        return await asyncio.to_thread(audit_entries, _inventory(host), limit=limit)

    @router.post("/audit/{audit_id}/rollback", summary="Roll the inventory back to before an audit entry")
    async def rollback(
        audit_id: Annotated[str, Path(max_length=64, pattern=r"^[A-Za-z0-9_.-]+$")], host: Host, principal: Principal
    ) -> ApplyResult:
        """A person's own action: applied and audited at once (actor: this session). Returns the applied change
        (plan_id, audit_ids, summaries, before_sha256, after_sha256, backup). 404 for an unknown entry; 409 when the
        file cannot be brought back to that state (already there, backup unusable); nothing changes then."""
        plan_id = "manual_" + secrets.token_hex(6)
        try:
            result = await asyncio.to_thread(rollback_now, _inventory(host), audit_id=audit_id, actor=principal, plan_id=plan_id)
        except ToolError as error:
            status = 404 if error.error_code == "unknown_audit_entry" else 409
            raise ApiError(status, error.error_code, error.message, hint=error.hint, field=error.field) from None
        return result

    return router
