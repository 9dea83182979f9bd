"""Where the test suite's files are, named once: test modules live at different depths
(``tests/unit/<stage>/``, ``tests/e2e/``...), so none of them works out a path from its own
``__file__``."""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parent.parent
"""The ``tests/`` folder."""
ROOT = TESTS.parent
"""The repository."""
DATA = TESTS / "data"
"""Checked-in models, libraries and corpora."""
GOLDEN = TESTS / "golden"
"""Checked-in expected outputs (``pytest --update-goldens`` rewrites them)."""
SAMPLES_DIR = ROOT / "samples"
"""The bundled sample models and their build script."""
FUZZ = TESTS / "fuzz"
"""The fuzzer and its helpers (scripts that import each other as plain modules)."""
