"""Read a kernel library file (``--kernels lib.yaml``) into typed, checked entries.

The file is YAML, read by PyYAML in safe mode, then validated against
``schemas/kernel_library.schema.json``, which documents every key. Every problem is reported the
way a compiler reports a source error: ``lib.yaml:12: TFL/MaxUnpooling2D: kernels[0].dispatch:
...``, with the line the offending key is on. Line numbers come from PyYAML's node tree, kept
beside the plain data.

Beyond the schema, everything that can be checked without a model is checked here, so that
``vgfc kernels`` and the first compile fail the same way: every name an expression reads is a
parameter, an operand or a dimension the entry defines; every operand has a resource; shader and
include paths exist; a composed graph names only tensors it has and has no cycle (its ops are
put in dependency order), and each composed op is a TOSA operator with the inputs, outputs and
attributes its instruction takes (:mod:`vgfc.resolve.compose_check`).

A library is untrusted input, as a model is. It is read through :func:`vgfc.files.inputs.read_text`
(a regular file of at most ``library_bytes_max`` bytes), and the YAML is held to the limits of
:mod:`vgfc.limits` while it is parsed: nesting depth, values (aliases expanded, so an alias bomb
is refused), and the length of numbers. Its shader files and include folders must lie inside the
library's own folder or a folder the user names with ``-I`` (real paths compared, so neither
``..`` nor a symlink leads out).
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from vgfc.diagnostics import InputError, Location
from vgfc.dtypes import DType
from vgfc.ir import Sampler
from vgfc.limits import LIMITS, UINT32_MAX, quote
from vgfc.record import field, record
from vgfc.resolve.expr import Expr, ExprError
from vgfc.resolve.params import TYPES, Field, Params

__all__ = [
    "BUNDLED",
    "DIMENSIONS",
    "ArgMeta",
    "Compose",
    "ComposeOp",
    "Constant",
    "Entry",
    "Kernel",
    "Library",
    "Resource",
    "Shader",
    "TensorRule",
    "build_constant",
    "bundled_path",
    "load_libraries",
    "load_library",
]

BUNDLED = ("mediapipe",)
"""Libraries shipped in the package (``vgfc/kernels/<name>/<name>.yaml``, data only), by the
name ``--kernels`` takes."""

DIMENSIONS = ("N", "H", "W", "C")
"""Names for the first output's dimensions in kernel expressions."""

LANGUAGES = {".comp": "GLSL", ".glsl": "GLSL", ".hlsl": "HLSL", ".spv": "SPIR-V"}
DESCRIPTORS = {
    "storage_buffer": "VK_DESCRIPTOR_TYPE_STORAGE_BUFFER",
    "uniform_buffer": "VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER",
    "storage_image": "VK_DESCRIPTOR_TYPE_STORAGE_IMAGE",
    "sampled_image": "VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE",
    "combined_image_sampler": "VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER",
    "tensor": "VK_DESCRIPTOR_TYPE_TENSOR_ARM",
}
MAX_LIBRARY_BYTES = LIMITS.library_bytes_max


@record
class TensorRule:
    """An output's dtype and shape, from an operand or from expressions."""

    dtype: str | None
    """A DType name, or an operand name to copy; ``None``: not checked."""
    shape: str | tuple[Expr, ...] | None
    """An operand name to copy, or one expression per dimension; ``None``: not checked."""


@record
class ArgMeta:
    """What a kernel accepts for one operand: ``None`` fields accept anything."""

    dtypes: tuple[DType, ...] | None
    alias: str | None
    """The type alias named (operands naming one alias get one dtype)."""
    layouts: tuple[str, ...] | None


@record
class Resource:
    set: int
    binding: int
    descriptor: str
    """``VK_DESCRIPTOR_TYPE_*`` name."""
    format: str | None
    sampler: Sampler | None = None
    """A combined image sampler's sampler state (which it must have)."""


@record
class Shader:
    path: Path
    language: str
    entry_point: str
    include_dirs: tuple[Path, ...]
    defines: tuple[tuple[str, Expr], ...]


@record
class Kernel:
    name: str
    arg_meta: Mapping[str, ArgMeta]
    """Operand name -> what it accepts; a missing operand accepts anything."""
    shader: Shader
    resources: Mapping[str, Resource]
    global_size: tuple[Expr, ...] | None
    workgroups: tuple[Expr, ...] | None
    line: int
    allow_lossy: frozenset[str] = frozenset()
    """Operands kernel selection may convert with a CAST that loses information
    (``allow_lossy: true`` names them all)."""


@record
class Constant:
    dtype: str
    shape: tuple[Expr, ...] | None
    value: Expr | tuple[Expr, ...]


@record
class ComposeOp:
    op: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    attrs: Mapping[str, Any]
    """Attribute name -> :class:`Expr`, tuple of them, or a literal (enum name)."""


@record
class Compose:
    ops: tuple[ComposeOp, ...]
    """In dependency order."""
    constants: Mapping[str, Constant]
    tensors: Mapping[str, TensorRule]


@record
class Entry:
    """One custom operator of a library."""

    domain: str
    name: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    layout: str
    params: Params
    infer: Mapping[str, TensorRule]
    kernels: tuple[Kernel, ...]
    compose: Compose | None
    library: Library = field(compare=False, repr=False)
    line: int = 0
    example: Mapping[str, Any] = field(default_factory=dict)
    """``example`` of the file: ``params`` and ``shapes`` for ``vgfc kernels``."""
    reference: str | None = None
    """``module:function``: a Python reference of the operator (numpy in, numpy out) that
    ``vgfc verify`` checks the kernels against (:func:`vgfc.resolve.reference.load_reference`)."""
    torch: str | None = None
    """A PyTorch schema, ``my_ops::swish(Tensor x, float beta=1.0) -> Tensor``: the op
    :func:`vgfc.executorch.load` defines for the entry."""
    torch_line: int = 0

    @property
    def label(self) -> str:
        return f"{self.domain}/{self.name}"

    @property
    def operands(self) -> tuple[str, ...]:
        return self.inputs + self.outputs

    def where(self, line: int | None = None) -> Location:
        """The library file and line, for diagnostics."""
        return Location(file=f"{self.library.shown}:{line or self.line}", key=self.label)


@record
class Library:
    path: Path
    shown: str
    """The path as the user gave it (or ``mediapipe`` for a bundled one)."""
    name: str
    entries: dict[tuple[str, str], Entry] = field(default_factory=dict)

    def find(self, domain: str, name: str) -> Entry | None:
        return self.entries.get((domain, name))


def load_library(
    path: str | os.PathLike[str],
    shown: str | None = None,
    include_dirs: Sequence[str | os.PathLike[str]] = (),
) -> Library:
    """Read, validate and check one library file. Raises :class:`InputError`.

    ``include_dirs``: the folders the user names with ``-I``, where the library's shader files
    and include folders may lie besides its own folder."""
    import yaml

    from vgfc.files.inputs import read_text, shown_path

    file = Path(path)
    shown = shown or shown_path(path)
    where = Location(file=shown)
    text = read_text(
        file,
        what="kernel library",
        limit=LIMITS.library_bytes_max,
        limit_name="library_bytes_max",
        shown=shown,
    )
    try:
        loader = _new_loader(text, shown)
        try:
            node = loader.get_single_node()
            if node is None:
                raise InputError("empty: a kernel library needs vgfc_kernels and operators", where)
            _count_nodes(node, shown)
            data = loader.construct_document(node)
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as e:
        line = e.problem_mark.line + 1 if e.problem_mark else 0
        raise InputError(
            f"not valid YAML: {quote(e.problem or e.context, 200)}",
            Location(file=f"{shown}:{line}"),
        ) from None
    except yaml.YAMLError as e:
        raise InputError(f"not valid YAML: {quote(str(e), 200)}", where) from None
    lines = _Lines(node)
    _validate(data, lines, shown)
    library = Library(Path(os.path.realpath(file)), shown, str(data.get("name") or file.stem))
    reader = _Reader(library, data, lines, include_dirs)
    for i, raw in enumerate(data["operators"]):
        entry = reader.entry(i, raw)
        key = (entry.domain, entry.name)
        if key in library.entries:
            raise InputError(
                f"{entry.label} is defined twice (first at line {library.entries[key].line})",
                entry.where(),
            )
        library.entries[key] = entry
    return library


def _yaml_loader() -> type:
    """PyYAML's safe loader held to the limits while it composes and constructs."""
    import yaml

    class Loader(yaml.SafeLoader):
        def __init__(self, text: str, shown: str) -> None:
            super().__init__(text)
            self.shown = shown
            self.depth = 0
            self.nodes = 0

        def fail(self, message: str, mark: Any) -> InputError:
            line = mark.line + 1 if mark is not None else 0
            return InputError(message, Location(file=f"{self.shown}:{line}"))

        def compose_node(self, parent: Any, index: Any) -> Any:
            # Composing recurses once per level: the depth is checked before it goes deeper.
            if not self.check_event(yaml.AliasEvent):
                self.nodes += 1
                if self.nodes > LIMITS.yaml_nodes_max:
                    raise self.fail(
                        f"more than {LIMITS.yaml_nodes_max} values (yaml_nodes_max)",
                        self.peek_event().start_mark,  # type: ignore[no-untyped-call]
                    )
            self.depth += 1
            try:
                if self.depth > LIMITS.yaml_depth_max:
                    raise self.fail(
                        f"lists and maps nested more than {LIMITS.yaml_depth_max} deep "
                        "(yaml_depth_max)",
                        self.peek_event().start_mark,  # type: ignore[no-untyped-call]
                    )
                return super().compose_node(parent, index)
            finally:
                self.depth -= 1

        def construct_yaml_int(self, node: Any) -> Any:
            if len(node.value) > LIMITS.yaml_scalar_length_max:
                raise self.fail(
                    f"a number of {len(node.value)} characters, more than the "
                    f"{LIMITS.yaml_scalar_length_max} one may have (yaml_scalar_length_max)",
                    node.start_mark,
                )
            return super().construct_yaml_int(node)

        def construct_yaml_float(self, node: Any) -> Any:
            if len(node.value) > LIMITS.yaml_scalar_length_max:
                raise self.fail(
                    f"a number of {len(node.value)} characters, more than the "
                    f"{LIMITS.yaml_scalar_length_max} one may have (yaml_scalar_length_max)",
                    node.start_mark,
                )
            return super().construct_yaml_float(node)

    Loader.add_constructor("tag:yaml.org,2002:int", Loader.construct_yaml_int)
    Loader.add_constructor("tag:yaml.org,2002:float", Loader.construct_yaml_float)
    return Loader


