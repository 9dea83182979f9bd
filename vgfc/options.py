"""The one table of options: every option that changes a compile, and ``vgfc compile``'s own.

Each :class:`Option` is declared once, in :data:`OPTIONS`: its name (the keyword of
:func:`vgfc.compile` and the parameter of the click command), its flags, its kind, default and
help, the commands that take it, and where its value goes in
:class:`vgfc.compilation.Options`. Everything else is made from the table:

* the click options of every command (:func:`vgfc.cli.options.declare`);
* the quick parser of the usual ``vgfc compile`` lines (:mod:`vgfc.cli.quick`), with its
  defaults;
* :func:`vgfc.option_values.check_value`, which checks a compile option's value as the command
  line does, for :func:`vgfc.compilation.make_options` (``vgfc.compile(**options)`` calls it);
* the defaults of :class:`~vgfc.compilation.Options` and
  :class:`~vgfc.shader.options.CompileOptions`, which read :data:`DEFAULTS`.

So adding an option is one entry here and the line of the stage that reads it. This module
imports nothing of vgfc but the leaves :mod:`vgfc.record`, :mod:`vgfc.custom_calls` and
:mod:`vgfc.environments`: the
shader layer and the leaf :mod:`vgfc.compilation` read it without a cycle, and the quick path
without click.
"""

from __future__ import annotations

from collections.abc import Mapping

from vgfc.custom_calls import BESPOKE_DOMAIN, OPCODE_MAX
from vgfc.environments import TARGET_ENVS
from vgfc.record import record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "COLOUR_MODES",
    "COMPILING",
    "DEFAULTS",
    "DIAGNOSTICS_FORMATS",
    "NARROWING_MODES",
    "OPTIONS",
    "REPORT_NEXT_TO_OUTPUT",
    "SHADER_DOMAIN",
    "TARGET_NAMES",
    "Option",
    "UsageError",
    "compile_values",
    "flag",
    "options_of",
]

TARGET_NAMES = ("scenario-runner", "executorch")
"""The runtimes a VGF can be for (``--target``): the profiles of :mod:`vgfc.vgf.profiles`,
named here so that choosing one does not load their rules (a test keeps the two equal)."""

COLOUR_MODES = ("auto", "always", "never")
"""When what a command prints is coloured (``--color``), as gcc and cargo name it."""

DIAGNOSTICS_FORMATS = ("text", "sarif")
"""How errors and warnings are written (``--diagnostics-format``)."""

NARROWING_MODES = ("none", "full", "partial")
"""The values of ``--type-narrowing``: ``none`` keeps the model's types (the passes of
:mod:`vgfc.passes.narrow` do the other two)."""

REPORT_NEXT_TO_OUTPUT = ""
"""The value of ``--report`` given without a FILE: each report goes next to its VGF."""

COMPILING = ("compile", "check", "partition", "verify", "model-converter")
"""The commands that run the compile pipeline on a model: each takes every compile option."""

_SHADING = (*COMPILING, "kernels")
"""The compile options of the shader front end are also ``vgfc kernels``'s."""

_WARNING = (*COMPILING, "run")
"""``-W`` and ``-w`` also govern the warning ``vgfc run`` gives (``unwritten-output``)."""

KINDS = (
    "flag", "choice", "seconds", "count", "file", "folder", "report", "text",
    "dirs", "defines", "names", "warnings", "opcodes",
)  # fmt: skip
"""What an option's value is. The last five are given any number of times (a tuple)."""

SHADER_DOMAIN = "com.arm.VulkanCustomShader"
"""The custom-op domain whose ops carry their own shader (a shader partition each)."""


class UsageError(ValueError):
    """A value or a combination of values that cannot be run as given: exit 2 on the command
    line (with click's usage line), ValueError from :func:`vgfc.compile`. Found before any work."""


