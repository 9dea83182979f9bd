#!/usr/bin/env python3
"""Hold a folder of TOSA tests to the specification's conditions (``vgfc/verify/``), in-process.

For the official conformance suite made by tosa-tools' generator: its negative half must be
refused, each test naming its ``ERRORIF`` kind (taken from the test's name), and its positive half
must pass every check. Each ``.tosa`` under FOLDER is read, verified and checked up to the verify
stage (``compile_model(stop_after="verify", keep_going=True)``: what ``vgfc check`` runs first)::

    tosa_verif_conformance_generator --tosa-version 1.0.2 --profile all --extension all \\
        --test-type negative --output-type binary --output-directory neg
    python scripts/spec_corpus.py neg --expect refused

    tosa_verif_conformance_generator ... --test-type positive --lazy-data-generation ...
    python scripts/spec_corpus.py pos --expect valid

Prints a line per test that breaks the expectation (at most 20) and a summary; exits 1 if any did.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from pathlib import Path

from vgfc.compiler import compile_model
from vgfc.diagnostics import VgfcError

_KIND = re.compile(r"_ERRORIF_([A-Za-z0-9]+)_")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--expect", choices=("refused", "valid"), required=True)
    args = parser.parse_args(argv)
    counts: Counter[str] = Counter()
    shown = 0
    for model in sorted(args.folder.rglob("*.tosa")):
        kind = _KIND.search(model.parent.name)
        try:
            done = compile_model(model, stop_after="verify", keep_going=True)
        except VgfcError as e:  # the reader's errors are raised, not kept
            errors = [str(e)]
        else:
            errors = [d.render() for d in done.errors]
        if args.expect == "valid":
            result = "refused" if errors else "valid"
        elif not errors:
            result = "accepted"
        elif kind is not None and f"[{kind.group(1)}]" in errors[0]:
            result = "refused, naming its condition"
        else:
            result = "refused"
        counts[result] += 1
        if result == ("accepted" if args.expect == "refused" else "refused") and shown < 20:
            print(f"{model}: {result}: {errors[0] if errors else 'no error'}")
            shown += 1
    print(", ".join(f"{n} {what}" for what, n in sorted(counts.items())) or "no .tosa file")
    failed = counts["accepted"] if args.expect == "refused" else counts["refused"]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