def _new_loader(text: str, shown: str) -> Any:
    """A loader of ``text`` (the class is built on first use: PyYAML is imported then)."""
    global _LOADER
    if _LOADER is None:
        _LOADER = _yaml_loader()
    return _LOADER(text, shown)


_LOADER: type | None = None


def _count_nodes(node: Any, shown: str) -> None:
    """Refuse alias bombs: a document whose expansion visits too many values."""
    import yaml

    seen = 0
    stack = [node]
    while stack:
        n = stack.pop()
        seen += 1
        if seen > LIMITS.yaml_nodes_max:
            raise InputError(
                f"the document expands to more than {LIMITS.yaml_nodes_max} values through "
                "its aliases (yaml_nodes_max)",
                Location(file=shown),
            )
        if isinstance(n, yaml.MappingNode):
            for k, v in n.value:
                stack.extend((k, v))
        elif isinstance(n, yaml.SequenceNode):
            stack.extend(n.value)


class _Lines:
    """The line of any value of the document, by its path of keys and indices."""

    def __init__(self, root: Any) -> None:
        self.root = root

    def line(self, path: Sequence[Any]) -> int:
        import yaml

        node = self.root
        line = int(node.start_mark.line) + 1
        for step in path:
            if isinstance(node, yaml.MappingNode):
                for k, v in node.value:
                    if k.value == step or str(k.value) == str(step):
                        node = v
                        line = int(k.start_mark.line) + 1  # the key's line, not its block's
                        break
                else:
                    break
            elif isinstance(node, yaml.SequenceNode) and isinstance(step, int):
                if step >= len(node.value):
                    break
                node = node.value[step]
                line = int(node.start_mark.line) + 1
            else:
                break
        return line


def _validate(data: Any, lines: _Lines, shown: str) -> None:
    import jsonschema

    from vgfc.schema import load_schema

    if not isinstance(data, dict):
        raise InputError(
            f"a kernel library is a mapping (vgfc_kernels, operators), not {type(data).__name__}",
            Location(file=shown),
        )
    validator = jsonschema.Draft202012Validator(load_schema("kernel_library.schema.json"))
    errors = sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path))
    if not errors:
        return
    error = jsonschema.exceptions.best_match(errors)
    assert error is not None
    path = list(error.absolute_path)
    where = Location(file=f"{shown}:{lines.line(path)}", key=_path_text(data, path))
    raise InputError(_schema_message(error), where)


def _schema_message(error: Any) -> str:
    from vgfc.limits import quote

    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        from vgfc.diagnostics import did_you_mean

        allowed = sorted(error.schema.get("properties", {}))
        extra = sorted(str(k) for k in error.instance if k not in allowed)
        if extra:
            return f"unknown key '{quote(extra[0], 60)}'{did_you_mean(extra[0], allowed)}"
    if (
        error.validator == "oneOf"
        and error.schema.get("oneOf")
        and all("required" in s for s in error.schema["oneOf"])
    ):
        keys = " or ".join(s["required"][0] for s in error.schema["oneOf"])
        return f"needs exactly one of {keys}"
    return quote(error.message, 200)


def _path_text(data: Any, path: Sequence[Any]) -> str:
    """``TFL/Foo: kernels[0].dispatch`` for a path into the document."""
    text = ""
    prefix = ""
    if len(path) >= 2 and path[0] == "operators" and isinstance(path[1], int):
        raw = data["operators"][path[1]]
        if isinstance(raw, dict):
            prefix = f"{raw.get('domain', '?')}/{raw.get('name', '?')}"
        else:
            prefix = f"operators[{path[1]}]"
        path = path[2:]
    for step in path:
        text += f"[{step}]" if isinstance(step, int) else (f".{step}" if text else str(step))
    return f"{prefix}: {text}" if prefix and text else (prefix or text or "(top level)")


