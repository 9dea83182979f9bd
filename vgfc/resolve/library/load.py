"""Reading ``--kernels`` values (a bundled library's name, or a file) into checked
:class:`~vgfc.resolve.library.records.Library` records.

A library is read through :func:`vgfc.files.inputs.read_text` (a regular file of at most
``library_bytes_max`` bytes), parsed and validated (:mod:`vgfc.resolve.library.yaml_front`),
then each operator is checked and built (:mod:`vgfc.resolve.library.read_entry`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from vgfc.diagnostics import InputError
from vgfc.limits import LIMITS
from vgfc.resolve.library.read_entry import Reader
from vgfc.resolve.library.records import BUNDLED, Library
from vgfc.resolve.library.yaml_front import read_document

__all__ = ["MAX_LIBRARY_BYTES", "bundled_path", "library_file", "load_libraries", "load_library"]

MAX_LIBRARY_BYTES = LIMITS.library_bytes_max


def load_library(
    path: str | os.PathLike[str],
    shown: str | None = None,
    include_dirs: Sequence[str | os.PathLike[str]] = (),
) -> Library:
    """Read, validate and check one library file. Raises :class:`InputError`.

    ``include_dirs``: the folders the user names with ``-I``, where the library's shader files
    and include folders may lie besides its own folder."""
    from vgfc.files.inputs import read_text, shown_path

    file = Path(path)
    shown = shown or shown_path(path)
    text = read_text(
        file,
        what="kernel library",
        limit=LIMITS.library_bytes_max,
        limit_name="library_bytes_max",
        shown=shown,
    )
    data, lines = read_document(text, shown)
    library = Library(Path(os.path.realpath(file)), shown, str(data.get("name") or file.stem))
    reader = Reader(library, data, lines, include_dirs)
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


def bundled_path(name: str) -> Path:
    """The file of a bundled library."""
    return Path(__file__).resolve().parents[2] / "kernels" / name / f"{name}.yaml"


def load_libraries(
    specs: Sequence[str | os.PathLike[str]],
    include_dirs: Sequence[str | os.PathLike[str]] = (),
) -> tuple[Library, ...]:
    """Each ``--kernels`` value: a bundled library's name or a file. ``include_dirs``: the
    user's ``-I`` folders (see :func:`load_library`). Raises InputError."""
    out = []
    for spec in specs:
        text = os.fspath(spec)
        path = library_file(text)
        if path != Path(text):
            out.append(load_library(path, text, include_dirs))
        else:
            out.append(load_library(text, include_dirs=include_dirs))
    return tuple(out)


def library_file(spec: str | os.PathLike[str]) -> Path:
    """The file a ``--kernels`` value names: a bundled library's, unless a file of that name
    is there."""
    text = os.fspath(spec)
    if text in BUNDLED and not Path(text).exists():
        return bundled_path(text)
    return Path(text)
