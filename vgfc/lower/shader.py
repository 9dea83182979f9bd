"""A shader partition -> a compute module: a resolved op's
:class:`~vgfc.resolve.attrs.ShaderSpec` compiled and checked into a :class:`ShaderModule`.

Compile (GLSL/HLSL) or decode (SPIR-V), validate every module with SPIRV-Tools and reflect it
(:mod:`vgfc.shader.build`, through the shader cache), then hold the declaration up against the
reflection: every declared resource must exist in the shader with the same descriptor kind, every
shader resource must be declared, results must be writable, each resource must be read as the
element type the tensor holds (:mod:`vgfc.lower.elements`), the push-constant layout must match
the shader's block. Then derive what the VGF needs: the dispatch shape (workgroup counts) and the
push-constant ranges.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from vgfc.diagnostics import Diagnostic, Location, Severity, ShaderError
from vgfc.ir import Graph, Operator, ShaderResource, ShaderSpec
from vgfc.limits import LIMITS
from vgfc.lower.elements import check_elements, code_name
from vgfc.record import record, replace
from vgfc.shader.build import CompiledShader, ShaderRequest, build_shader
from vgfc.shader.options import CompileOptions
from vgfc.spirv.reflect_records import ResourceBinding, ShaderInfo
from vgfc.vgf.model import COMPUTE_STAGE, PushConstantRange

__all__ = ["KIND_OF_DESCRIPTOR", "ShaderModule", "lower_shader", "shader_request"]

# Reflected resource kind each declared descriptor type must have (also for kernel libraries).
KIND_OF_DESCRIPTOR = {
    "VK_DESCRIPTOR_TYPE_STORAGE_BUFFER": "storage_buffer",
    "VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER": "uniform_buffer",
    "VK_DESCRIPTOR_TYPE_STORAGE_IMAGE": "storage_image",
    "VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE": "sampled_image",
    "VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER": "combined_image_sampler",
    "VK_DESCRIPTOR_TYPE_TENSOR_ARM": "tensor",
}


@record
class ShaderModule:
    """A shader op ready for emission."""

    op: Operator
    spec: ShaderSpec
    spirv: bytes | None
    """The validated SPIR-V binary; ``None`` for a code-less placeholder."""
    info: ShaderInfo | None
    dispatch: tuple[int, int, int]
    """Workgroup counts for vkCmdDispatch."""
    push_constant_ranges: tuple[PushConstantRange, ...]
    warnings: tuple[Diagnostic, ...] = ()
    includes: tuple[str, ...] = ()
    """The files the shader's ``#include`` directives opened."""


def lower_shader(
    spec: ShaderSpec,
    op: Operator,
    graph: Graph,
    options: CompileOptions | None = None,
    *,
    build: Callable[[ShaderRequest], CompiledShader] = build_shader,
) -> ShaderModule:
    """Compile, validate, reflect and cross-check one shader op. Raises :class:`ShaderError`.

    ``build`` turns the op's :func:`shader_request` into the validated module and its
    reflection (default: :func:`~vgfc.shader.build.build_shader`, through the shader cache);
    :func:`vgfc.lower.lower` passes the results it built for all shader ops at once."""
    options = options or CompileOptions()
    where = op.where(graph.source)
    request = shader_request(spec, options)
    if request is None:
        return _placeholder(spec, op, where)
    try:
        compiled = build(request)
    except ShaderError as e:
        raise e.at(Location(key="shader_code").merged(where)) from None
    spirv, info = compiled.spirv, compiled.info
    warnings: list[Diagnostic] = []
    _cross_check(spec, info, where, warnings)
    warnings.extend(
        check_elements(spec, {(b.set, b.binding): b for b in info.bindings}, graph, where)
    )
    dispatch = _dispatch(spec, info, graph, where, warnings)
    ranges = (
        (PushConstantRange(COMPUTE_STAGE, 0, spec.push_constant_size),)
        if spec.push_constants
        else ()
    )
    return ShaderModule(op, spec, spirv, info, dispatch, ranges, tuple(warnings), compiled.includes)