@record
class Option:
    """One option, declared once."""

    name: str
    """The keyword of :func:`vgfc.compile` and the click parameter."""
    flags: tuple[str, ...]
    help: str
    kind: str = "flag"
    """One of :data:`KINDS`."""
    default: Any = None
    choices: tuple[str, ...] = ()
    metavar: str | None = None
    commands: tuple[str, ...] = COMPILING
    """The commands that take it."""
    into: str | None = None
    """Where its value goes in :class:`~vgfc.compilation.Options` (``shader.timeout``), for a
    compile option; ``None`` for an option of the command's own (``-o``, ``-j``)."""
    off: bool = False
    """A flag that turns the option off: ``--no-cache`` gives ``cache=False``."""
    show_default: bool = False
    maximum: int | None = None
    """The largest value of a ``count``."""
    batch: bool = False
    """An option of ``vgfc compile``'s batch mode (the quick path leaves it to click)."""

    @property
    def multiple(self) -> bool:
        """Given any number of times; the value is a tuple."""
        return self.kind in ("dirs", "defines", "names", "warnings", "opcodes")

    @property
    def param(self) -> str:
        """The command line's parameter: the name, or for a flag that turns the option off the
        flag's (``no_cache``), whose value is the opposite."""
        return self.flags[-1].lstrip("-").replace("-", "_") if self.off else self.name


