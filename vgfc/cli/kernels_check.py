"""Check a kernel library without a model (``vgfc kernels LIB``).

Loading already checks the schema, every name an expression reads, resources, paths and composed
graphs (:mod:`vgfc.resolve.library`). This adds an entry's ``torch:`` schema, held to the entry
as ``vgfc.executorch.load`` holds it (without torch), and what needs the shaders: each kernel's
shader is compiled (GLSL/HLSL) or read (SPIR-V), validated with SPIRV-Tools and reflected, and
its declared resources are held against the reflection: every resource must exist in the shader
with the declared descriptor kind, and every descriptor the shader uses must be declared.
Results must be writable and inputs must not be written.

Without a model the defines have no operand shapes: each define is evaluated with the entry's
``example`` (parameter values and operand shapes), else with the parameters' defaults and every
dimension 1; a define that still cannot be evaluated is set to 1. A define that only makes sense
for real shapes is checked again at compile time.

Checking compiles shaders, which no step of resolving a model does, so it lives beside the
command (:mod:`vgfc.cli.kernels`) rather than in :mod:`vgfc.resolve`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from vgfc.diagnostics import Diagnostic, Location, Severity, VgfcError
from vgfc.record import record, replace
from vgfc.resolve.expr import ExprError, LimitError
from vgfc.resolve.library.records import DIMENSIONS, Entry, Kernel, Library
from vgfc.resolve.library.torch_schema import check_torch
from vgfc.resolve.library.values import dispatch_size

__all__ = ["KernelCheck", "check_library"]


@record
class KernelCheck:
    """The verdict on one kernel of an entry; ``kernel`` is ``None`` for a composed entry and for
    the verdict on an entry's ``torch`` schema (given only when it is wrong)."""

    entry: Entry
    kernel: Kernel | None
    local_size: tuple[int, int, int] | None
    error: Diagnostic | None
    torch: bool = False
    """The verdict on the entry's ``torch`` schema rather than on a kernel."""


def check_library(library: Library, options: Any = None) -> Iterator[KernelCheck]:
    """Check every kernel of ``library``; ``options`` are the shader
    :class:`~vgfc.shader.glslang.CompileOptions`."""
    for entry in library.entries.values():
        if entry.torch is not None:
            try:
                check_torch(entry)
            except VgfcError as e:  # as vgfc.executorch.load would refuse it
                yield KernelCheck(entry, None, None, e.diagnostic, torch=True)
        if entry.compose is not None:
            problem = _check_compose(entry)
            error = None
            if problem is not None:
                at = entry.where()
                where = Location(
                    file=at.file,
                    file_line=at.file_line,
                    file_column=at.file_column,
                    key=f"{entry.label}: compose: {problem[0]}",
                )
                error = Diagnostic(Severity.ERROR, problem[1], where)
            yield KernelCheck(entry, None, None, error)
            continue
        for kernel in entry.kernels:
            try:
                local = _check_kernel(entry, kernel, options)
            except VgfcError as e:
                d = e.diagnostic
                at = entry.where(kernel.line, kernel.column)
                at = Location(
                    file=at.file,
                    file_line=at.file_line,
                    file_column=at.file_column,
                    key=f"{entry.label}: {kernel.name}",
                )
                if d.location.key in (None, "shader_code") and d.location.line is not None:
                    # Where in the shader file: the first line starts there (gcc's form).
                    from vgfc.resolve.bind import shader_file

                    source = shader_file(entry.library, kernel.shader.path)
                    at = replace(
                        at,
                        key=f"{at.key}: {source.rsplit('/', 1)[-1]}",
                        line=d.location.line,
                        column=d.location.column,
                        # The line is in the shader file or, when set, a file it includes.
                        source=d.location.source or source,
                    )
                yield KernelCheck(
                    entry, kernel, None, Diagnostic(d.severity, d.message, at, d.excerpt, d.name)
                )
                continue
            yield KernelCheck(entry, kernel, local, None)


def _check_compose(entry: Entry) -> tuple[str, str] | None:
    """(key, message) for the first constant or attribute of a composed entry that cannot be
    built with the example's (or default) shapes and parameters: a value out of its type's
    range, NaN into an integer type, a shape too large, an attribute of the wrong kind."""
    from vgfc.dtypes import DType
    from vgfc.resolve.compose_check import kind_problem
    from vgfc.resolve.library.values import build_constant
    from vgfc.spirv.tosa_ops import TOSA_LOWERINGS, signature

    compose = entry.compose
    assert compose is not None
    scope = _sample_scope(entry)
    for name, constant in compose.constants.items():
        dtype = DType.SHAPE if constant.dtype == "SHAPE" else DType.__members__.get(constant.dtype)
        try:
            build_constant(constant, dtype or DType.FP32, scope)
        except ExprError as e:
            return f"constants.{name}", str(e)
    for k, op in enumerate(compose.ops):
        if op.op not in TOSA_LOWERINGS:
            continue
        kinds = signature(op.op).attributes
        for key, value in op.attrs.items():
            try:
                evaluated = _evaluated(value, scope)
            except ExprError as e:
                return f"ops[{k}].attrs.{key}", str(e)
            problem = kind_problem(evaluated, kinds[key]) if key in kinds else None
            if problem:
                return f"ops[{k}].attrs.{key}", f"{op.op} {key}: {problem}"
    return None