def shader_request(spec: ShaderSpec, options: CompileOptions) -> ShaderRequest | None:
    """What building ``spec``'s shader takes: its code and the options with the op's own
    definitions and include folders first; ``None`` for a code-less placeholder."""
    if spec.language == "SPIR-V":
        if spec.spirv is None:
            return None
        # Only validation (target environment) and reflection (entry point) read a binary.
        plain = replace(options, defines=(), include_dirs=())
        return ShaderRequest(spec.language, spec.spirv, spec.entry_point, plain)
    if spec.language is None or spec.code is None:
        return None
    if spec.defines or spec.include_dirs:
        options = replace(
            options,
            defines=spec.defines + options.defines,
            include_dirs=spec.include_dirs + options.include_dirs,
        )
    return ShaderRequest(spec.language, spec.code, spec.entry_point, options)


def _placeholder(spec: ShaderSpec, op: Operator, where: Location) -> ShaderModule:
    if spec.workgroup_counts is None:
        raise ShaderError(
            "a shader without code needs workgroup_sizes: global_size needs the shader's "
            "local size",
            Location(key="global_size").merged(where),
        )
    note = Diagnostic(
        Severity.WARNING,
        "no shader code: the module is a placeholder that a runtime must replace",
        Location(key="shader_code").merged(where),
        name="placeholder-shader",
    )
    return ShaderModule(op, spec, None, None, spec.workgroup_counts, (), (note,))


def _describe(b: ResourceBinding) -> str:
    name = f" '{b.name}'" if b.name else ""
    return f"set {b.set} binding {b.binding} ({b.kind}{name})"


def _declared(spec: ShaderSpec, line: int | None) -> tuple[str, tuple[str, ...]]:
    """`` (declared at shader_code:N)`` and source line N as an excerpt; nothing when the
    declaration was not found (a SPIR-V binary, a binding given by a macro, an include)."""
    from vgfc.shader.messages import source_excerpt  # its patterns: only for messages

    if spec.code is None or line is None:
        return "", ()
    return f" (declared at {code_name(spec)}:{line})", source_excerpt(spec.code, line)


def _binding_line(spec: ShaderSpec, set_: int, binding: int) -> tuple[str, tuple[str, ...]]:
    """:func:`_declared` for the source line that declares descriptor ``set_``/``binding``."""
    from vgfc.shader.messages import declaration

    if spec.code is None or spec.language is None:
        return "", ()
    return _declared(spec, declaration(spec.code, spec.language, set_, binding))


def _pattern_line(spec: ShaderSpec, pattern: re.Pattern[str]) -> tuple[str, tuple[str, ...]]:
    """:func:`_declared` for the one source line where ``pattern`` occurs."""
    from vgfc.shader.messages import only_line

    if spec.code is None:
        return "", ()
    return _declared(spec, only_line(spec.code, pattern))


_PUSH_CONSTANT = re.compile(r"\bpush_constant\b")


def _binding_key(r: ShaderResource, where: Location) -> Location:
    """``where`` narrowed to ``r``'s binding key (made only for a diagnostic)."""
    return Location(key=f"{r.key}_binding").merged(where)


