"""A SPIR-V module as words: the header check and host-order words, without SPIRV-Tools.

Apart from :mod:`vgfc.spirv.spirv_tools` so that reading a module (reflection, a cached shader,
the target-profile checks) never loads the SPIRV-Tools library.
"""

from __future__ import annotations

from array import array

from vgfc.diagnostics import ShaderError

__all__ = ["HEADER_WORDS", "SPIRV_MAGIC", "check_binary", "words_of"]

SPIRV_MAGIC = 0x07230203
"""First word of every SPIR-V module."""
HEADER_WORDS = 5
"""Words of the module header: magic, version, generator, bound, schema."""


def check_binary(spirv: bytes) -> None:
    """Raise :class:`ShaderError` unless ``spirv`` is whole words starting with the magic."""
    if len(spirv) % 4:
        raise ShaderError(f"not a SPIR-V binary: {len(spirv)} bytes is not a whole number of words")
    if len(spirv) < 4 * HEADER_WORDS:
        raise ShaderError(
            f"not a SPIR-V binary: {len(spirv)} bytes is shorter than the 20-byte header"
        )
    magic = int.from_bytes(spirv[:4], "little")
    if magic != SPIRV_MAGIC and magic != int.from_bytes(SPIRV_MAGIC.to_bytes(4, "big"), "little"):
        raise ShaderError(
            f"not a SPIR-V binary: first word is 0x{magic:08x}, expected 0x{SPIRV_MAGIC:08x}"
        )


def words_of(spirv: bytes) -> array[int]:
    """The module's words in host order (big-endian modules are swapped, as the spec allows)."""
    check_binary(spirv)
    words = array("I", spirv)
    if words[0] != SPIRV_MAGIC:
        words.byteswap()
    return words
