"""What a compile is asked to do and what it produced: :class:`Options`, the sinks, and
:class:`Compilation`.

A leaf: the spine (:mod:`vgfc.compiler`), the stages, the report and the commands import it, and
it imports none of them (their types are for type checkers only). The options' defaults come
from the one option table, :mod:`vgfc.options`.
"""

from __future__ import annotations

from pathlib import Path

from vgfc.diagnostics import Diagnostic, Severity
from vgfc.options import DEFAULTS
from vgfc.record import field, record, replace
from vgfc.shader.options import CompileOptions

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, BinaryIO

    from vgfc.deps import Depfile
    from vgfc.ir import Graph
    from vgfc.lower import LoweredModule
    from vgfc.partition import Plan
    from vgfc.passes.records import Rewrite
    from vgfc.resolve.library.records import Library
    from vgfc.vgf.model import Model
    from vgfc.warning_names import WarningFlags

__all__ = ["Compilation", "Options", "Sink", "ToBytes", "ToFile", "ToStream", "make_options"]


@record
class Options:
    """What a compile can be asked to do differently: the values of the compile options of
    :data:`vgfc.options.OPTIONS` (their ``into``), as :func:`vgfc.compilation.make_options` checks
    and builds them."""

    shader: CompileOptions = field(default_factory=CompileOptions)
    keep_source: bool = DEFAULTS["keep_source"]
    """Store GLSL/HLSL source in compute modules instead of the compiled SPIR-V."""
    target: str = DEFAULTS["target"]
    """The runtime the VGF is for (:data:`vgfc.vgf.profiles.TARGETS`); its rules are checked
    in the layout stage."""
    kernels: tuple[str, ...] = DEFAULTS["kernels"]
    """Kernel libraries (``--kernels``: files or bundled names) for custom ops that carry no
    shader, searched in order; the resolve stage reads them."""
    custom_opcodes: tuple[tuple[str, int], ...] = DEFAULTS["custom_opcodes"]
    """(domain, opcode) for each ``--custom-op-domain-to-opcode DOMAIN:N``: a CUSTOM op of the
    domain becomes an Arm.ExperimentalMLOperations.1 CALL in its graph partition."""
    bespoke: bool = DEFAULTS["bespoke"]
    """``--enable-bespoke``: com.arm.bespoke ops are CALLs with opcode 0 (unless mapped)."""
    debug_info: bool = DEFAULTS["debug_info"]
    """``--emit-debug-info``: graph modules carry NonSemantic.Graph.DebugInfo.1 instructions."""
    auto_convert: bool = DEFAULTS["auto_convert"]
    """Let kernel selection insert CAST/TRANSPOSE/PAD/SLICE around a custom op; off, a kernel
    that needs one is an error (``--no-auto-convert``)."""
    warnings: tuple[str, ...] = DEFAULTS["warnings"]
    """The ``-W`` values in command-line order (``no-short-dispatch``, ``error``), checked;
    :attr:`warning_flags` reads them."""
    hide_warnings: bool = DEFAULTS["hide_warnings"]
    """``-w``: no warning is kept."""
    optimize: bool = DEFAULTS["optimize"]
    """Run the optimising graph passes (:data:`vgfc.passes.PASSES`); off (``-O0``) only the
    passes that must run."""
    type_narrowing: str = DEFAULTS["type_narrowing"]
    """``none``, ``full`` or ``partial``: FP32 made FP16 by the ``type-narrowing`` pass
    (:mod:`vgfc.passes.narrow`)."""
    dump_mlir: bool = DEFAULTS["dump_mlir"]
    """``--dump-mlir``: the model read printed as TOSA MLIR on standard error, and what each
    pass changed (:mod:`vgfc.dump`)."""
    replicated_composites: bool = DEFAULTS["replicated_composites"]
    """Allow modules that need VK_EXT_shader_replicated_composites; off, such a module is an
    error (``vgfc-model-converter --disable-replicated-composites``)."""

    @property
    def call_opcodes(self) -> dict[str, int]:
        """The CALL opcode of each custom-op domain compiled into the graph: the mapped ones,
        and com.arm.bespoke's 0 with ``bespoke`` (an explicit mapping of it wins)."""
        from vgfc.custom_calls import BESPOKE_DOMAIN

        calls = dict(self.custom_opcodes)
        if self.bespoke:
            calls.setdefault(BESPOKE_DOMAIN, 0)
        return calls

    @property
    def warning_flags(self) -> WarningFlags:
        """What becomes of each warning (:func:`vgfc.warning_names.parse`)."""
        from vgfc.warning_names import parse

        return parse(self.warnings, hidden=self.hide_warnings)