def _cross_check(
    spec: ShaderSpec, info: ShaderInfo, where: Location, out: list[Diagnostic]
) -> None:
    reflected = {(b.set, b.binding): b for b in info.bindings}
    unused = {(b.set, b.binding): b for b in info.unused}
    declared: dict[tuple[int, int], ShaderResource] = {}
    for r in spec.resources:
        declared[(r.set, r.binding)] = r
        b = reflected.get((r.set, r.binding))
        idle = unused.get((r.set, r.binding))
        if b is None and idle is not None:
            shown, excerpt = _binding_line(spec, r.set, r.binding)  # read only when reported
            # Legal Vulkan (the layout may bind more than the shader reads), and common: a
            # shader variant that ignores one of its operands. The value is bound and unread.
            out.append(
                Diagnostic(
                    Severity.WARNING,
                    f"the shader declares {_describe(idle)} for {r.key} (tensor '{r.tensor}') "
                    f"but never uses it{shown}",
                    _binding_key(r, where),
                    excerpt,
                    "unused-binding",
                )
            )
            continue
        if b is None:
            have = ", ".join(_describe(b) for b in info.bindings) or "no resources"
            raise ShaderError(
                f"declared at set {r.set} binding {r.binding}, but the shader has nothing "
                f"there (it has {have})",
                _binding_key(r, where),
            )
        want = KIND_OF_DESCRIPTOR[r.descriptor_type]
        if b.kind != want:
            shown, excerpt = _binding_line(spec, r.set, r.binding)  # read only when reported
            raise ShaderError(
                f"declared as {r.descriptor_type}, but the shader's {_describe(b)} is a "
                f"{b.kind}{shown}",
                Location(key=f"{r.key}_vkdescriptortype").merged(where),
                excerpt=excerpt,
            )
        if r.role == "input" and b.written:
            shown, excerpt = _binding_line(spec, r.set, r.binding)  # read only when reported
            raise ShaderError(
                f"the shader writes to {_describe(b)}, but it holds an input (tensor "
                f"'{r.tensor}'), which other readers share: write results to an output{shown}",
                _binding_key(r, where),
                excerpt=excerpt,
            )
        if r.role == "output" and not b.writable:
            shown, excerpt = _binding_line(spec, r.set, r.binding)  # read only when reported
            raise ShaderError(
                f"a result is bound to {_describe(b)}, which the shader declares read-only{shown}",
                _binding_key(r, where),
                excerpt=excerpt,
            )
    for key, b in reflected.items():
        if key not in declared:
            shown, excerpt = _binding_line(spec, b.set, b.binding)
            raise ShaderError(
                f"the shader uses {_describe(b)}, which no input_N/output_N declares{shown}",
                where,
                excerpt=excerpt,
            )
    shader_size = info.push_constant_size or 0
    if shader_size != spec.push_constant_size:
        declared_text = f"{spec.push_constant_size} bytes" if spec.push_constants else "none"
        shown, excerpt = _pattern_line(spec, _PUSH_CONSTANT) if shader_size else ("", ())
        raise ShaderError(
            f"declares {declared_text}, but the shader's push-constant block has "
            f"{shader_size} bytes{shown}",
            Location(key="push_constants").merged(where),
            excerpt=excerpt,
        )