class _Reader:
    """Turns validated data into entries, checking what the schema cannot."""

    def __init__(
        self,
        library: Library,
        data: dict[str, Any],
        lines: _Lines,
        include_dirs: Sequence[str | os.PathLike[str]] = (),
    ) -> None:
        self.library = library
        self.data = data
        self.lines = lines
        self.type_alias: dict[str, tuple[DType, ...]] = {
            k: tuple(DType(v) for v in vs) for k, vs in (data.get("type_alias") or {}).items()
        }
        self.layout_alias: dict[str, tuple[str, ...]] = {
            k: tuple(vs) for k, vs in (data.get("layout_alias") or {}).items()
        }
        self.base = library.path.parent
        # Where the library's files may be: its own folder and the user's -I folders, as real
        # paths (the library's path is resolved already).
        self.roots = (str(self.base), *(os.path.realpath(d) for d in include_dirs))

    def fail(self, message: str, path: Sequence[Any]) -> InputError:
        where = Location(
            file=f"{self.library.shown}:{self.lines.line(path)}",
            key=_path_text(self.data, path),
        )
        return InputError(message, where)

    def entry(self, i: int, raw: dict[str, Any]) -> Entry:
        at = ["operators", i]
        inputs, outputs = tuple(raw["inputs"]), tuple(raw["outputs"])
        operands = inputs + outputs
        if len(set(operands)) != len(operands):
            raise self.fail("operand names must be distinct", [*at, "inputs"])
        params = self.params(raw.get("params") or {"encoding": "none"}, [*at, "params"])
        clash = set(params.names) & (set(operands) | set(DIMENSIONS))
        if clash:
            raise self.fail(
                f"parameter {sorted(clash)[0]!r} has the name of an operand or a dimension",
                [*at, "params"],
            )
        graph_names = frozenset(params.names) | frozenset(operands)
        infer = {}
        for name, rule in (raw.get("infer") or {}).items():
            if name not in outputs:
                raise self.fail(f"'{name}' is not an output ({', '.join(outputs)})", [*at, "infer"])
            infer[name] = self.rule(rule, graph_names, operands, [*at, "infer", name])
        kernels = tuple(
            self.kernel(k, j, raw, params, [*at, "kernels", j])
            for j, k in enumerate(raw.get("kernels") or ())
        )
        compose = None
        if raw.get("compose") is not None:
            compose = self.compose(raw["compose"], inputs, outputs, graph_names, [*at, "compose"])
        return Entry(
            domain=raw["domain"],
            name=raw["name"],
            inputs=inputs,
            outputs=outputs,
            layout=raw.get("layout", "NHWC"),
            params=params,
            infer=infer,
            kernels=kernels,
            compose=compose,
            library=self.library,
            line=self.lines.line(at),
            example=self.example(raw.get("example") or {}, params, operands, [*at, "example"]),
            reference=raw.get("reference"),
            torch=raw.get("torch"),
            torch_line=self.lines.line([*at, "torch"]) if "torch" in raw else 0,
        )

    def sampler(self, raw: dict[str, Any] | None, descriptor: str, at: list[Any]) -> Sampler | None:
        """A resource's ``sampler``: ``filter`` (both filters), ``address_mode`` (both axes),
        or each field on its own; short names (``linear``) or Vulkan's (``VK_FILTER_LINEAR``)."""
        from vgfc.vulkan_names import border_colors, filters, sampler_address_modes

        combined = descriptor == DESCRIPTORS["combined_image_sampler"]
        if raw is None:
            if combined:
                raise self.fail(
                    "a combined image sampler needs its sampler, e.g. sampler: {filter: linear, "
                    "address_mode: clamp_to_edge}",
                    at,
                )
            return None
        if not combined:
            raise self.fail(
                f"a sampler only applies to a combined_image_sampler, not {descriptor}",
                [*at, "sampler"],
            )
        fields = {
            "min_filter": ("filter", "VK_FILTER_", filters(), "NEAREST"),
            "mag_filter": ("filter", "VK_FILTER_", filters(), "NEAREST"),
            "address_mode_u": (
                "address_mode",
                "VK_SAMPLER_ADDRESS_MODE_",
                sampler_address_modes(),
                "CLAMP_TO_EDGE",
            ),
            "address_mode_v": (
                "address_mode",
                "VK_SAMPLER_ADDRESS_MODE_",
                sampler_address_modes(),
                "CLAMP_TO_EDGE",
            ),
            "border_color": (
                "border_color",
                "VK_BORDER_COLOR_",
                border_colors(),
                "FLOAT_TRANSPARENT_BLACK",
            ),
        }
        values = {}
        for name, (short, prefix, table, default) in fields.items():
            key = name if name in raw else short
            text = str(raw.get(key, default))
            full = text.upper() if text.upper().startswith(prefix) else prefix + text.upper()
            if full not in table:
                known = ", ".join(n.removeprefix(prefix).lower() for n in table)
                raise self.fail(
                    f"unknown {short.replace('_', ' ')} '{quote(text)}' (known: {known})",
                    [*at, "sampler", key],
                )
            values[name] = full
        return Sampler(**values)

    def example(
        self, raw: dict[str, Any], params: Params, operands: Sequence[str], at: list[Any]
    ) -> dict[str, Any]:
        for name in raw.get("params") or {}:
            if name not in params.names:
                raise self.fail(f"'{name}' is no parameter", [*at, "params", name])
        for name in raw.get("shapes") or {}:
            if name not in operands:
                raise self.fail(f"'{name}' is no operand", [*at, "shapes", name])
        return raw

    def params(self, raw: dict[str, Any], at: list[Any]) -> Params:
        encoding = raw["encoding"]
        fields = []
        for j, f in enumerate(raw.get("fields") or ()):
            if f["type"] == "str" and encoding == "struct":
                raise self.fail("a struct holds no strings", [*at, "fields", j, "type"])
            if encoding != "struct" and "offset" in f:
                raise self.fail("offset is for struct parameters", [*at, "fields", j, "offset"])
            if f.get("count") == "any" and encoding == "struct":
                raise self.fail("a struct holds no list of any length", [*at, "fields", j, "count"])
            values = {}
            for code, name in (f.get("values") or {}).items():
                try:
                    values[int(code)] = name
                except ValueError:
                    raise self.fail(
                        f"enum code {code!r} is not an integer", [*at, "fields", j, "values"]
                    ) from None
            assert f["type"] in TYPES or f["type"] == "str"
            fields.append(
                Field(
                    name=f["name"],
                    type=f["type"],
                    count=None if f.get("count") == "any" else f.get("count"),
                    variable=f.get("count") == "any",
                    default=tuple(f["default"])
                    if isinstance(f.get("default"), list)
                    else f.get("default"),
                    has_default="default" in f,
                    key=f.get("key"),
                    offset=f.get("offset"),
                    values=values,
                )
            )
        names = [f.name for f in fields]
        if len(set(names)) != len(names):
            raise self.fail("parameter names must be distinct", [*at, "fields"])
        return Params(encoding, tuple(fields))

    def expr(self, value: Any, known: frozenset[str], at: list[Any]) -> Expr:
        try:
            e = Expr.parse(value)
        except ExprError as err:
            raise self.fail(str(err), at) from None
        names = e.names()
        unknown = sorted(names - known)
        if unknown:
            raise self.fail(
                f"'{e.text}' reads {unknown[0]!r}, which is no parameter, operand or dimension "
                f"here (known: {', '.join(sorted(known))})",
                at,
            )
        if e.tree is not None and not names:
            # It reads nothing: what it gives (or the limit it breaks) is known now.
            try:
                e.evaluate({})
            except ExprError as err:
                raise self.fail(str(err), at) from None
        return e

    def rule(
        self, raw: dict[str, Any], known: frozenset[str], operands: Sequence[str], at: list[Any]
    ) -> TensorRule:
        if "same_as" in raw:
            if set(raw) != {"same_as"}:
                raise self.fail("same_as stands alone (it gives both dtype and shape)", at)
            if raw["same_as"] not in operands:
                raise self.fail(f"same_as names '{raw['same_as']}', which is no operand", at)
            return TensorRule(raw["same_as"], raw["same_as"])
        dtype = raw.get("dtype")
        if dtype is not None and dtype not in operands and dtype not in DType.__members__:
            raise self.fail(
                f"dtype '{dtype}' is neither a TOSA type nor an operand", [*at, "dtype"]
            )
        shape = raw.get("shape")
        if isinstance(shape, str):
            if shape not in operands:
                raise self.fail(f"shape names '{shape}', which is no operand", [*at, "shape"])
            return TensorRule(dtype, shape)
        exprs = (
            tuple(self.expr(v, known, [*at, "shape", k]) for k, v in enumerate(shape))
            if shape is not None
            else None
        )
        return TensorRule(dtype, exprs)

    def arg_meta(self, raw: Any, operands: Sequence[str], at: list[Any]) -> dict[str, ArgMeta]:
        metas: dict[str, ArgMeta] = {}
        for name, meta in (raw or {}).items():
            if name not in operands:
                raise self.fail(f"'{name}' is no operand ({', '.join(operands)})", [*at, name])
            if meta is None:
                continue
            dtype_name = meta[0] if meta else None
            layout_name = meta[1] if len(meta) > 1 else None
            dtypes: tuple[DType, ...] | None = None
            alias = None
            if dtype_name is not None:
                if dtype_name in self.type_alias:
                    dtypes, alias = self.type_alias[dtype_name], dtype_name
                elif dtype_name in DType.__members__:
                    dtypes = (DType[dtype_name],)
                else:
                    known = [*sorted(self.type_alias), "FP32", "FP16", "INT8", "..."]
                    raise self.fail(
                        f"'{dtype_name}' is neither a type alias nor a dtype "
                        f"(known: {', '.join(known)})",
                        [*at, name, 0],
                    )
            layouts: tuple[str, ...] | None = None
            if layout_name is not None:
                if layout_name in self.layout_alias:
                    layouts = self.layout_alias[layout_name]
                elif layout_name in ("NHWC", "NCHW"):
                    layouts = (layout_name,)
                else:
                    raise self.fail(
                        f"'{layout_name}' is neither a layout alias nor NHWC/NCHW",
                        [*at, name, 1],
                    )
            metas[name] = ArgMeta(dtypes, alias, layouts)
        return metas

    def kernel(
        self, raw: dict[str, Any], j: int, entry: dict[str, Any], params: Params, at: list[Any]
    ) -> Kernel:
        operands = tuple(entry["inputs"]) + tuple(entry["outputs"])
        known = frozenset(params.names) | frozenset(operands) | frozenset(DIMENSIONS)
        shader_raw = raw["shader"]
        path = self.path(shader_raw["file"], [*at, "shader", "file"], is_dir=False)
        language = shader_raw.get("language") or LANGUAGES.get(path.suffix.lower())
        if language is None:
            raise self.fail(
                f"cannot tell the language of '{shader_raw['file']}' from its extension "
                f"({', '.join(LANGUAGES)}): give shader.language",
                [*at, "shader", "file"],
            )
        include_dirs = tuple(
            self.path(d, [*at, "shader", "include_dirs", k], is_dir=True)
            for k, d in enumerate(shader_raw.get("include_dirs") or ())
        )
        defines = tuple(
            (name, self.expr(v, known, [*at, "shader", "defines", name]))
            for name, v in (shader_raw.get("defines") or {}).items()
        )
        if defines and language == "SPIR-V":
            raise self.fail("a SPIR-V shader takes no defines", [*at, "shader", "defines"])
        resources = {}
        for name, r in raw["resources"].items():
            if name not in operands:
                raise self.fail(
                    f"'{name}' is no operand ({', '.join(operands)})", [*at, "resources", name]
                )
            descriptor = r.get("descriptor", "storage_buffer")
            full = DESCRIPTORS.get(descriptor.lower(), descriptor)
            if full not in DESCRIPTORS.values():
                raise self.fail(
                    f"unknown descriptor '{descriptor}' (known: {', '.join(DESCRIPTORS)})",
                    [*at, "resources", name, "descriptor"],
                )
            sampler = self.sampler(r.get("sampler"), full, [*at, "resources", name])
            resources[name] = Resource(
                r.get("set", 0), r["binding"], full, r.get("format"), sampler
            )
        missing = [o for o in operands if o not in resources]
        if missing:
            raise self.fail(f"no resource for operand '{missing[0]}'", [*at, "resources"])
        taken: dict[tuple[int, int], str] = {}
        for name, r in resources.items():
            other = taken.setdefault((r.set, r.binding), name)
            if other != name:
                raise self.fail(
                    f"'{name}' and '{other}' share set {r.set} binding {r.binding}",
                    [*at, "resources", name],
                )
        dispatch = raw["dispatch"]
        key = "global" if "global" in dispatch else "workgroups"
        sizes = tuple(
            self.expr(v, known, [*at, "dispatch", key, k]) for k, v in enumerate(dispatch[key])
        )
        for k, e in enumerate(sizes):
            if not e.names():
                try:
                    dispatch_size(e, {})
                except ExprError as err:
                    raise self.fail(str(err), [*at, "dispatch", key, k]) from None
        return Kernel(
            name=raw.get("name") or f"kernel {j}",
            arg_meta=self.arg_meta(raw.get("arg_meta"), operands, [*at, "arg_meta"]),
            shader=Shader(
                path, language, shader_raw.get("entry_point", "main"), include_dirs, defines
            ),
            resources=resources,
            global_size=sizes if key == "global" else None,
            workgroups=sizes if key == "workgroups" else None,
            line=self.lines.line(at),
            allow_lossy=self.allow_lossy(raw.get("allow_lossy", False), operands, at),
        )

    def allow_lossy(self, raw: Any, operands: Sequence[str], at: list[Any]) -> frozenset[str]:
        if raw is True:
            return frozenset(operands)
        if raw is False:
            return frozenset()
        for k, name in enumerate(raw):
            if name not in operands:
                raise self.fail(
                    f"'{name}' is no operand ({', '.join(operands)})", [*at, "allow_lossy", k]
                )
        return frozenset(raw)

    def path(self, raw: str, at: list[Any], *, is_dir: bool) -> Path:
        """``raw`` (relative to the library) as a real path inside the library's folder or an
        ``-I`` folder, checked to be a folder or a regular file of a shader's size. Nothing of
        a refused file is read."""
        import stat

        what = "folder" if is_dir else "file"
        if "\0" in raw:
            raise self.fail(f"the {what} name holds a NUL byte", at)
        path = Path(os.path.realpath(self.base / raw))
        if not _inside(str(path), self.roots):
            raise self.fail(
                f"'{quote(raw)}' lies outside the library's folder (and the -I folders): a "
                "library reads only files in its own folder",
                at,
            )
        try:
            info = os.stat(path)
        except OSError as e:
            from vgfc.files.inputs import _reason

            if e.errno == errno.ENOENT:
                raise self.fail(
                    f"no such {what}: {quote(raw)} (relative to the library)", at
                ) from None
            raise self.fail(f"{quote(raw)}: {_reason(e)}", at) from None
        if is_dir:
            if not stat.S_ISDIR(info.st_mode):
                raise self.fail(f"{quote(raw)}: not a folder (relative to the library)", at)
            return path
        if not stat.S_ISREG(info.st_mode):
            from vgfc.files.inputs import _kind

            raise self.fail(f"{quote(raw)}: {_kind(info.st_mode)}, not a regular file", at)
        if info.st_size > LIMITS.shader_file_bytes_max:
            raise self.fail(
                f"{quote(raw)}: {info.st_size} bytes, more than the "
                f"{LIMITS.shader_file_bytes_max} a shader file may have (shader_file_bytes_max)",
                at,
            )
        return path

    def compose(
        self,
        raw: dict[str, Any],
        inputs: tuple[str, ...],
        outputs: tuple[str, ...],
        graph_names: frozenset[str],
        at: list[Any],
    ) -> Compose:
        constants = {}
        operands = inputs + outputs
        for name, c in (raw.get("constants") or {}).items():
            if name in graph_names:
                raise self.fail(
                    f"constant '{name}' shadows an operand or parameter", [*at, "constants", name]
                )
            known_dtype = c["dtype"] == "SHAPE" or c["dtype"] in DType.__members__
            if not known_dtype and c["dtype"] not in operands:
                raise self.fail(
                    f"unknown dtype '{quote(c['dtype'])}'", [*at, "constants", name, "dtype"]
                )
            if known_dtype and _array_type(_dtype(c["dtype"])) is None:
                raise self.fail(
                    f"constants of {c['dtype']} cannot be written",
                    [*at, "constants", name, "dtype"],
                )
            value = c["value"]
            if isinstance(value, list):
                parsed: Expr | tuple[Expr, ...] = tuple(
                    self.expr(v, graph_names, [*at, "constants", name, "value", k])
                    for k, v in enumerate(value)
                )
            else:
                parsed = self.expr(value, graph_names, [*at, "constants", name, "value"])
            shape = (
                tuple(
                    self.expr(v, graph_names, [*at, "constants", name, "shape", k])
                    for k, v in enumerate(c["shape"])
                )
                if "shape" in c
                else None
            )
            constant = Constant(c["dtype"], shape, parsed)
            try:
                _check_literals(constant)
            except ExprError as e:
                raise self.fail(str(e), [*at, "constants", name]) from None
            constants[name] = constant
        tensors = {}
        for name, rule in (raw.get("tensors") or {}).items():
            if name in graph_names or name in constants:
                raise self.fail(f"tensor '{name}' shadows another name", [*at, "tensors", name])
            tensors[name] = self.rule(rule, graph_names, operands, [*at, "tensors", name])
        ops = []
        produced: dict[str, int] = {}
        for k, o in enumerate(raw["ops"]):
            for name in o["outputs"]:
                if name in inputs or name in constants:
                    raise self.fail(
                        f"'{name}' is an input or constant: a composed op cannot write it",
                        [*at, "ops", k, "outputs"],
                    )
                if name not in outputs and name not in tensors:
                    raise self.fail(
                        f"'{name}' is neither an output of the operator nor declared under "
                        "tensors (which gives its dtype and shape)",
                        [*at, "ops", k, "outputs"],
                    )
                if name in produced:
                    raise self.fail(
                        f"'{name}' is written by ops {produced[name]} and {k}",
                        [*at, "ops", k, "outputs"],
                    )
                produced[name] = k
            attrs: dict[str, Any] = {}
            for key, value in (o.get("attrs") or {}).items():
                attrs[key] = self.attr(value, graph_names, [*at, "ops", k, "attrs", key])
            ops.append(ComposeOp(o["op"], tuple(o.get("inputs") or ()), tuple(o["outputs"]), attrs))
        for k, o in enumerate(ops):
            for name in o.inputs:
                if name not in inputs and name not in constants and name not in produced:
                    raise self.fail(
                        f"op {k} ({o.op}) reads '{name}', which no input, constant or op gives",
                        [*at, "ops", k, "inputs"],
                    )
        missing = [name for name in outputs if name not in produced]
        if missing:
            raise self.fail(f"no op writes the output '{missing[0]}'", [*at, "ops"])
        from vgfc.resolve.compose_check import check_compose_ops

        check_compose_ops(ops, self.fail, [*at, "ops"])
        order = self.order(ops, produced, at)
        return Compose(tuple(ops[k] for k in order), constants, tensors)

    def attr(self, value: Any, known: frozenset[str], at: list[Any]) -> Any:
        if isinstance(value, list):
            return tuple(self.attr(v, known, [*at, k]) for k, v in enumerate(value))
        if isinstance(value, str) and value.isidentifier() and value not in known:
            return value  # an enum name such as FP32 or PROPAGATE
        return self.expr(value, known, at)

    def order(self, ops: list[ComposeOp], produced: dict[str, int], at: list[Any]) -> list[int]:
        """The ops in dependency order (each after the ops whose results it reads), or the
        cycle they form. Without recursion: a chain of thousands of ops is a long loop."""
        deps = [sorted({produced[n] for n in o.inputs if n in produced}) for o in ops]
        state = [0] * len(ops)  # 0 new, 1 on the path, 2 done
        order: list[int] = []
        for start in range(len(ops)):
            if state[start]:
                continue
            state[start] = 1
            path = [start]
            pending = [iter(deps[start])]
            while pending:
                for d in pending[-1]:
                    if state[d] == 1:
                        cycle = [*path[path.index(d) :], d]
                        text = " -> ".join(f"op {c} ({ops[c].op})" for c in cycle)
                        raise self.fail(f"the composed ops form a cycle: {text}", [*at, "ops", d])
                    if state[d] == 0:
                        state[d] = 1
                        path.append(d)
                        pending.append(iter(deps[d]))
                        break
                else:
                    done = path.pop()
                    pending.pop()
                    state[done] = 2
                    order.append(done)
        return order


