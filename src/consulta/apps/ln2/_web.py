"""ln2's part of the web API: the box grid, one tube, the audit history, and a person's own rollback — staged as a plan
and approved like any write. The inventory, its history and rollbacks are shared by every session: they are served
to those the app lets in (`kit.shared`, as ln2's `WebPart.shared_data` declares: every session this server issued).

(No `from __future__ import annotations`: FastAPI reads the routes' annotations, which name the kit's local types.)"""

import asyncio
from pathlib import Path as FilePath
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path, Query

from ...i18n import normalize_lang
from ...runtime import ToolError
from .._def import AppView, WebKit
from .._proposals import Proposal
from ._audit import AuditEntry
from ._inventory import load_inventory
from ._views import GridView, TubeView, audit_entries, grid_view, propose_rollback, tube_view

__all__ = ["router"]


def router(kit: WebKit) -> APIRouter:
    """The routes under /api/ln2, with the web front end's host, shared-data principal and errors."""
    Host: Any = kit.host  # noqa: N806 - FastAPI dependency annotations
    Shared: Any = kit.shared  # noqa: N806 - the caller's principal, where the inventory (shared by all) is concerned
    ApiError = kit.error  # noqa: N806
    router = kit.api_router("ln2")

    def _inventory(host: AppView) -> FilePath:
        path = host.data_path
        if path is None:  # pragma: no cover - ln2 always has one
            raise ApiError(503, "no_inventory", "This server has no inventory file.")
        return path

    @router.get("/grid", summary="Every box as rows × cols cells")
    async def grid(host: Host, _: Shared) -> GridView:
        """Cells are listed row by row (position 1 = A1 first); occupied ones name their record. `sha256` changes
        whenever the file does."""
        return await asyncio.to_thread(grid_view, _inventory(host))

    @router.get("/boxes/{box}/positions/{position}", summary="The tube at one position")
    async def tube(
        box: Annotated[int, Path(ge=1, le=1000)], position: Annotated[int, Path(ge=1, le=10000)], host: Host, _: Shared
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
    async def audit(host: Host, _: Shared, limit: Annotated[int, Query(ge=1, le=500)] = 50) -> list[AuditEntry]:
        """Each entry: audit_id, ts, plan_id, run_id, actor, op, args, summary (English) and its translations,
        before_sha256, after_sha256, backup."""
        return await asyncio.to_thread(audit_entries, _inventory(host), limit=limit)

    @router.post(
        "/audit/{audit_id}/rollback",
        status_code=202,
        summary="Stage rolling the inventory back to before an audit entry",
    )
    async def rollback(
        audit_id: Annotated[str, Path(max_length=64, pattern=r"^[A-Za-z0-9_.-]+$")],
        host: Host,
        principal: Shared,
        lang: Annotated[
            Literal["en", "zh-CN"] | None, Query(description="The previews' language (default: the server's).")
        ] = None,
    ) -> Proposal:
        """Nothing is written yet: the rollback is staged as a plan on a run of this session's (`run_id`), and its
        approval ask (`ask_id`) opened, like any write. Approve it with POST /api/asks/{ask_id}/answer
        `{"decision": "approve"}` (or reject it); only then is it applied, audited as this session. Follow
        GET /api/runs/{run_id}/events for the `plan_decided` event. 404 for an unknown entry; 409 when the entry
        cannot be rolled back (its backup unusable); nothing is recorded then. Should the file no longer fit when it is
        approved (already in that state), the plan ends `failed` and nothing is written."""
        try:
            return await propose_rollback(
                host, audit_id=audit_id, principal=principal, lang=normalize_lang(lang or host.env.lang)
            )
        except ToolError as error:
            status = 404 if error.error_code == "unknown_audit_entry" else 409
            raise ApiError(status, error.error_code, error.message, hint=error.hint, field=error.field) from None

    return router
