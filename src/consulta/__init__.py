"""Consulta."""