def dispatch_size(e: Expr, scope: Mapping[str, Any]) -> int:
    """A dispatch size (``global`` or ``workgroups``) under ``scope``: rounded up, from 1 to
    2^32 - 1 (``vkCmdDispatch`` and invocation ids are uint32). Raises :class:`ExprError`."""
    value = e.whole(scope, round_up=True)
    if not 1 <= value <= UINT32_MAX:
        raise ExprError(
            f"'{e.text}' gives a dispatch size of {value}: it must be from 1 to {UINT32_MAX}"
        )
    return value


def _dtype(name: str) -> DType:
    return DType.SHAPE if name == "SHAPE" else DType[name]


def _array_type(dtype: DType) -> Any:
    """The numpy type constants of ``dtype`` are built in; ``None`` for packed types."""
    import numpy as np

    from vgfc.dtypes import numpy_dtype

    return np.dtype(np.int64) if dtype is DType.SHAPE else numpy_dtype(dtype)


def _check_dims(dims: Sequence[int]) -> int:
    """The element count of a constant of shape ``dims``, within the limits."""
    import math

    if len(dims) > LIMITS.rank_max:
        raise ExprError(f"a shape of {len(dims)} dimensions, more than {LIMITS.rank_max}")
    for d in dims:
        if d < 1:
            raise ExprError(f"shape {list(dims)}: every dimension must be at least 1")
        if d > LIMITS.compose_constant_elements_max:
            break
    else:
        count = math.prod(dims)
        if count <= LIMITS.compose_constant_elements_max:
            return count
    raise ExprError(
        f"shape {quote(list(dims))} has more than the {LIMITS.compose_constant_elements_max} "
        "elements a composed op's constant may have (compose_constant_elements_max)"
    )


