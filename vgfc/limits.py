"""The one table of limits vgfc holds its input to, and how user text is shown in messages.

vgfc reads hostile files. Every number a model gives is checked against a range before a later
stage relies on it (the VGF encoder takes 32-bit integers; numpy and the flatbuffer reader must
never be asked for a shape that cannot exist), every string against a length, and the JSON of a
custom shader op against a nesting depth and a number length before Python's parser sees it. The
stage that reads a value checks it and names the op, the key and the limit in its error. The
README's "Limits" section lists each limit and where it is checked.

Messages never echo user text whole: :func:`quote` cuts a value to its first characters, and
:mod:`vgfc.diagnostics` cuts location fields and whole messages, so one error stays one short line
whatever the input holds.
"""

from __future__ import annotations

import re

from vgfc.record import record

__all__ = ["LIMITS", "UINT32_MAX", "Limits", "clip", "quote"]

UINT32_MAX = 0xFFFF_FFFF


@record
class Limits:
    """Every limit on the input, with the reason for its value."""

    # -- Vulkan and VGF ranges: custom shader attributes (vgfc/resolve/attrs.py) ----------------
    descriptor_set_max: int = UINT32_MAX
    """Largest ``input_N_descriptorset``: the VGF stores set indices as uint32. (Vulkan only
    guarantees ``maxBoundDescriptorSets`` >= 4; a device reports its own.)"""
    binding_max: int = UINT32_MAX
    """Largest ``input_N_binding``: ``VkDescriptorSetLayoutBinding.binding`` is a uint32."""
    push_constant_bytes_max: int = 4096
    """Most bytes ``push_constants`` may declare, and so the end of the last member's offset.
    Vulkan guarantees ``maxPushConstantsSize`` >= 128 and desktop GPUs report 256; 4096 is a hard
    cap far above any device, so sizes and offsets stay small 32-bit numbers."""
    workgroup_count_max: int = UINT32_MAX
    """Largest ``workgroup_sizes`` entry: ``vkCmdDispatch`` takes uint32 counts."""
    workgroup_count_portable: int = 65535
    """``maxComputeWorkGroupCount`` every Vulkan device supports in each dimension. A count above
    it is a warning (where the dispatch is derived, vgfc/lower/shader.py), not an error."""
    global_size_max: int = UINT32_MAX
    """Largest ``global_size`` entry: invocation ids (``gl_GlobalInvocationID``) are uint32."""

    # -- running a VGF (vgfc/runner/inputs.py) -------------------------------------------------
    run_workgroups_max: int = 1 << 22
    """Workgroups one compute segment of a VGF may dispatch for ``vgfc run``/``verify``
    (x * y * z). lavapipe runs them on the CPU's cores, a few million a second at best for an
    empty shader, so a file patched to 65535 x 65535 x 64 would run for days; the largest
    dispatch of a real model (a 4096 x 4096 image at 8 x 8 invocations per workgroup) is
    262144, 16 times below. ``--timeout`` bounds the rest."""

    # -- JSON of implementation_attrs (vgfc/resolve/attrs.py) -----------------------------------
    attrs_bytes_max: int = 8 << 20
    """Size of ``implementation_attrs``: room for the largest shader source and its keys."""
    json_depth_max: int = 64
    """Nesting of JSON arrays and objects. vgfc's own keys nest 2 deep; Python's parser recurses
    and fails near 1000. Checked by a scan of the bytes before ``json.loads`` runs."""
    json_number_length_max: int = 64
    """Characters of one JSON number (a 64-bit integer has 20; Python refuses to convert integers
    of more than 4300 digits)."""

    # -- strings -------------------------------------------------------------------------------
    name_length_max: int = 1024
    """Characters of a name: tensor names, ``operator_name`` and ``domain_name`` (read in
    vgfc/read/reader.py), and in ``implementation_attrs`` every key and the values of
    ``entry_point``, ``shader_language``, ``push_constants``, formats, descriptor types, kinds and
    sampler fields. Module names come from ``operator_name`` and end up in the VGF and on the
    terminal."""
    shader_code_length_max: int = 4 << 20
    """Characters of ``shader_code``: GLSL/HLSL source, or base64 of 3 MiB of SPIR-V."""

    # -- tensors (vgfc/read/reader.py) ---------------------------------------------------------
    rank_max: int = 32
    """Dimensions of a tensor. TOSA's 8K level allows 6; 32 is far above any real model."""
    shape_values_max: int = 64
    """Values of a shape value (``shapes`` table, CONST_SHAPE): at most two per dimension (PAD's
    padding), so twice ``rank_max``."""
    elements_max: int = 1 << 32
    """Elements of one tensor (product of its static dimensions): at most 32 GiB at 8 bytes each,
    and every element count fits in an int64, so numpy never sees an overflowing shape."""

    # -- control flow (vgfc/control_flow.py) -------------------------------------------------
    loop_trips_max: int = 1024
    """Trips a WHILE_LOOP is unrolled for; a longer loop is refused."""
    written_out_ops_max: int = 1 << 20
    """Operators that writing out control flow (if-conversion, unrolling, nesting) may add to a
    graph: a loop of a large body, or branches nested in loops, cannot grow it without end."""

    # -- constant folding (vgfc/passes/fold.py) ------------------------------------------------
    folded_constant_bytes_max: int = 16 << 20
    """Bytes of one constant that folding may make: a larger result is left for the GPU to
    compute, so that folding never holds more than this much beside the model's own constants
    (which stay mapped from the file) nor grows a VGF by more than this per operator."""

    folded_growth_bytes_max: int = 0
    """Bytes a fold may add beyond the constants it reads (shape values aside): widening FP16
    weights to FP32 or tiling a constant would save a GPU operator but grow the VGF, which a
    user ships and loads; past this the operator is left for the GPU. At 1 KiB the widened
    biases of real TFLite networks grew their VGFs by 3-5%: 0, a fold never grows one."""

    # -- files vgfc reads (vgfc/files/inputs.py: checked with stat before a byte is read) ---------
    library_bytes_max: int = 4 << 20
    """Size of a kernel library file (YAML). The bundled MediaPipe library has 30 KB; 4 MiB is
    room for thousands of entries, and the YAML parser holds the whole document in memory."""
    shader_file_bytes_max: int = 4 << 20
    """Size of a kernel library's shader file (GLSL, HLSL or SPIR-V), as ``shader_code_length_max``
    is for a shader carried in a model."""
    stdin_bytes_max: int = 4 << 30
    """Size of a model or VGF piped in (``-``): a pipe has no size to check first, so it is
    read into memory up to this many bytes (a larger file is better named than piped)."""
    mlir_bytes_max: int = 2 << 30
    """Size of a model given as TOSA MLIR (vgfc/read/mlir.py): the translator holds the whole
    text and the module it parses in memory. A flatbuffer is 2 GiB at most, and MLIR text spells
    each constant byte as two hex digits, so this is room for a model of 1 GiB of weights."""
    mlir_cpu_seconds_max: float = 600.0
    """CPU seconds tosa-opt may use to translate one MLIR model (about 10 ms for a small model;
    a model of 10 MB of MLIR takes well under a second)."""
    mlir_memory_base: int = 1 << 30
    """Bytes of address space tosa-opt may have, besides ``mlir_memory_per_byte`` for each byte
    of MLIR (it starts in 15 MB; its parser and the flatbuffer it builds grow with the input)."""
    mlir_memory_per_byte: int = 16
    """Bytes of address space tosa-opt may add for each byte of MLIR it translates."""
    include_file_bytes_max: int = 4 << 20
    """Size of one file a shader includes."""
    include_bytes_max: int = 64 << 20
    """Bytes all the includes of one shader may read together: a header included again and
    again (each ``#include`` reads its file afresh) cannot make glslang read gigabytes."""
    include_depth_max: int = 64
    """Nesting of ``#include`` (glslang itself stops near 100 with a less helpful message)."""

    # -- kernel libraries (vgfc/resolve/library.py, vgfc/resolve/expr.py) ---------------------
    yaml_depth_max: int = 64
    """Nesting of YAML lists and maps in a kernel library: the deepest a valid library goes is
    8; the schema validator and the loader recurse, and Python stops near 1000. Checked on the
    parser's events, before a node tree is built."""
    yaml_nodes_max: int = 200_000
    """Values a kernel library's document holds, aliases expanded: an alias bomb (a list of
    aliases to lists of aliases) expands exponentially from a few hundred bytes."""
    yaml_scalar_length_max: int = 64
    """Characters of a YAML number (a 64-bit integer has 20): Python refuses to convert
    integers of more than 4300 digits, and smaller big numbers only cost time later."""
    expression_length_max: int = 500
    """Characters of one kernel-library expression (``(H - 1) * stride_h + kernel_h``)."""
    expression_int_max: int = 1 << 64
    """Largest magnitude of an integer an expression reads or computes, every intermediate
    value included: far above any dimension or dispatch, far below a slow big number."""
    expression_power_max: int = 64
    """Largest exponent of ``**`` and magnitude of ``round``'s ``ndigits``: ``round(N, -10**8)``
    would make Python compute a number of a hundred million digits."""
    expression_items_max: int = 4096
    """Elements of a list or characters of a string an expression builds (``+`` joins them)."""
    compose_constant_elements_max: int = 1 << 20
    """Elements of one constant a composed operator declares (a scalar or a per-channel table
    in practice): the values are built in memory when the op is expanded."""

    # -- how user text is shown (vgfc/diagnostics.py) ------------------------------------------
    quoted_length: int = 60
    """Characters of a user value :func:`quote` shows in a message."""
    location_field_length: int = 200
    """Characters of an operator name, domain, tensor name or key in a diagnostic's location."""
    message_length: int = 1000
    """Characters of one diagnostic message: a last guard for text a check did not quote."""
    check_errors_shown: int = 20
    """Errors ``vgfc check`` lists before it says how many more there are (``--max-errors``;
    clang's ``-ferror-limit`` is 20 too). ``--json`` keeps them all."""


LIMITS = Limits()
"""The limits vgfc applies."""

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def quote(value: object, limit: int = LIMITS.quoted_length) -> str:
    """``value`` for a message, on one line and cut to ``limit`` characters.

    Strings are shown as they are, other values as ``repr``; control characters are escaped
    (``\\n``); anything longer than ``limit`` keeps its first ``limit`` characters, followed by
    ``... (5242880 characters)`` with the full length.
    """
    text = value if isinstance(value, str) else repr(value)
    size = len(text)
    if size > limit:
        text = text[:limit]
    text = _CONTROL.sub(lambda m: repr(m.group())[1:-1], text)
    return f"{text}... ({size} characters)" if size > limit else text


def clip(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters in all, ending ``... (N characters)`` when
    cut. Clipping clipped text changes nothing."""
    if len(text) <= limit:
        return text
    suffix = f"... ({len(text)} characters)"
    return text[: max(limit - len(suffix), 0)] + suffix