def _evaluated(value: Any, scope: dict[str, Any]) -> Any:
    """An attribute's value as the expansion computes it (expressions evaluated), kept as an
    expression so that the checks read it as they read a literal."""
    from vgfc.resolve.compose import attr_value
    from vgfc.resolve.expr import Expr

    if isinstance(value, tuple):
        return tuple(_evaluated(v, scope) for v in value)
    if isinstance(value, Expr):
        out = attr_value(value, scope)
        return Expr(repr(out), None, out)
    return value


def _sample_scope(entry: Entry) -> dict[str, Any]:
    shapes = entry.example.get("shapes") or {}
    scope: dict[str, Any] = {n: tuple(shapes.get(n, (1, 1, 1, 1))) for n in entry.operands}
    scope.update(dict.fromkeys(DIMENSIONS, 1))
    first = scope[entry.outputs[0]]
    if len(first) == 4:
        scope.update(zip(DIMENSIONS, first, strict=True))
    elif len(first) == 3:
        scope.update(zip(DIMENSIONS[1:], first, strict=True))
    given = entry.example.get("params") or {}
    for f in entry.params.fields:
        if f.name in given:
            value = given[f.name]
            scope[f.name] = tuple(value) if isinstance(value, list) else value
            continue
        if f.has_default:
            scope[f.name] = f.default
        elif f.values:
            scope[f.name] = next(iter(f.values.values()))
        elif f.type == "str":
            scope[f.name] = ""
        else:
            scope[f.name] = (1,) * f.count if f.count else 1
    return scope


def _check_kernel(entry: Entry, kernel: Kernel, options: Any) -> tuple[int, int, int] | None:

    from vgfc.diagnostics import ShaderError
    from vgfc.lower.shader import KIND_OF_DESCRIPTOR
    from vgfc.resolve.bind import _define_text, read_shader
    from vgfc.shader.glslang import CompileOptions, Language, compile_shader
    from vgfc.spirv.reflect import reflect
    from vgfc.spirv.spirv_tools import validate

    options = options or CompileOptions()
    shader = kernel.shader
    scope = _sample_scope(entry)
    defines = []
    for name, expr in shader.defines:
        try:
            defines.append((name, _define_text(expr.evaluate(scope))))
        except LimitError as e:  # wrong whatever the shapes are
            raise ShaderError(f"defines.{name}: {e}") from None
        except ExprError:
            defines.append((name, "1"))
    binary, code = read_shader(kernel, Location())
    if binary is not None:
        spirv = binary
    else:
        assert code is not None
        opts = replace(
            options,
            defines=tuple(defines) + options.defines,
            include_dirs=tuple(str(d) for d in shader.include_dirs) + options.include_dirs,
        )
        spirv = compile_shader(code, Language(shader.language), shader.entry_point, opts)
    validate(spirv, options.target_env)
    info = reflect(spirv, shader.entry_point)
    reflected = {(b.set, b.binding): b for b in (*info.bindings, *info.unused)}
    declared = {}
    for name, r in kernel.resources.items():
        declared[(r.set, r.binding)] = name
        b = reflected.get((r.set, r.binding))
        if b is None:
            have = ", ".join(f"set {s} binding {n}" for s, n in sorted(reflected)) or "none"
            raise ShaderError(
                f"resources.{name}: declared at set {r.set} binding {r.binding}, but "
                f"{shader.path.name} has nothing there (it has {have})"
            )
        want = KIND_OF_DESCRIPTOR[r.descriptor]
        if b.kind != want:
            raise ShaderError(
                f"resources.{name}: declared as {r.descriptor}, but {shader.path.name} has a "
                f"{b.kind} at set {r.set} binding {r.binding}"
            )
        if name in entry.outputs and not b.writable:
            raise ShaderError(
                f"resources.{name}: an output, but {shader.path.name} declares set {r.set} "
                f"binding {r.binding} read-only"
            )
        if name in entry.inputs and b.written:
            raise ShaderError(
                f"resources.{name}: an input, but {shader.path.name} writes set {r.set} "
                f"binding {r.binding}"
            )
    for key, b in sorted(reflected.items()):
        if key not in declared and b in info.bindings:
            raise ShaderError(
                f"{shader.path.name} uses set {key[0]} binding {key[1]}, which no resource declares"
            )
    from vgfc.lower.elements import check_kernel_elements

    check_kernel_elements(kernel, entry.operands, len(entry.inputs), info)
    if info.push_constant_size:
        raise ShaderError(
            f"{shader.path.name} has a push-constant block: a VGF carries no push-constant "
            "values for kernels, pass parameters as defines"
        )
    try:
        for size in kernel.global_size or kernel.workgroups or ():
            dispatch_size(size, scope)
    except ExprError as e:
        raise ShaderError(f"dispatch: {e}") from None
    return info.local_size
