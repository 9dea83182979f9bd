"""The includer glslang calls for ``#include``: confined to the include folders, and recorded.

A shader comes from a model, and a model comes from anyone: an include must not read the
machine's files. :class:`Includer` resolves a name only inside the include folders, reads each
file through :func:`vgfc.files.inputs.open_input` within the include limits, and records every
path it looked at with what it found there (:data:`IncludeProbe`), which is what the shader cache
checks before it reuses a binary (:mod:`vgfc.shader.cache_entries`).
"""

from __future__ import annotations

import ctypes
import hashlib
import os
from pathlib import Path
from typing import Any, TypeAlias

from vgfc.shader.glslang_abi import Callbacks, FreeFunc, IncludeFunc, IncludeResult

__all__ = ["IncludeProbe", "Includer"]

IncludeProbe: TypeAlias = tuple[str, str | None]
"""A path the includer looked at, and the SHA-256 (hex) of the file it read there, or ``None``
when no file was there and the search went on."""


class Includer:
    """Resolves ``#include`` for glslang, confined to the include folders.

    A shader comes from a model, and a model comes from anyone: an include must not read the
    machine's files (``#include "/etc/passwd"`` would show its first line in the error). So a
    name resolves only inside ``include_dirs`` (``-I``, and a kernel library's own include
    folders): an absolute name is refused, and every candidate's *real* path (``..`` and
    symlinks resolved) must lie inside one of the folders' real paths. ``"name"`` also looks
    in the including file's folder when that file is itself inside an include folder (the
    shader a model carries has no folder). A refusal names the include, never anything of the
    file it would have read. Files are opened through :func:`vgfc.files.inputs.open_input` (no FIFO,
    no device), each at most ``include_file_bytes_max`` bytes and all of one shader's
    includes together ``include_bytes_max``."""

    def __init__(self, include_dirs: tuple[str, ...]) -> None:
        self.dirs = [Path(d) for d in include_dirs]
        self.roots = tuple(os.path.realpath(d) for d in include_dirs)
        self.errors: list[str] = []
        self.probes: list[IncludeProbe] = []
        """Every candidate path looked at, with what was found there (see :class:`Compiled`)."""
        self.read = 0
        """Bytes the includes read so far."""
        self.texts: dict[str, str] = {}
        """Each file read, by the name glslang's log gives it: for an error's source line."""
        # Results glslang still holds, by address, with the buffers they point into.
        self._live: dict[int, tuple[Any, ...]] = {}
        self.callbacks = Callbacks(
            IncludeFunc(self._include_system),
            IncludeFunc(self._include_local),
            FreeFunc(self._release),
        )

    def _include_local(self, _ctx: Any, name: bytes, includer: bytes, depth: int) -> int | None:
        first = []
        if includer:
            # The including file's folder as that file was named (relative to a relative -I):
            # a nested include is then named, in the depfile and in errors, the way the user
            # wrote the include folder, as gcc names it. Confinement checks real paths anyway.
            given = os.path.dirname(includer.decode(errors="replace"))
            if self._inside(os.path.realpath(given or ".")):
                first.append(Path(given))
        return self._include(name.decode(errors="replace"), first + self.dirs, depth)

    def _include_system(self, _ctx: Any, name: bytes, _includer: bytes, depth: int) -> int | None:
        return self._include(name.decode(errors="replace"), self.dirs, depth)

    def _inside(self, real: str) -> bool:
        return any(
            real == root or real.startswith(root.rstrip(os.sep) + os.sep) for root in self.roots
        )

    def _include(self, name: str, folders: list[Path], depth: int) -> int | None:
        # Exceptions must not cross into C: problems are noted and glslang reports the include.
        try:
            return self._resolve(name, folders, depth)
        except Exception as e:  # whatever it is, glslang must not see it
            self._note(f"{_quoted(name)}: cannot include it: {type(e).__name__}")
            return None

    def _resolve(self, name: str, folders: list[Path], depth: int) -> int | None:
        from vgfc.diagnostics import VgfcError
        from vgfc.files.inputs import open_input
        from vgfc.limits import LIMITS

        shown = _quoted(name)
        if depth > LIMITS.include_depth_max:
            self._note(f"{shown}: includes nested deeper than {LIMITS.include_depth_max}")
            return None
        if os.path.isabs(name) or name.startswith(("/", "\\")):
            self._note(
                f"{shown}: an absolute path; an #include resolves only inside the include "
                "folders (-I)"
            )
            return None
        for folder in folders:
            path = folder / name
            real = os.path.realpath(path)
            try:
                os.stat(real)
            except FileNotFoundError:
                self.probes.append((str(path), None))
                continue
            except OSError as exc:
                from vgfc.files.inputs import _reason

                self._note(f"{shown}: {_reason(exc)}")
                return None
            if not self._inside(real):
                self._note(f"{shown}: resolves outside the include folders (-I), so it is not read")
                return None
            try:
                with open_input(
                    real,
                    what="include",
                    limit=LIMITS.include_file_bytes_max,
                    limit_name="include_file_bytes_max",
                    shown=str(path),
                ) as f:
                    if self.read + f.size > LIMITS.include_bytes_max:
                        self._note(
                            f"{shown}: the includes of this shader would read more than "
                            f"{LIMITS.include_bytes_max} bytes together (include_bytes_max)"
                        )
                        return None
                    data = f.read()
                text = data.decode()
            except VgfcError as exc:
                self._note(exc.message.replace("cannot read the include: ", f"{path}: "))
                return None
            except UnicodeDecodeError as exc:
                self._note(f"{path}: not UTF-8 text: {exc.reason} at byte {exc.start}")
                return None
            self.read += len(data)
            self.texts[str(path)] = text
            self.probes.append((str(path), hashlib.sha256(data).hexdigest()))
            name_buffer = ctypes.create_string_buffer(str(path).encode())
            data_buffer = ctypes.create_string_buffer(data)
            result = IncludeResult(
                ctypes.addressof(name_buffer), ctypes.addressof(data_buffer), len(data)
            )
            self._live[ctypes.addressof(result)] = (result, name_buffer, data_buffer)
            return ctypes.addressof(result)
        where = ", ".join(str(d) for d in self.dirs) or "no include directories given"
        self._note(f"{shown}: not found (searched: {where})")
        return None

    def _note(self, message: str) -> None:
        if message not in self.errors:
            self.errors.append(message)

    def _release(self, _ctx: Any, address: int | None) -> int:
        self._live.pop(address or 0, None)
        return 0


def _quoted(name: str) -> str:
    from vgfc.limits import quote

    return quote(name)
