"""A pytest plugin that lets ExecuTorch's model tests build offline: downloaded weights become
seeded random ones, each replacement recorded.

``scripts/executorch_suite.py run`` loads it (``-p executorch_suite_offline``) in the ExecuTorch
venv. Wherever a test (or a test module, at import) would download pretrained weights, the
model is built as it would be, the same architecture and the same builder arguments, and its
parameters are then filled from a generator seeded with the name of the weights
(:func:`seed_module`: the same numbers on every run):

* torchvision's weights enums (``resnet18(weights=ResNet18_Weights.DEFAULT)``):
  ``WeightsEnum.get_state_dict``;
* ``torch.hub.load_state_dict_from_url`` (and so any URL state dict);
* timm's ``pretrained=True`` (``timm.models._builder.load_pretrained``);
* ``huggingface_hub.hf_hub_download`` of a weights file (``.pt``, ``.pth``, ``.bin``,
  ``.ckpt``, ``.safetensors``): a placeholder path that ``torch.load`` reads as the weights.

What cannot be built without the network (``torch.hub.load`` of a repository, a Hugging Face
file that is not weights: a config, a tokenizer) raises :class:`Offline`, and is recorded too.
Each record (``test``, ``replaced``, ``seed``) goes to the JSON file named by
``$VGFC_SUITE_REPLACED`` as it happens; ``test`` is the running test's folder name in the kept
files, or ``<file> (import)`` for a replacement made while a test module was imported.

It also lets torchvision import over the CPU torch: PyPI's torchvision wheel is built against
CUDA torch, so its C++ operators do not load, and torchvision then still registers fake
kernels for two of them (``torchvision::nms``, ``qnms``), which fails; their schemas are
declared here first. The image models need none of those operators.
"""

from __future__ import annotations

import importlib.util
import inspect
import json
import os
import zlib
from pathlib import Path
from typing import Any

import executorch_suite_converter as wrapper  # a sibling script: the kept files' folder names
import torch

RECORD_ENV = "VGFC_SUITE_REPLACED"
WEIGHT_SUFFIXES = (".pt", ".pth", ".bin", ".ckpt", ".safetensors")
SUITE_PART = f"backends{os.sep}arm{os.sep}test{os.sep}"
TORCHVISION_SCHEMAS = {
    "nms": "nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
    "qnms": "qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
}

records: list[dict[str, Any]] = []
_keep: list[Any] = []  # torch.library handles, alive as long as the process


class Offline(RuntimeError):
    """A download this plugin cannot stand in for."""


class Seeded(dict[str, Any]):
    """An empty state dict standing for downloaded weights: ``load_state_dict`` of it fills the
    module with seeded random numbers instead."""

    def __init__(self, source: str, seed: int) -> None:
        super().__init__()
        self.source, self.seed = source, seed


def seed_of(source: str) -> int:
    return zlib.crc32(source.encode())


def seed_module(module: torch.nn.Module, seed: int) -> None:
    """Fill every floating-point parameter of ``module`` as PyTorch's default initialisation
    would (uniform within 1/sqrt(fan-in); norm weights near 1), and batch norms' running
    statistics near (0, 1), from a generator seeded with ``seed``. Integer buffers (indices,
    counters) are left alone."""
    generator = torch.Generator().manual_seed(seed)

    def uniform(shape: torch.Size, low: float, high: float) -> torch.Tensor:
        return low + (high - low) * torch.rand(shape, generator=generator)

    with torch.no_grad():
        for name, p in module.named_parameters():
            if not p.is_floating_point():
                continue
            if p.dim() >= 2:
                bound = (p[0].numel() or 1) ** -0.5
                p.copy_(uniform(p.shape, -bound, bound))
            elif name.endswith("weight"):
                p.copy_(uniform(p.shape, 0.5, 1.5))
            else:
                p.copy_(uniform(p.shape, -0.1, 0.1))
        for name, b in module.named_buffers():
            if b.is_floating_point() and name.endswith("running_mean"):
                b.copy_(uniform(b.shape, -0.1, 0.1))
            elif b.is_floating_point() and name.endswith("running_var"):
                b.copy_(uniform(b.shape, 0.5, 1.5))


def _where() -> str:
    """The running test's folder name, else the test module being imported."""
    current = os.environ.get("PYTEST_CURRENT_TEST")
    if current:
        return wrapper.folder_name(current)
    for frame in inspect.stack()[2:]:
        name = frame.filename
        if SUITE_PART in name and Path(name).name.startswith("test_"):
            return f"{Path(name).stem} (import)"
    return "unknown"


