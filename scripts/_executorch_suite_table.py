"""The Markdown tables of ``scripts/executorch_suite.py compare``: the summary, where the two
converters differ, every call, the tests that made no call, the weights the offline plugin
replaced and the test modules that did not import; written as a whole file or as one part's
section of it (``--section ops|models``: docs/executorch-suite.md holds both)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

CONVERTERS = ("vgfc", "reference")


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


TITLE = "# ExecuTorch's Arm VGF tests through vgfc and the reference converter"
INTRO = (
    "Written by `make test-executorch-suite` (scripts/executorch_suite.py); see"
    " [executorch.md](executorch.md#executorchs-own-vgf-tests)."
)
PARTS = {"ops": "Operator tests", "models": "Model tests", "all": "Operator and model tests"}
"""The title of each part's section (``executorch_suite.py``'s ``PARTS`` name their folders)."""


def markdown(results: dict[str, Any], part: str | None = None) -> str:
    """The summary, the calls where the converters differ, one row per converter call, the
    weights replaced and the test modules that did not import: a whole file, or with ``part``
    the section of the file that :func:`write_table` puts in place."""
    s, run_meta = results["summary"], results.get("run", {})
    top = "##" if part else "#"
    sub = top + "#"
    lines = [f"{top} {PARTS[part]}" if part else TITLE, ""]
    if not part:
        lines += [INTRO, ""]
    lines += [
        f"{run_meta.get('selected', '?')} of {run_meta.get('collected', '?')} vgf tests"
        + (f" (sample, seed {run_meta.get('seed')})" if run_meta.get("sample") else "")
        + (f" (`-k {run_meta['keyword']}`)" if run_meta.get("keyword") else "")
        + f"; inputs seeded with {results['input_seed']}. {s['converter_calls']} converter"
        f" calls from {s['tests'] - s['tests_without_converter_call']} tests"
        f" ({s['tests_without_converter_call']} tests made none). Where both converters ran,"
        f" {s['bit_identical']} of {s['both_ran']} calls gave bit-identical outputs.",
        "",
        *class_table(s),
    ]
    lines += [
        "",
        f"{sub} Where they differ",
        "",
        "| test | call | vgfc | reference |",
        "|---|---|---|---|",
    ]
    rows = []
    for name, t in results["tests"].items():
        for c in t["calls"]:
            v, r = c["vgfc"], c["reference"]
            cell = [
                f"{x['class']}" + (f": {_cell(x['error'])}" if x["error"] else "") for x in (v, r)
            ]
            row = f"| `{_cell(name)}` | {c['call']} | {cell[0]} | {cell[1]} |"
            rows.append(row)
            if v["class"] != r["class"] or c.get("same") is False:
                lines.append(row)
    lines += [
        "",
        f"{sub} Every call",
        "",
        "| test | call | vgfc | reference |",
        "|---|---|---|---|",
    ]
    lines += rows
    silent = [n for n, t in results["tests"].items() if not t["calls"]]
    if silent:
        lines += ["", f"{sub} Tests that made no converter call", "", "| test | pytest |"]
        lines.append("|---|---|")
        for n in silent:
            p = results["tests"][n]["pytest"]
            lines.append(
                f"| `{_cell(n)}` | {p.get('outcome', '?')}: {_cell(p.get('message', ''))} |"
            )
    lines += _replaced(results.get("replaced", []), sub)
    lines += _not_imported(run_meta.get("not_imported", {}), sub)
    return "\n".join(lines) + "\n"


def class_table(summary: dict[str, Any]) -> list[str]:
    """Each converter's count of calls per class, one row per converter."""
    classes = sorted({k for n in CONVERTERS for k in summary["classes"][n]})
    lines = ["| converter | " + " | ".join(classes) + " |", "|---|" + "---|" * len(classes)]
    for n in CONVERTERS:
        counts = summary["classes"][n]
        lines.append(f"| {n} | " + " | ".join(str(counts.get(k, 0)) for k in classes) + " |")
    return lines


def _replaced(records: list[dict[str, Any]], sub: str) -> list[str]:
    """The downloads the offline plugin stood in for (scripts/executorch_suite_offline.py),
    each once."""
    if not records:
        return []
    lines = ["", f"{sub} Pretrained weights replaced by seeded random ones", ""]
    lines += ["| test | replaced | seed |", "|---|---|---|"]
    seen = dict.fromkeys(
        f"| `{_cell(str(r.get('test')))}` | {_cell(str(r.get('replaced')))} |"
        f" {r.get('seed') if r.get('seed') is not None else 'not built'} |"
        for r in records
    )
    return lines + list(seen)


def _not_imported(modules: dict[str, str], sub: str) -> list[str]:
    if not modules:
        return []
    lines = ["", f"{sub} Test modules that did not import", "", "| module | error |", "|---|---|"]
    return lines + [f"| `{_cell(m)}` | {_cell(e)} |" for m, e in sorted(modules.items())]


def write_table(path: Path, text: str, part: str | None) -> None:
    """``text`` as the whole of ``path``, or with ``part`` as that part's section of it (between
    ``<!-- part:NAME -->`` and ``<!-- /part:NAME -->``): replaced where the file has it, else
    added at its end, the other parts kept."""
    if part is None:
        path.write_text(text)
        return
    begin, end = f"<!-- part:{part} -->", f"<!-- /part:{part} -->"
    section = f"{begin}\n{text}{end}\n"
    old = path.read_text() if path.is_file() else f"{TITLE}\n\n{INTRO}\n\n"
    if begin in old and end in old:
        head, rest = old.split(begin, 1)
        new = head + section + rest.split(end, 1)[1].lstrip("\n")
    else:
        new = old.rstrip("\n") + "\n\n" + section
    path.write_text(new)
