"""Reading a kernel of a library entry: its shader (file, language, include folders, defines),
its resources (descriptor, set and binding, a sampler), ``dispatch``, ``arg_meta`` and
``allow_lossy``. Shader files and include folders must lie inside the library's own folder or a
folder the user names with ``-I`` (real paths compared, so neither ``..`` nor a symlink leads
out); nothing of a refused file is read.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from vgfc.dtypes import DType
from vgfc.ir import Sampler
from vgfc.limits import LIMITS, quote
from vgfc.resolve.expr import ExprError
from vgfc.resolve.library.reader import SectionReader
from vgfc.resolve.library.records import (
    DESCRIPTORS,
    DIMENSIONS,
    LANGUAGES,
    ArgMeta,
    Kernel,
    Resource,
    Shader,
)
from vgfc.resolve.library.values import dispatch_size
from vgfc.resolve.params import Params

__all__ = ["KernelReader"]


class KernelReader(SectionReader):
    """Reads an entry's ``kernels``."""

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
        line, column = self.lines.place(at)
        return Kernel(
            name=raw.get("name") or f"kernel {j}",
            arg_meta=self.arg_meta(raw.get("arg_meta"), operands, [*at, "arg_meta"]),
            shader=Shader(
                path, language, shader_raw.get("entry_point", "main"), include_dirs, defines
            ),
            resources=resources,
            global_size=sizes if key == "global" else None,
            workgroups=sizes if key == "workgroups" else None,
            line=line,
            column=column,
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


def _inside(path: str, roots: Sequence[str]) -> bool:
    """``path`` is one of ``roots`` or lies under one (all real paths)."""
    return any(path == root or path.startswith(root.rstrip(os.sep) + os.sep) for root in roots)
