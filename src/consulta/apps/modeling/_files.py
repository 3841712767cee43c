"""A workspace's files are written with the shared atomic writes (`consulta._files`)."""

from ..._files import create_once, write_atomic

__all__ = ["create_once", "write_atomic"]