def make_options(**values: Any) -> Options:
    """:class:`Options` from the compile options' values, by name (those
    :data:`vgfc.options.OPTIONS` marks with ``into``; a missing one, or ``None``, takes its
    default), each checked as the command line checks it. Raises
    :class:`vgfc.options.UsageError` (a ValueError) for a value the command line refuses,
    TypeError for a name that is no compile option."""
    from vgfc.option_values import check_value
    from vgfc.options import OPTIONS

    known = {o.name: o for o in OPTIONS if o.into is not None}
    unknown = sorted(set(values) - set(known))
    if unknown:
        raise TypeError(f"unknown compile option {unknown[0]!r}; the options: {', '.join(known)}")
    top: dict[str, Any] = {}
    shader: dict[str, Any] = {}
    for name, option in known.items():
        given = values.get(name)
        value = option.default if given is None else check_value(option, given)
        assert option.into is not None
        into = option.into
        if into.startswith("shader."):
            shader[into.removeprefix("shader.")] = value
        else:
            top[into] = value
    return replace(Options(**top), shader=CompileOptions(**shader))


# -- where the encoded VGF goes ----------------------------------------------------------------


@record
class ToBytes:
    """Keep the VGF in :attr:`Compilation.vgf`."""


@record
class ToFile:
    """Stream the VGF to ``path`` atomically (constants go from the mapped input to disk without
    a copy in memory), with the JSON report to ``report``: the two are renamed into place
    together once both are written, and on any error neither replaces what was there."""

    path: Path
    report: Path | BinaryIO | None = None
    """The report's file, or a stream (``--report -``) it is written to once the VGF is in
    place."""
    hold: list[Any] | None = field(default=None, compare=False)
    """Where to leave the written files instead of renaming them into place: a list that gets
    the :class:`vgfc.files.outputs.Staged` outputs, for :func:`vgfc.files.outputs.commit` (or
    :func:`vgfc.files.outputs.discard`) once the caller knows it wants them (``vgfc compile`` prints
    its summary first, so that output it cannot print leaves the old files)."""
    depfile: Depfile | None = None
    """Also a dependency file (``-MD``/``-MF``), renamed into place with the VGF."""


@record
class ToStream:
    """Write the VGF to an open binary stream (``vgfc-model-converter -o -``, ``vgfc compile -o
    -``), and the JSON report to the file ``report`` once the whole VGF went out (flushed)."""

    stream: BinaryIO
    report: Path | None = None
    depfile: Depfile | None = None
    """Also a dependency file (``-MD``/``-MF`` with ``-MT``), written with the report."""


Sink = ToBytes | ToFile | ToStream
"""Where the encode stage puts the VGF."""


@record
class Compilation:
    """What the pipeline produced, each stage's result a field. A stage that did not run
    (stopped, or an earlier error with ``keep_going``) leaves its fields empty."""

    graph: Graph | None = None
    """The graph after resolve (custom ops bound), else after the passes, else as read."""
    order: tuple[int, ...] = ()
    """The operators' dependency order (verify; resolve works it out anew when it adds ops)."""
    rewrites: tuple[Rewrite, ...] = ()
    """What each graph pass changed, operator by operator, in pass order (:mod:`vgfc.passes`)."""
    libraries: tuple[Library, ...] = ()
    """The kernel libraries resolve read (``Options.kernels``)."""
    unbound: frozenset[int] = frozenset()
    """Ops resolve could not bind (with ``keep_going``): lower leaves them out."""
    kernels: tuple[tuple[int, str, str], ...] = ()
    """(op index, library entry, kernel or ``compose``) for each op a kernel library bound."""
    plan: Plan | None = None
    bindings: dict[str, int] = field(default_factory=dict)
    """Logical binding id of every value that crosses a partition."""
    modules: tuple[LoweredModule | None, ...] = ()
    """One lowered module per partition (:mod:`vgfc.lower`); ``None`` where lowering failed."""
    model: Model | None = None
    vgf: bytes | None = None
    """The VGF, when the sink was :class:`ToBytes`."""
    size: int | None = None
    """Bytes of the VGF encoded (to any sink)."""
    sha256: str | None = None
    """The written VGF's SHA-256, where a report records it."""
    diagnostics: tuple[Diagnostic, ...] = ()
    """Warnings, and with ``keep_going`` the errors, in pipeline order."""
    reads: tuple[str, ...] = ()
    """Every file the compile read, in the order the stages read them (a file read twice is
    here twice): the model, the kernel libraries, the shader files of the kernels bound, and
    each ``#include`` a shader opened, also for a shader taken from the cache. What a
    dependency file lists (:mod:`vgfc.deps`)."""
    timings: tuple[tuple[str, float], ...] = ()
    """(stage, seconds) in pipeline order."""

    @property
    def errors(self) -> tuple[Diagnostic, ...]:
        return tuple(d for d in self.diagnostics if d.severity is Severity.ERROR)

    @property
    def warnings(self) -> tuple[Diagnostic, ...]:
        return tuple(d for d in self.diagnostics if d.severity is Severity.WARNING)

    @property
    def notes(self) -> tuple[Diagnostic, ...]:
        """Idioms vgfc recognised and accepted (a shader reading raw bits), worth a line."""
        return tuple(d for d in self.diagnostics if d.severity is Severity.NOTE)
