"""What a test does when a tool it needs is missing: skip on a developer's machine, fail in CI
(``CI=true``), where ``make test`` has installed every tool and a skip would hide a break."""

from __future__ import annotations

import os
from typing import NoReturn

import pytest

IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}


def missing(reason: str) -> NoReturn:
    if IN_CI:
        pytest.fail(f"{reason} (CI is set: make test installs it)")
    pytest.skip(reason)