OPTIONS: tuple[Option, ...] = (
    # vgfc compile's own options.
    Option(
        "output",
        ("-o", "--output"),
        "VGF file to write (default: MODEL with the suffix .vgf; '-': standard output). One "
        "MODEL only.",
        kind="file",
        commands=("compile",),
    ),
    Option(
        "output_dir",
        ("-d", "--output-dir"),
        "Write each MODEL's VGF to OUTDIR/<stem>.vgf (created if missing): batch mode.",
        kind="folder",
        metavar="OUTDIR",
        commands=("compile",),
        batch=True,
    ),
    Option(
        "report",
        ("--report",),
        "Also write a JSON report (schemas/report.schema.json): partitions, segments, "
        "modules, resources, shaders, warnings, timings per stage. Without FILE (as the last "
        "argument or before another option) each report goes next to its VGF as "
        "<stem>.report.json; with several models FILE is not allowed. '-': standard output.",
        kind="report",
        metavar="[FILE]",
        commands=("compile",),
    ),
    Option(
        "deps",
        ("-MD", "-MMD"),
        "Also write a dependency file, as gcc does: a Make rule naming every file the compile "
        "read (the model, kernel libraries, shader files, each #include opened), next to the "
        "VGF as <output without its suffix>.d (OUTDIR/<stem>.d in batch mode). make, ninja "
        "(deps = gcc) and CMake (DEPFILE) read it.",
        default=False,
        commands=("compile",),
    ),
    Option(
        "depfile",
        ("-MF",),
        "Write the dependency file to FILE (implies -MD, or with -M where the rule goes). One "
        "MODEL only.",
        kind="file",
        metavar="FILE",
        commands=("compile",),
    ),
    Option(
        "deps_target",
        ("-MT",),
        "The target of the dependency file's rule, written as given (default: the VGF's path "
        "as -o names it, escaped for Make).",
        kind="text",
        metavar="TARGET",
        commands=("compile",),
    ),
    Option(
        "deps_phony",
        ("-MP",),
        "Also write an empty rule for each dependency but the model, so that make does not "
        "fail when an include is deleted.",
        default=False,
        commands=("compile",),
    ),
    Option(
        "deps_only",
        ("-M", "-MM"),
        "Print the dependency rule of the compile (as -MD writes it: the model, kernel "
        "libraries, shader files, each #include opened) to standard output, or to -MF FILE, "
        "and write nothing else: no VGF, no report. The shaders are still compiled, as that "
        "is how their includes are found. -MM is the same: vgfc has no system include "
        "folders to leave out.",
        default=False,
        commands=("compile",),
    ),
    Option(
        "keep_source",
        ("--keep-source",),
        "Store GLSL/HLSL source in compute modules instead of the compiled SPIR-V "
        "(the shaders are still compiled and checked).",
        default=False,
        commands=("compile",),
        into="keep_source",
    ),
    Option(
        "jobs",
        ("-j", "--jobs"),
        "Compile up to N models at once, each in a worker process (0: one per CPU). "
        "Results are printed in the order of the models, and the files are the same.",
        kind="count",
        default=1,
        metavar="N",
        commands=("compile",),
        batch=True,
        show_default=True,
    ),
    Option(
        "as_json",
        ("--json",),
        "Print a JSON list with one entry per model (schemas/compile.schema.json) instead "
        "of the summary: result, files written, operators, segments, bytes, seconds, "
        "diagnostics. Implies batch mode.",
        default=False,
        commands=("compile",),
        batch=True,
    ),
    Option(
        "flatbuffer_output",
        ("-o", "--output"),
        "TOSA flatbuffer file to write, atomically (default: MODEL with the suffix .tosa; "
        "'-': standard output).",
        kind="file",
        commands=("translate",),
    ),
    Option(
        "tosa_flatbuffer",
        ("--tosa-flatbuffer",),
        "Write the TOSA flatbuffer of the model read (MLIR as tosa-opt serialises it), as "
        "`vgfc translate` does, instead of a VGF.",
        default=False,
        commands=("model-converter",),
    ),
    Option(
        "tosa_flatbuffer_schema",
        ("--tosa-flatbuffer-schema",),
        "With --tosa-flatbuffer, write the flatbuffer's JSON form instead, with this TOSA "
        "flatbuffer schema (tosa.fbs), as the reference converter does; a file tosa-opt "
        "cannot read as a schema is an error.",
        kind="file",
        metavar="VAR",
        commands=("model-converter",),
    ),
    Option(
        "analysis",
        ("--analysis", "--experimental-analysis"),
        "Also print one line per operator: 'Successfully lowered: tosa.OP at LOC (op #N, graph "
        "partition P)' or 'Failed to lower: ...: WHY', going on past every failure "
        "(vgfc-model-converter: on standard error, as the reference converter prints its "
        "analysis; the VGF is still written when nothing failed).",
        default=False,
        commands=("check", "model-converter"),
    ),
    Option(
        "allow_reference_imports",
        ("--allow-reference-imports",),
        "Let a kernel library's `reference: module:function` import any module on the Python "
        "path (its code runs) for the custom ops it checks, not only a Python file shipped in "
        "the library's own folder. Give it only for libraries you trust as code.",
        default=False,
        commands=("verify",),
    ),
    Option(
        "quiet",
        ("-q", "--quiet"),
        "Print nothing but errors and warnings (and the --json list).",
        default=False,
        commands=("compile",),
    ),
    Option(
        "diagnostics_format",
        ("--diagnostics-format",),
        "text: errors and warnings as lines on stderr, in gcc's form (FILE:LINE:COL: error: "
        "...). sarif: instead, one SARIF 2.1.0 log of them on stderr as the command ends, for "
        "code-scanning upload (2> vgfc.sarif).",
        kind="choice",
        default="text",
        choices=DIAGNOSTICS_FORMATS,
        commands=("compile", "check", "partition", "verify", "kernels"),
        show_default=True,
    ),
    Option(
        "color",
        ("--color",),
        "Colour errors, warnings and tables: always, never, or auto (on a terminal only, "
        "never with NO_COLOR set, always with FORCE_COLOR or CLICOLOR_FORCE set). Without "
        "colour no escape sequence at all is printed.",
        kind="choice",
        default="auto",
        choices=COLOUR_MODES,
        metavar="WHEN",
        commands=("compile", "check", "partition", "verify", "kernels", "run"),
        show_default=True,
    ),
    # What changes a compile.
    Option(
        "target",
        ("--target",),
        "The runtime the VGF is for. executorch: also hold the file to the rules of "
        "ExecuTorch's Arm VGF runtime (SPIR-V in every module, one descriptor set per segment, "
        "tensors only in graph segments, ...), each violation an error with the way out.",
        kind="choice",
        default="scenario-runner",
        choices=TARGET_NAMES,
        into="target",
        show_default=True,
    ),
    Option(
        "kernels",
        ("--kernels",),
        "Kernel library for custom ops that carry no shader: a YAML file "
        "(schemas/kernel_library.schema.json) or a bundled one by name (mediapipe). "
        "Repeatable; the first library with an entry for an op wins.",
        kind="names",
        default=(),
        metavar="LIB",
        into="kernels",
    ),
    Option(
        "custom_opcodes",
        ("--custom-op-domain-to-opcode",),
        "Compile every CUSTOM op of DOMAIN into its graph partition as the reference converter "
        "does: OpExtInst of Arm.ExperimentalMLOperations.1, instruction 0 (CALL), whose first "
        f"operand is the literal N (0 to {OPCODE_MAX}), then the op's name, its "
        "implementation_attrs and its inputs; the runtime must implement it. Repeatable, one "
        "DOMAIN each; it wins over a kernel library's entries for DOMAIN.",
        kind="opcodes",
        default=(),
        metavar="DOMAIN:N",
        into="custom_opcodes",
    ),
    Option(
        "bespoke",
        ("--enable-bespoke",),
        f"Compile CUSTOM ops of {BESPOKE_DOMAIN} as --custom-op-domain-to-opcode "
        f"{BESPOKE_DOMAIN}:0 does.",
        default=False,
        into="bespoke",
    ),
    Option(
        "debug_info",
        ("--emit-debug-info",),
        "Graph modules also carry the reference converter's NonSemantic.Graph.DebugInfo.1 "
        "instructions (SPV_KHR_non_semantic_info): the graph's name and, for its inputs, "
        "outputs and operations, the TOSA locations the model stored; the VGF computes the "
        "same.",
        default=False,
        into="debug_info",
    ),
    Option(
        "auto_convert",
        ("--no-auto-convert",),
        "Refuse a kernel that needs its operands converted (CAST, TRANSPOSE, channel "
        "padding) instead of inserting the conversions.",
        default=True,
        into="auto_convert",
        off=True,
    ),
    Option(
        "optimize",
        ("-O0",),
        "Turn off the graph passes that fold constants and remove operators that compute "
        "nothing or the same thing twice (docs/commands.md): the graph is lowered as the "
        "model wrote it, control flow aside.",
        default=True,
        into="optimize",
        off=True,
    ),
    Option(
        "type_narrowing",
        ("--type-narrowing",),
        "Make the model's FP32 tensors and constants FP16, as the reference converter does "
        "(docs/commands.md): full also makes the accumulators of convolutions and AVG_POOL2D "
        "FP16, partial keeps them FP32. The VGF's FP32 inputs and outputs become FP16. "
        "'vgfc verify --type-narrowing MODE' shows what it costs in error.",
        kind="choice",
        default="none",
        choices=NARROWING_MODES,
        metavar="none|full|partial",
        into="type_narrowing",
        show_default=True,
    ),
    Option(
        "dump_mlir",
        ("--dump-mlir",),
        "Print on standard error the model read as TOSA MLIR (tosa-opt prints the flatbuffer), "
        "under the reference converter's 'IR Dump Before' header naming vgfc's first pass, "
        "then after each pass that changed the graph one comment line per operator it "
        "changed (docs/commands.md).",
        default=False,
        into="dump_mlir",
    ),
    Option(
        "replicated_composites",
        ("--disable-replicated-composites",),
        "Spell out constants of equal elements, so that no graph module needs "
        "VK_EXT_shader_replicated_composites (a shader's own SPIR-V that does is an error).",
        default=True,
        commands=("model-converter",),
        into="replicated_composites",
        off=True,
    ),
    Option(
        "warnings",
        ("-W",),
        "Govern warnings as gcc does, left to right, the last word about a name winning: "
        "-Wno-NAME silences warning NAME, -WNAME turns it back on, -Werror makes every "
        "warning an error (the compile fails and writes nothing), -Werror=NAME only NAME, "
        "-Wno-error=NAME keeps NAME a warning. Each warning ends with its [-WNAME]; the "
        "names: docs/commands.md.",
        kind="warnings",
        default=(),
        metavar="[no-]NAME|[no-]error[=NAME]",
        commands=_WARNING,
        into="warnings",
    ),
    Option(
        "hide_warnings",
        ("-w", "--no-warnings"),
        "Show no warning (nor make any an error under -Werror).",
        default=False,
        commands=_WARNING,
        into="hide_warnings",
    ),
    # The shader front end's.
    Option(
        "include_dirs",
        ("-I", "--include-dir"),
        "Directory searched by #include in shaders (repeatable).",
        kind="dirs",
        default=(),
        commands=_SHADING,
        into="shader.include_dirs",
    ),
    Option(
        "defines",
        ("-D", "--define"),
        "Preprocessor definition for GLSL/HLSL shaders (repeatable).",
        kind="defines",
        default=(),
        metavar="NAME[=VALUE]",
        commands=_SHADING,
        into="shader.defines",
    ),
    Option(
        "target_env",
        ("--target-env",),
        "Vulkan environment the VGF is for: shaders are compiled to the newest SPIR-V it "
        "accepts (1.0, 1.3, 1.5, 1.6, 1.6 for vulkan1.0 to vulkan1.4) and validated for it; "
        "ML partitions need vulkan1.3 or newer.",
        kind="choice",
        default="vulkan1.3",
        choices=TARGET_ENVS,
        commands=_SHADING,
        into="shader.target_env",
        show_default=True,
    ),
    Option(
        "shader_timeout",
        ("--shader-timeout",),
        "Seconds of CPU time the compile of one GLSL/HLSL shader may use (default 5). Each "
        "compiles in a worker process, killed when its compile has used that much CPU time "
        "(neither the worker's start nor waiting for a CPU on a busy machine counts) or, as a "
        "backstop for a compile that stops without ending, after ten times that plus a minute "
        "of wall time; it may use at most --shader-memory more memory. 0: no limits, compiled "
        "in vgfc's own process.",
        kind="seconds",
        default=5.0,
        metavar="SECONDS",
        commands=_SHADING,
        into="shader.timeout",
    ),
    Option(
        "shader_memory",
        ("--shader-memory",),
        "MiB of memory the worker compiling one GLSL/HLSL shader may add (default 2048); "
        "0: no cap. A shader that needs more fails with an error that says so.",
        kind="count",
        default=2048,
        maximum=1 << 30,  # 1 PiB: past any address space (and the kernel's limit's range)
        metavar="MIB",
        commands=_SHADING,
        into="shader.memory_mib",
    ),
    Option(
        "cache",
        ("--no-cache",),
        "Compile every shader afresh, without reading or writing the shader cache "
        "(compiled, validated shaders kept under $VGFC_CACHE_DIR/shaders, else the user cache "
        "folder).",
        default=True,
        commands=_SHADING,
        into="shader.cache",
        off=True,
    ),
)
"""Every option, in the order ``--help`` lists them."""

DEFAULTS: Mapping[str, Any] = {o.name: o.default for o in OPTIONS}
"""Each option's default, by name: the defaults of the records the values go into."""


def options_of(command: str, *, compiling: bool | None = None) -> tuple[Option, ...]:
    """The options ``command`` takes, in table order; with ``compiling`` only the compile
    options (True) or only the command's own (False)."""
    return tuple(
        o
        for o in OPTIONS
        if command in o.commands and (compiling is None or compiling == (o.into is not None))
    )


def flag(name: str) -> str:
    """The long flag of option ``name``, for messages that tell the user which one to change."""
    return next(o.flags[-1] for o in OPTIONS if o.name == name)


def compile_values(command: str, params: Mapping[str, Any]) -> dict[str, Any]:
    """The compile options' values, by name, from the parameters of ``command``'s command line
    (a flag that turns an option off gives the opposite value)."""
    return {
        o.name: (not params[o.param]) if o.off else params[o.param]
        for o in options_of(command, compiling=True)
    }