def record(replaced: str, seed: int | None) -> None:
    records.append({"test": _where(), "replaced": replaced, "seed": seed})
    path = os.environ.get(RECORD_ENV)
    if path:
        Path(path).write_text(json.dumps(records, indent=1) + "\n")


def seeded(source: str) -> Seeded:
    seed = seed_of(source)
    record(source, seed)
    return Seeded(source, seed)


def _load_state_dict(original: Any) -> Any:
    def load_state_dict(self: torch.nn.Module, state_dict: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(state_dict, Seeded):
            seed_module(self, state_dict.seed)
            return torch.nn.modules.module._IncompatibleKeys([], [])
        return original(self, state_dict, *args, **kwargs)

    return load_state_dict


def _url_state_dict(url: str, *args: Any, **kwargs: Any) -> Seeded:
    return seeded(f"state dict from {url}")


def _hub_load(repo_or_dir: str, model: str, *args: Any, **kwargs: Any) -> Any:
    record(f"torch.hub.load({repo_or_dir!r}, {model!r}): not built (its code is downloaded)", None)
    raise Offline(f"offline: torch.hub.load({repo_or_dir!r}, {model!r}) would download code")


PLACEHOLDERS: dict[str, Seeded] = {}


def _hf_hub_download(repo_id: str, filename: str, *args: Any, **kwargs: Any) -> str:
    source = f"huggingface {repo_id}/{filename}"
    if not filename.endswith(WEIGHT_SUFFIXES):
        record(f"{source}: not built (not weights)", None)
        raise Offline(f"offline: {source} would be downloaded")
    placeholder = f"<offline weights {source}>"
    PLACEHOLDERS[placeholder] = seeded(source)
    return placeholder


def _torch_load(original: Any) -> Any:
    def load(f: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(f, str) and f in PLACEHOLDERS:
            return PLACEHOLDERS[f]
        return original(f, *args, **kwargs)

    return load


def declare_torchvision_ops() -> None:
    """Declare the schemas torchvision registers fake kernels for, where its C++ operators do
    not load (PyPI's CUDA build over the CPU torch); nothing where they do."""
    spec = importlib.util.find_spec("torchvision")
    if spec is None or not spec.submodule_search_locations:
        return
    folder = Path(next(iter(spec.submodule_search_locations)))
    library = next(iter(sorted(folder.glob("_C*.so"))), None)
    try:
        if library is not None:
            torch.ops.load_library(str(library))
            return
    except OSError:
        pass
    lib = torch.library.Library("torchvision", "FRAGMENT")
    for schema in TORCHVISION_SCHEMAS.values():
        lib.define(schema)
    _keep.append(lib)


def _timm_load_pretrained(model: torch.nn.Module, pretrained_cfg: Any = None, **_: Any) -> None:
    cfg = pretrained_cfg or getattr(model, "pretrained_cfg", None) or {}
    where = cfg.get("hf_hub_id") or cfg.get("url") or cfg.get("file") or "?"
    source = f"timm {cfg.get('architecture', type(model).__name__)} pretrained ({where})"
    seed_module(model, seeded(source).seed)


def install() -> None:
    """Put every stand-in in place (before any test module is imported)."""
    torch.nn.Module.load_state_dict = _load_state_dict(torch.nn.Module.load_state_dict)  # type: ignore[method-assign]
    torch.load = _torch_load(torch.load)
    torch.hub.load_state_dict_from_url = _url_state_dict
    torch.hub.load = _hub_load
    declare_torchvision_ops()
    if importlib.util.find_spec("torchvision") is not None:
        from torchvision.models import _api

        _api.WeightsEnum.get_state_dict = lambda self, *a, **k: seeded(  # type: ignore[method-assign]
            f"torchvision {self.__class__.__name__}.{self.name} ({self.url})"
        )
        _api.load_state_dict_from_url = _url_state_dict
    if importlib.util.find_spec("timm") is not None:
        from timm.models import _builder

        _builder.load_pretrained = _timm_load_pretrained
        _builder.load_state_dict_from_url = _url_state_dict
    if importlib.util.find_spec("huggingface_hub") is not None:
        import huggingface_hub
        from huggingface_hub import file_download

        huggingface_hub.hf_hub_download = _hf_hub_download
        file_download.hf_hub_download = _hf_hub_download


def pytest_configure(config: Any) -> None:
    # A pytest started from within a test inherits the outer test's name: not this one's.
    os.environ.pop("PYTEST_CURRENT_TEST", None)
    path = os.environ.get(RECORD_ENV)
    if path:
        target = Path(path)
        if target.is_dir() or not target.parent.is_dir():
            import pytest

            raise pytest.UsageError(
                f"{RECORD_ENV}={path}: not a file in an existing folder (the replacements' record)"
            )
        target.write_text("[]\n")
    install()