def _check_value(value: Any, dtype: DType) -> None:
    """Refuse a value the constant's element type cannot hold: not a number, NaN or infinity
    for an integer type, a fraction for an integer type, a number out of the type's range."""
    import math

    import numpy as np

    if isinstance(value, bool):
        return
    if not isinstance(value, int | float):
        raise ExprError(f"{quote(value)} is not a number")
    if isinstance(value, float) and not math.isfinite(value):
        raise ExprError(f"{value} is not a finite number")
    if dtype.is_float:
        top = float(np.finfo(_array_type(dtype)).max)
        if abs(value) > top:
            raise ExprError(f"{value} does not fit in {dtype.value} (at most {top:g})")
        return
    if isinstance(value, float):
        if not value.is_integer():
            raise ExprError(f"{value} is not a whole number, and the constant is {dtype.value}")
        value = int(value)
    if dtype is DType.BOOL:
        low, high = 0, 1
    else:
        bits = 64 if dtype is DType.SHAPE else dtype.storage_bits
        low, high = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    if not low <= value <= high:
        raise ExprError(f"{value} does not fit in {dtype.value} ({low} to {high})")


def _check_literals(constant: Constant) -> None:
    """What a constant's literal shape and values already break, before any model."""
    exprs = constant.value if isinstance(constant.value, tuple) else (constant.value,)
    if len(exprs) > LIMITS.compose_constant_elements_max:
        raise ExprError(
            f"more than the {LIMITS.compose_constant_elements_max} values a composed op's "
            "constant may have (compose_constant_elements_max)"
        )
    if constant.shape is not None and not any(e.names() for e in constant.shape):
        _check_dims([e.whole({}) for e in constant.shape])
    if constant.dtype == "SHAPE" or constant.dtype in DType.__members__:
        dtype = _dtype(constant.dtype)
        for e in exprs:
            if not e.names():
                value = e.evaluate({})
                for item in value if isinstance(value, tuple) else (value,):
                    _check_value(item, dtype)


