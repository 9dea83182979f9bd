"""The JSON schemas shipped in ``vgfc/schemas`` (``schemas/`` at the top of the repository)."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["load_schema"]


@cache
def load_schema(name: str) -> dict[str, Any]:
    """A schema by file name, e.g. ``partition.schema.json``."""
    # A plain path, not importlib.resources (7 ms to import): vgfc is installed as files.
    text = (Path(__file__).parent / "schemas" / name).read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema
