"""Custom operators from PyTorch: kernel-library entries as ExecuTorch ops lowered to VGF shaders.

An entry of a kernel library (:mod:`vgfc.resolve.library`) already says everything the PyTorch
side of a custom shader op needs: its parameters, its operands' resources, its dispatch, how its
outputs' shapes and types follow from its inputs, which layout and type conversions each kernel
needs (documents 002, 003, 004). An entry that also carries a PyTorch schema::

    - domain: my_ops
      name: swish
      torch: "my_ops::swish(Tensor x, float beta=1.0) -> Tensor"
      reference: my_ops_ref:swish        # numpy in, numpy out: eager PyTorch, and vgfc verify
      ...

becomes, through :func:`load`, a ``torch.library`` op (``torch.ops.my_ops.swish``): its fake
implementation from the entry's shape and type inference, its eager implementation from the
entry's ``reference``. :meth:`TorchOps.attach` then keeps the ops in ExecuTorch's Arm VGF
delegate (``VgfPartitioner.register_custom_partition_op``) and adds one graph pass to the Arm
backend that rewrites each of them into ``tosa.CUSTOM`` with a complete
``com.arm.VulkanCustomShader`` payload (:mod:`vgfc.resolve.payload`): kernel selection, shader
compilation, validation and the cross-check are vgfc's own (the same as ``vgfc compile`` runs on
a model, through the shader cache), and the conversions the selected kernel needs (CAST,
TRANSPOSE between NCHW and NHWC, channel padding) are inserted around the op in the graph. The
payload stands alone: any converter, the reference one included, compiles the TOSA ExecuTorch
writes.

    import vgfc.executorch
    ops = vgfc.executorch.load("my_ops.yaml")
    partitioner = VgfPartitioner(VgfCompileSpec())
    ops.attach(partitioner)
    edge = to_edge_transform_and_lower(torch.export.export(model, (x,)), partitioner=[partitioner])

torch and ExecuTorch are imported by this package only (``pip install 'vgfc[executorch]'``):
:mod:`~vgfc.executorch.op` (an entry as a PyTorch op), :mod:`~vgfc.executorch.define` (its
``torch.library`` definition), :mod:`~vgfc.executorch.plan` (a call bound and its payloads
written) and :mod:`~vgfc.executorch.rewrite` (the partitioner and the pass).
ExecuTorch 1.5.1 has no documented way to run the VGF conversion in-process, so its converter
subprocess (``MODEL_CONVERTER_PATH``, e.g. ``vgfc-model-converter``) converts the TOSA as usual.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

try:
    import torch  # noqa: F401 - every module of the package needs it
except ImportError as e:  # pragma: no cover - the extra is not installed
    raise ImportError(
        "vgfc.executorch needs torch and ExecuTorch: pip install 'vgfc[executorch]'"
    ) from e

from vgfc.diagnostics import InputError
from vgfc.executorch.define import define
from vgfc.executorch.op import TorchOp
from vgfc.executorch.plan import OPTIONS
from vgfc.executorch.rewrite import attach

if TYPE_CHECKING:
    from vgfc.compiler import Options

__all__ = ["TorchOp", "TorchOps", "load"]


def load(
    *libraries: str | os.PathLike[str],
    include_dirs: Sequence[str | os.PathLike[str]] = (),
    defines: Mapping[str, str] | Sequence[str] = (),
    target_env: str = "vulkan1.3",
) -> TorchOps:
    """Define a PyTorch op for every entry of ``libraries`` (files, or a bundled library's name)
    that carries a ``torch`` schema. Raises :class:`vgfc.VgfcError` for a library that is wrong,
    an entry whose schema disagrees with its parameters, inputs or outputs, or one that cannot
    be a PyTorch op; each message names ``lib.yaml:LINE`` and the entry."""
    from vgfc.compilation import make_options
    from vgfc.resolve.library.load import load_libraries

    # Shaders compile in this process: ExecuTorch's export runs many threads, and a worker
    # process forked from it would start with their locks held.
    options = make_options(
        kernels=libraries,
        include_dirs=include_dirs,
        defines=defines,
        target_env=target_env,
        shader_timeout=0,
    )
    loaded = load_libraries(options.kernels, include_dirs=options.shader.include_dirs)
    ops = [
        define(entry)
        for library in loaded
        for entry in library.entries.values()
        if entry.torch is not None
    ]
    if not ops:
        shown = ", ".join(library.shown for library in loaded)
        raise InputError(f"no entry of {shown} names a PyTorch schema (torch: ns::op(...) -> ...)")
    for op in ops:
        OPTIONS[op.qualname] = options
    return TorchOps({op.qualname: op for op in ops}, options)


class TorchOps(Mapping[str, TorchOp]):
    """The PyTorch ops of kernel libraries (:func:`load`), by qualified name."""

    def __init__(self, ops: Mapping[str, TorchOp], options: Options) -> None:
        self._ops = dict(ops)
        self.options = options
        """How shaders are compiled (the ``-I``, ``-D`` and ``--target-env`` of ``load``)."""

    def __getitem__(self, name: str) -> TorchOp:
        return self._ops[name]

    def __iter__(self) -> Any:
        return iter(self._ops)

    def __len__(self) -> int:
        return len(self._ops)

    def attach(self, partitioner: Any) -> Any:
        """Keep these ops in ``partitioner``'s delegate (an ExecuTorch ``VgfPartitioner``) and
        have the Arm backend rewrite them into ``tosa.CUSTOM`` (one pass per process, for every
        op :func:`load` defined). Returns the partitioner."""
        attach(self._ops.values(), partitioner)
        return partitioner
