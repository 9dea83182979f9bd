"""The read stage: a TOSA flatbuffer (or TOSA MLIR, through :mod:`vgfc.read.mlir`) ->
:class:`vgfc.ir.Graph`.

:mod:`vgfc.read.reader` walks the flatbuffer and builds the IR (:mod:`vgfc.read.bulk` reads
big tables for it with numpy), :mod:`vgfc.read.buffer` decodes tables, vectors and strings
straight from the bytes, :mod:`vgfc.read.values` turns fields into IR values (names, attributes),
and :mod:`vgfc.read.schema` takes every field's position from tosa-tools' generated ``tosa``
package, which stays the specification.
This is the only package that knows the TOSA schema.
"""

from __future__ import annotations

from vgfc.read.reader import SUPPORTED_VERSIONS_TEXT, is_supported, load, load_flatbuffer, loads

__all__ = ["SUPPORTED_VERSIONS_TEXT", "is_supported", "load", "load_flatbuffer", "loads"]
