"""The engine identifiers an organization's default engine may name.

The engines are conversion's (`conversion.engine.ENGINES`); accounts lies below conversion and
does not import it: conversion registers them when Django starts (`ConversionConfig.ready`), and
the operator command checks an organization's default against them.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["engines_known", "engines_register"]

_KNOWN: list[str] = []


def engines_register(ids: Iterable[str]) -> None:
    """Set the engine identifiers that exist (the default first)."""
    _KNOWN[:] = list(ids)


def engines_known() -> list[str]:
    """The engine identifiers that exist, the default first."""
    return list(_KNOWN)
