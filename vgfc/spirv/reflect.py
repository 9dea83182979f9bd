"""What a SPIR-V module asks of its pipeline: entry points, local size, bindings, push constants,
and the element type each resource is read as (:func:`reflect`).

Which resources count: those the entry point statically uses, i.e. that an instruction in a
function of its call tree refers to. The ``OpEntryPoint`` interface cannot tell: before SPIR-V
1.4 it holds only inputs and outputs, and from 1.4 on glslang lists every declared global there,
used or not.

The module is read into an index by :mod:`vgfc.spirv.reflect_index`; each resource is described
by :mod:`vgfc.spirv.reflect_resources`, into the records of :mod:`vgfc.spirv.reflect_records`.
"""

from __future__ import annotations

from vgfc.diagnostics import Location, ShaderError, did_you_mean
from vgfc.spirv.grammar import core_grammar
from vgfc.spirv.reflect_index import ModuleIndex, index_module
from vgfc.spirv.reflect_records import ResourceBinding, ShaderInfo
from vgfc.spirv.reflect_resources import block_size, resource_binding

__all__ = ["reflect"]


def reflect(spirv: bytes, entry_point: str | None = None) -> ShaderInfo:
    """Entry points, local size, descriptor bindings and push-constant size of a module.

    ``entry_point`` picks the ``OpEntryPoint`` whose resources and local size are reported; by
    default the first GLCompute one (else the first of any model). A module without entry
    points (such as a graph module) reports every resource it declares.
    Malformed input raises :class:`ShaderError`.
    """
    module = index_module(spirv)
    function = _entry_function(module, entry_point)
    try:
        return _reflect(module, function)
    except (IndexError, RecursionError):
        # Operands that contradict their types (a matrix of scalars, a struct containing
        # itself); validate() names the exact problem.
        raise ShaderError("malformed SPIR-V: types do not fit together") from None


def _reflect(module: ModuleIndex, function: int | None) -> ShaderInfo:
    used = _used_variables(module, function)
    bindings: list[ResourceBinding] = []
    unused: list[ResourceBinding] = []
    push_sizes: list[int] = []
    for var_id, (pointer, storage) in module.variables.items():
        is_used = used is None or var_id in used
        op, operands = module.type(pointer)
        if op != "OpTypePointer":
            raise ShaderError(f"malformed SPIR-V: variable %{var_id} does not have a pointer type")
        if storage == "PushConstant" and is_used:
            push_sizes.append(block_size(module, operands[1]))
        elif storage in ("Uniform", "StorageBuffer", "UniformConstant"):
            binding = resource_binding(module, var_id, operands[1], storage)
            if binding is not None:
                (bindings if is_used else unused).append(binding)
    return ShaderInfo(
        entry_points=tuple((name, model) for name, model, _ in module.entries),
        local_size=_local_size(module, function),
        bindings=tuple(sorted(bindings, key=lambda b: (b.set, b.binding))),
        unused=tuple(sorted(unused, key=lambda b: (b.set, b.binding))),
        push_constant_size=max(push_sizes) if push_sizes else None,
        spirv_version=module.version,
    )


def _entry_function(module: ModuleIndex, wanted: str | None) -> int | None:
    if wanted is None:
        compute = [f for _, model, f in module.entries if model == "GLCompute"]
        functions = compute or [f for _, _, f in module.entries]
        return functions[0] if functions else None
    for name, _, function in module.entries:
        if name == wanted:
            return function
    names = [name for name, _, _ in module.entries]
    raise ShaderError(
        f"entry point '{wanted}' not found in the module "
        f"(it has: {', '.join(names) or 'no entry points'}){did_you_mean(wanted, names)}",
        Location(key="entry_point"),
    )


def _used_variables(module: ModuleIndex, function: int | None) -> set[int] | None:
    """Global variables the call tree of ``function`` refers to; ``None`` means all."""
    if function is None:
        return None
    seen, todo, used = {function}, [function], set()
    while todo:
        ids = module.uses.get(todo.pop(), set())
        used |= ids & module.variables.keys()
        for callee in (ids & module.uses.keys()) - seen:
            seen.add(callee)
            todo.append(callee)
    return used


def _local_size(module: ModuleIndex, function: int | None) -> tuple[int, int, int] | None:
    # A WorkgroupSize constant overrides the execution modes (SPIR-V spec, BuiltIn).
    for target, decorations in module.decorations.items():
        builtin = decorations.get("BuiltIn", [-1])[0]
        if (
            core_grammar().name("BuiltIn", builtin) == "WorkgroupSize"
            and target in module.composites
        ):
            return _constants(module, module.composites[target])
    if function is None:
        return None
    if (function, "LocalSizeId") in module.modes:
        return _constants(module, module.modes[function, "LocalSizeId"])
    literal = module.modes.get((function, "LocalSize"), [])
    return (literal[0], literal[1], literal[2]) if len(literal) == 3 else None


def _constants(module: ModuleIndex, ids: list[int]) -> tuple[int, int, int] | None:
    """Values of three constant ids; ``None`` when one is computed (OpSpecConstantOp)."""
    if len(ids) != 3 or not set(ids) <= module.constants.keys():
        return None
    return (module.constants[ids[0]], module.constants[ids[1]], module.constants[ids[2]])