def _dispatch(
    spec: ShaderSpec, info: ShaderInfo, graph: Graph, where: Location, out: list[Diagnostic]
) -> tuple[int, int, int]:
    local = info.local_size or (1, 1, 1)
    counts = spec.workgroup_counts
    if spec.global_size is not None:
        derived = (
            -(-spec.global_size[0] // local[0]),
            -(-spec.global_size[1] // local[1]),
            -(-spec.global_size[2] // local[2]),
        )
        if counts is not None and counts != derived:
            from vgfc.shader.messages import LOCAL_SIZE

            shown, excerpt = _pattern_line(spec, LOCAL_SIZE) if info.local_size else ("", ())
            raise ShaderError(
                f"workgroup_sizes {list(counts)} disagrees with global_size "
                f"{list(spec.global_size)} / local size {list(local)} = {list(derived)}{shown}",
                Location(key="workgroup_sizes").merged(where),
                excerpt=excerpt,
            )
        counts = derived
    assert counts is not None  # the schema requires one of the two
    given = spec.workgroup_counts is not None
    if where.origin is not None:  # a library kernel: its own keys, not the attributes'
        key = "dispatch.workgroups" if given else "dispatch.global"
        hint = (
            "dispatch.workgroups gives workgroup counts; dispatch.global gives invocations, "
            "which vgfc divides by the local size"
            if given
            else "dispatch.global gives the invocations wanted"
        )
    else:
        key = "workgroup_sizes" if given else "global_size"
        hint = (
            "workgroup_sizes holds workgroup counts; global_size lets vgfc derive them"
            if given
            else "global_size holds the invocations wanted"
        )
    out.extend(_portable_counts(counts, key, where))
    grid = tuple(c * n for c, n in zip(counts, local, strict=True))
    invocations = grid[0] * grid[1] * grid[2]
    short = _short_outputs(spec, info, graph, invocations, grid, local)
    if short:
        sizes = " and ".join(f"the {n} {unit} of {r.key} '{r.tensor}'" for r, n, unit in short)
        names = " and ".join(f"{r.key} '{r.tensor}'" for r, _, _ in short)
        out.append(
            Diagnostic(
                Severity.WARNING,
                f"the dispatch runs {invocations} invocations (workgroup counts "
                f"{list(counts)} x local size {list(local)}), fewer than {sizes}: unless each "
                f"invocation writes several, {names} will be partly unwritten ({hint})",
                Location(key=key).merged(where),
                name="short-dispatch",
            )
        )
    return counts


def _short_outputs(
    spec: ShaderSpec,
    info: ShaderInfo,
    graph: Graph,
    invocations: int,
    grid: tuple[int, ...],
    local: tuple[int, int, int],
) -> list[tuple[ShaderResource, int, str]]:
    """(output, units, unit name) for each output with more units than the dispatch has
    invocations: a unit is what one invocation writes: an element, a texel of an image (all C
    channels at once) or, where the shader reads the buffer as wider words or vectors
    (``uint`` over FP16, ``vec4`` over FP32), one word. An output whose pixel grid the
    invocation grid is (:func:`_pixel_grid`) is covered: each invocation writes its pixel's
    channels."""
    reflected = {(b.set, b.binding): b for b in info.bindings}
    # A shader that works on images runs one invocation per texel.
    per_texel = any(r.is_image for r in spec.resources)
    short = []
    for r in spec.outputs:
        tensor = graph.tensors[r.tensor]
        units = tensor.element_count
        if units is None:
            continue
        unit = "elements"
        if per_texel and tensor.shape:
            units //= max(tensor.shape[-1], 1)
            unit = "texels"
        b = reflected.get((r.set, r.binding))
        element = b.element if b is not None and not r.is_image else None
        width = tensor.dtype.storage_bits // 8
        if element is not None and width and element.size > width:
            units = -(-units // (element.size // width))
            unit = f"{element.text} words"
        if invocations < units and not _pixel_grid(tensor.shape, grid, local):
            short.append((r, units, unit))
    return short


def _pixel_grid(
    shape: tuple[int, ...] | None, grid: tuple[int, ...], local: tuple[int, int, int]
) -> bool:
    """Whether the invocation grid (x, y, z) is the pixel grid of a ``[..., H, W, C]`` tensor:
    x covers W and y covers H, each by less than one more workgroup (a grid sized for the
    pixels, rounded up), and z covers the axes before H. ``global_size: [8, 8, 1]`` over
    ``[1, 8, 8, 4]`` runs one invocation per pixel, each writing its 4 channels; nothing says
    that a grid of the same count laid out otherwise (``[64, 1, 1]``) was meant so."""
    if shape is None or len(shape) < 3:
        return False
    height, width = shape[-3], shape[-2]
    rest = 1
    for n in shape[:-3]:
        rest *= n
    return (
        width <= grid[0] < width + local[0]
        and height <= grid[1] < height + local[1]
        and grid[2] >= rest
    )


def _portable_counts(counts: tuple[int, int, int], key: str, where: Location) -> list[Diagnostic]:
    """A warning for a workgroup count above the ``maxComputeWorkGroupCount`` every Vulkan
    device supports: it runs only on devices that report a higher limit."""
    portable = LIMITS.workgroup_count_portable
    high = [f"{axis} = {n}" for axis, n in zip("xyz", counts, strict=True) if n > portable]
    if not high:
        return []
    return [
        Diagnostic(
            Severity.WARNING,
            f"workgroup counts {list(counts)} ({', '.join(high)}) go past {portable}, the "
            "maxComputeWorkGroupCount every Vulkan device supports: devices with a lower "
            "limit cannot run this dispatch",
            Location(key=key).merged(where),
            name="portable-workgroup-count",
        )
    ]