def build_constant(constant: Constant, dtype: DType, scope: Mapping[str, Any]) -> Any:
    """A composed op's constant as a read-only numpy array of its shape and ``dtype`` (the
    constant's own, or its operand's), its expressions evaluated under ``scope``. One value
    fills every element. Raises :class:`ExprError` for a shape or a value out of range."""
    import numpy as np

    array_type = _array_type(dtype)
    if array_type is None:
        raise ExprError(f"constants of {dtype.value} cannot be written")
    exprs = constant.value if isinstance(constant.value, tuple) else (constant.value,)
    flat: list[Any] = []
    for e in exprs:
        value = e.evaluate(scope)
        items = value if isinstance(value, tuple) else (value,)
        if len(flat) + len(items) > LIMITS.compose_constant_elements_max:
            raise ExprError(
                f"more than the {LIMITS.compose_constant_elements_max} values a composed op's "
                "constant may have (compose_constant_elements_max)"
            )
        flat.extend(items)
    if constant.shape is not None:
        dims = tuple(e.whole(scope) for e in constant.shape)
    else:
        dims = (len(flat),)
    count = _check_dims(dims)
    for value in flat:
        _check_value(value, dtype)
    if len(flat) == 1 and count != 1:
        data = np.full(dims, flat[0], dtype=array_type)
    elif len(flat) != count:
        raise ExprError(f"{len(flat)} values for shape {list(dims)}")
    else:
        data = np.asarray(flat).astype(array_type).reshape(dims)
    data.flags.writeable = False
    return data


def _inside(path: str, roots: Sequence[str]) -> bool:
    """``path`` is one of ``roots`` or lies under one (all real paths)."""
    return any(path == root or path.startswith(root.rstrip(os.sep) + os.sep) for root in roots)


def iter_entries(libraries: Sequence[Library]) -> Iterator[Entry]:
    for library in libraries:
        yield from library.entries.values()


def bundled_path(name: str) -> Path:
    """The file of a bundled library."""
    return Path(__file__).resolve().parent.parent / "kernels" / name / f"{name}.yaml"


def load_libraries(
    specs: Sequence[str | os.PathLike[str]],
    include_dirs: Sequence[str | os.PathLike[str]] = (),
) -> tuple[Library, ...]:
    """Each ``--kernels`` value: a bundled library's name or a file. ``include_dirs``: the
    user's ``-I`` folders (see :func:`load_library`). Raises InputError."""
    out = []
    for spec in specs:
        text = os.fspath(spec)
        if text in BUNDLED and not Path(text).exists():
            out.append(load_library(bundled_path(text), text, include_dirs))
        else:
            out.append(load_library(text, include_dirs=include_dirs))
    return tuple(out)
