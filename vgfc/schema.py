"""The JSON schemas shipped in ``vgfc/schemas`` (``schemas/`` at the top of the repository)."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

__all__ = ["load_schema"]


@cache
def load_schema(name: str) -> dict[str, Any]:
    """A schema by file name, e.g. ``partition.schema.json``."""
    text = resources.files("vgfc").joinpath("schemas").joinpath(name).read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema
