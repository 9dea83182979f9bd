"""Find the CPU emulation stack that runs VGF files, and the environment it needs.

Four pieces, none of them part of vgfc:

* the Vulkan loader (``libvulkan.so.1``, Debian ``libvulkan1``);
* lavapipe, Mesa's CPU Vulkan driver (Debian ``mesa-vulkan-drivers``);
* Arm's ML emulation layers for VK_ARM_tensors and VK_ARM_data_graph
  (PyPI ``ai-ml-emulation-layer-for-vulkan``);
* Arm's scenario runner (PyPI ``ai-ml-sdk-scenario-runner``).

The layers must be stacked with the graph layer above the tensor layer, since the graph layer
calls into VK_ARM_tensors. The Debian loader orders layers by where it finds their manifests and
ignores the order of ``VK_INSTANCE_LAYERS``, so each manifest goes into a folder of its own and
the graph layer's folder comes first in ``VK_LAYER_PATH``.
"""

from __future__ import annotations

import ctypes.util
import json
import os
import platform
import sys
from collections.abc import Iterable, Mapping
from importlib import metadata
from pathlib import Path

from vgfc.diagnostics import UnsupportedError
from vgfc.record import field, record

__all__ = ["DEVICES", "Layer", "Stack", "find_stack", "icd_search_dirs", "resolve_device"]

DEVICES = ("cpu", "gpu", "auto")
"""``--device`` choices: lavapipe, the machine's Vulkan GPU driver, or the GPU when there is one."""

RUNNER_PACKAGE = "ai-ml-sdk-scenario-runner"
LAYER_PACKAGE = "ai-ml-emulation-layer-for-vulkan"
PIP_HINT = "pip install 'vgfc[run]'"
OLDEST = (0, 11, 0)
"""The oldest release of the ML SDK packages that runs vgfc's files."""
APT_HINT = "apt-get install mesa-vulkan-drivers libvulkan1"

# Layers from the top of the stack down, by the device extension each one provides.
LAYER_ORDER = ("VK_ARM_data_graph", "VK_ARM_tensors")


@record
class Layer:
    """One emulation layer: its name and the library its manifest points at."""

    name: str
    manifest: dict[str, object] = field(repr=False)
    library: Path = Path()


@record
class Stack:
    """Where the pieces of the emulation stack are on this machine."""

    scenario_runner: Path
    layers: tuple[Layer, ...]
    """Top of the stack first (graph, then tensor)."""
    icd: Path
    """lavapipe's ICD manifest."""
    loader: str
    """The Vulkan loader library as the dynamic linker names it."""
    versions: dict[str, str]
    """Package name -> installed version."""

    def environment(
        self,
        layer_dir: Path,
        base: Mapping[str, str] | None = None,
        *,
        validation_log: Path | None = None,
        device: str = "cpu",
    ) -> dict[str, str]:
        """Write one manifest folder per layer under ``layer_dir`` and return ``base`` (default:
        this process's environment) with the variables that select the driver and the layers.

        ``validation_log``: put the Khronos validation layer below the emulation layers, its
        messages going to that file. ``device``: ``cpu`` runs on lavapipe only; ``gpu`` lets the
        loader use the machine's own Vulkan drivers."""
        env = dict(os.environ if base is None else base)
        folders = []
        for i, layer in enumerate(self.layers):
            folder = layer_dir / f"{i}_{layer.name}"
            folder.mkdir(parents=True, exist_ok=True)
            manifest = json.loads(json.dumps(layer.manifest))
            # An absolute library path: the copied manifest no longer sits next to the library.
            manifest["layer"]["library_path"] = str(layer.library)
            (folder / "layer.json").write_text(json.dumps(manifest, indent=2), encoding="utf-8")
            folders.append(str(folder))
        names = [layer.name for layer in self.layers]
        if validation_log is not None:
            from vgfc.runner import validation

            folder = layer_dir / f"{len(folders)}_validation"
            folder.mkdir(parents=True, exist_ok=True)
            manifest_path = validation.find_layer()
            (folder / "layer.json").write_text(manifest_path.read_text(), encoding="utf-8")
            settings = layer_dir / "vk_layer_settings.txt"
            settings.write_text(validation.settings(validation_log), encoding="utf-8")
            env["VK_LAYER_SETTINGS_PATH"] = str(settings)
            folders.append(str(folder))
            names.append(validation.LAYER_NAME)
        libs = {str(layer.library.parent) for layer in self.layers}
        env["VK_LAYER_PATH"] = os.pathsep.join(folders)
        env["VK_INSTANCE_LAYERS"] = ":".join(names)
        # No empty entry: the dynamic linker would read it as the current folder.
        paths = [*sorted(libs), *env.get("LD_LIBRARY_PATH", "").split(os.pathsep)]
        env["LD_LIBRARY_PATH"] = os.pathsep.join(p for p in paths if p)
        if device == "cpu":
            # Only lavapipe: results must not depend on which GPU drivers happen to be installed.
            env["VK_DRIVER_FILES"] = env["VK_ICD_FILENAMES"] = str(self.icd)
        else:
            # Every driver the loader finds; it picks the first GPU device.
            env.pop("VK_DRIVER_FILES", None)
            env.pop("VK_ICD_FILENAMES", None)
        return env


def resolve_device(device: str) -> str:
    """``cpu`` or ``gpu`` for a ``--device`` choice; ``auto`` is ``gpu`` where the machine has a
    GPU device node (a DRM render node or an NVIDIA device), else ``cpu``. Mesa installs driver
    manifests for GPUs a machine does not have, so manifests alone say nothing."""
    if device != "auto":
        return device
    nodes = [*Path("/dev/dri").glob("renderD*"), *Path("/dev").glob("nvidia[0-9]*")]
    return "gpu" if nodes else "cpu"


def find_stack(icd_dirs: Iterable[Path] | None = None) -> Stack:
    """Locate every piece; :class:`UnsupportedError` says what to install when one is missing.

    ``icd_dirs`` overrides where lavapipe's manifest is looked for (default:
    :func:`icd_search_dirs`).
    """
    if not sys.platform.startswith("linux"):
        raise UnsupportedError(f"running VGF files needs Linux (this is {sys.platform})")
    runner_files, runner_version = _package_files(RUNNER_PACKAGE)
    runner = next((f for f in runner_files if f.name == "scenario-runner"), None)
    if runner is None or not os.access(runner, os.X_OK):
        raise UnsupportedError(
            f"the {RUNNER_PACKAGE} installation has no scenario-runner program: "
            f"reinstall it ({PIP_HINT})"
        )
    layer_files, layer_version = _package_files(LAYER_PACKAGE)
    _check_version(LAYER_PACKAGE, layer_version)
    _check_version(RUNNER_PACKAGE, runner_version)
    layers = _layers(layer_files)
    loader = ctypes.util.find_library("vulkan")
    if loader is None:
        raise UnsupportedError(f"the Vulkan loader (libvulkan.so.1) is not installed: {APT_HINT}")
    dirs = list(icd_search_dirs() if icd_dirs is None else icd_dirs)
    icd = _lavapipe(dirs)
    if icd is None:
        searched = ", ".join(str(d) for d in dirs)
        raise UnsupportedError(
            f"lavapipe, the CPU Vulkan driver, is not installed (no lvp_icd*.json in {searched}): "
            f"{APT_HINT}"
        )
    return Stack(
        scenario_runner=runner,
        layers=layers,
        icd=icd,
        loader=loader,
        versions={RUNNER_PACKAGE: runner_version, LAYER_PACKAGE: layer_version},
    )


def icd_search_dirs() -> list[Path]:
    """Folders the Vulkan loader reads ICD manifests from, in the loader's documented order."""
    home = Path.home()
    config = os.environ.get("XDG_CONFIG_DIRS") or "/etc/xdg"
    data_home = os.environ.get("XDG_DATA_HOME") or str(home / ".local" / "share")
    data = os.environ.get("XDG_DATA_DIRS") or "/usr/local/share:/usr/share"
    roots = [*config.split(":"), "/etc", data_home, *data.split(":")]
    return [Path(root) / "vulkan" / "icd.d" for root in roots if root]


def _package_files(package: str) -> tuple[list[Path], str]:
    try:
        dist = metadata.distribution(package)
    except metadata.PackageNotFoundError:
        raise UnsupportedError(
            f"running VGF files needs {package}, which is not installed: {PIP_HINT}"
        ) from None
    return [Path(str(f.locate())) for f in dist.files or ()], dist.version


def _check_version(package: str, version: str) -> None:
    """Refuse a release older than :data:`OLDEST`: ``executorch[vgf]`` 1.5.1 pins the 0.10.0
    layers, whose libraries need glibc 2.38 and fail to load elsewhere, which the scenario
    runner then reports as ``Cannot find queue index``. ``pip install 'vgfc[run]'`` replaces
    them, and ExecuTorch's VGF backend does not use them (docs/pytorch.md)."""
    try:
        release = tuple(int(part) for part in version.split(".")[:3])
    except ValueError:
        return  # a local build with its own numbering: let it run
    if release < OLDEST:
        oldest = ".".join(map(str, OLDEST))
        raise UnsupportedError(
            f"{package} {version} is installed and running VGF files needs {oldest} or later "
            f"(executorch[vgf] 1.5.1 pins 0.10.0; its VGF backend does not need it, see "
            f"docs/pytorch.md): {PIP_HINT}"
        )


def _layers(files: list[Path]) -> tuple[Layer, ...]:
    by_extension: dict[str, Layer] = {}
    for manifest_path in (f for f in files if f.suffix == ".json" and f.parent.name.endswith(".d")):
        try:
            manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
            layer = manifest["layer"]
            library_name = Path(layer["library_path"]).name
            extensions = [e["name"] for e in layer.get("device_extensions", ())]
        except (OSError, ValueError, KeyError, TypeError):
            continue
        library = next((f for f in files if f.name == library_name), None)
        if library is None or not library.is_file():
            continue
        for ext in extensions:
            by_extension.setdefault(ext, Layer(str(layer["name"]), manifest, library))
    missing = [ext for ext in LAYER_ORDER if ext not in by_extension]
    if missing:
        raise UnsupportedError(
            f"the {LAYER_PACKAGE} installation has no layer for {', '.join(missing)}: "
            f"reinstall it ({PIP_HINT})"
        )
    return tuple(by_extension[ext] for ext in LAYER_ORDER)


def _lavapipe(dirs: list[Path]) -> Path | None:
    machine = platform.machine()
    candidates: list[Path] = []
    for folder in dirs:
        if folder.is_dir():
            candidates.extend(sorted(folder.glob("lvp_icd*.json")))
    # Debian installs one manifest per architecture (lvp_icd.x86_64.json, lvp_icd.i686.json).
    candidates.sort(key=lambda p: machine not in p.name)
    for candidate in candidates:
        try:
            library = str(json.loads(candidate.read_text(encoding="utf-8"))["ICD"]["library_path"])
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if not os.path.isabs(library) or os.path.exists(library):
            return candidate
    return None
