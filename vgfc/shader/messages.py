"""glslang's info log -> compiler-style diagnostics: line, column, message, source excerpt.

glslang 13 reports ``ERROR: 0:8: ';' : syntax error, unexpected SEMICOLON, expecting ...`` with
no column, glslang's own token names and a tail of follow-on lines (``compilation terminated``,
``2 compilation errors``). A user wants what a C compiler prints::

    shader_code:8:12: syntax error, unexpected ';'
        x[0] = 1.0;;
                   ^

So each log line is split into its line number, the token it is about and the message; token
names become the characters they stand for; the column is where the token occurs in that source
line, given only when it occurs there exactly once (a guessed caret would mislead). Nothing here
changes what glslang decided; it only reshapes how it is said.

SPIR-V validation errors get the same shape (:func:`split_validation`, :func:`line_of`):
SPIRV-Tools names the offending instruction by its number, 1-based from the first instruction
after the header (spirv-val prints it as ``line N``; it is line N of ``spirv-dis --no-header``),
and appends it disassembled. So a SPIR-V shader's error reads::

    shader_code: instruction 51: SPIR-V validation failed: ID '9999[%9999]' has not been defined
        OpStore %9999 %21

and one compiled from GLSL or HLSL points at the source line whose ``OpLine`` (from a debug
build, made only once validation has failed) covers the instruction. Reflection errors point at
the declaration of a binding in the source (:func:`declaration`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from vgfc.record import record

__all__ = [
    "LOCAL_SIZE",
    "SourceMessage",
    "Validation",
    "declaration",
    "excerpt",
    "line_of",
    "named_line",
    "only_line",
    "opcode_at",
    "parse_log",
    "source_excerpt",
    "split_validation",
]

_LINE = re.compile(r"^(?:INTERNAL )?ERROR: (?:(?:\d+|([^'\n]+?)):(\d+):)?\s*(.*?)\s*$")
"""``ERROR: 0:8: text`` (the shader itself, string 0) or ``ERROR: include/a.glsl:3: text`` (an
included file, by the name the includer gave it)."""
_NUMBERED = re.compile(r"(\d+):\s*(.*?)\s*$")
_TOKEN = re.compile(r"^'(.*?)'\s*:\s*(.*)$")
_NOISE = re.compile(r"^(?:\d+ compilation errors\.|compilation terminated$)")
_UNEXPECTED = re.compile(r"unexpected ([A-Z_]+)")
_EXPECTING = re.compile(r",\s*expecting .*$")

TOKEN_TEXT = {
    "SEMICOLON": ";",
    "COMMA": ",",
    "COLON": ":",
    "DOT": ".",
    "EQUAL": "=",
    "LEFT_PAREN": "(",
    "RIGHT_PAREN": ")",
    "LEFT_BRACE": "{",
    "RIGHT_BRACE": "}",
    "LEFT_BRACKET": "[",
    "RIGHT_BRACKET": "]",
    "PLUS": "+",
    "DASH": "-",
    "STAR": "*",
    "SLASH": "/",
    "PERCENT": "%",
    "LEFT_ANGLE": "<",
    "RIGHT_ANGLE": ">",
    "BANG": "!",
    "QUESTION": "?",
    "AMPERSAND": "&",
    "VERTICAL_BAR": "|",
    "CARET": "^",
    "TILDE": "~",
}
"""glslang's grammar token names -> the text they stand for."""


@record
class SourceMessage:
    line: int | None
    column: int | None
    message: str
    source_line: str | None
    file: str | None = None
    """The included file the line is in (as the includer named it), ``None``: the shader."""


def parse_log(
    log: str, source: str | None, included: Mapping[str, str] | None = None
) -> list[SourceMessage]:
    """The errors of a glslang info log, noise dropped, positions found in ``source`` or, for a
    line of an included file, in that file's text (``included``, by the includer's name)."""
    own = source.splitlines() if source is not None else []
    texts = included or {}
    # Longest first: a name may hold ':3:' or be the start of another one.
    names = sorted(texts, key=len, reverse=True)
    out: list[SourceMessage] = []
    for raw in log.splitlines():
        split = _split(raw, names)
        if split is None:
            continue
        file, number, text = split
        lines = own if file is None else texts.get(file, "").splitlines()
        token = ""
        tok = _TOKEN.match(text)
        if tok:
            token, text = tok.group(1), tok.group(2).strip()
        if _NOISE.search(text):
            continue
        unexpected = _UNEXPECTED.search(text)
        if unexpected:
            word = unexpected.group(1)
            shown = TOKEN_TEXT.get(word)
            text = _EXPECTING.sub("", text)
            if shown is not None:
                text = text.replace(f"unexpected {word}", f"unexpected '{shown}'")
                token = token or shown
        elif token:
            text = f"'{token}': {text}"
        code = lines[number - 1] if number is not None and 0 < number <= len(lines) else None
        column = None
        if code is not None and token and code.count(token) == 1:
            column = code.index(token) + 1
        out.append(SourceMessage(number, column, text, code, file))
    return out


def _split(raw: str, names: list[str]) -> tuple[str | None, int | None, str] | None:
    """(the included file or ``None``, the line, the text) of one log line; ``None``: not an
    error line. A file the includer read is matched by its whole name."""
    for name in names:
        head = f"ERROR: {name}:"
        if raw.startswith(head):
            line = _NUMBERED.match(raw, len(head))
            if line:
                return name, int(line.group(1)), line.group(2)
    match = _LINE.match(raw)
    if not match:
        return None
    return match.group(1), int(match.group(2)) if match.group(2) else None, match.group(3)


def excerpt(message: SourceMessage) -> tuple[str, ...]:
    """The source line, and a caret under the column when there is one."""
    if message.source_line is None:
        return ()
    code = message.source_line.expandtabs(4).rstrip()
    if len(code) > 160:
        return ()
    if message.column is None:
        return (code,)
    prefix = message.source_line[: message.column - 1].expandtabs(4)
    return (code, " " * len(prefix) + "^")


# --- SPIR-V validation ------------------------------------------------------------------------


@record
class Validation:
    """A validator message taken apart."""

    message: str
    """What is wrong, on one line, without the instruction."""
    instruction: int
    """The offending instruction's number (1-based from the first after the header); 0: none."""
    disassembly: str | None
    """That instruction as ``spirv-dis`` prints it (friendly names, no indent)."""


def split_validation(message: str, instruction: int, spirv: bytes) -> Validation:
    """Separate SPIRV-Tools' message from the disassembled instruction it appends (an indented
    last line); when it has none, disassemble the instruction from ``spirv``."""
    lines = [line for line in message.strip().splitlines() if line.strip()]
    disassembly = None
    if instruction and len(lines) > 1 and lines[-1].startswith((" ", "\t")):
        disassembly = lines.pop().strip()
    text = "; ".join(line.strip() for line in lines) or "no diagnostic from SPIRV-Tools"
    if instruction and disassembly is None:
        disassembly = _disassemble_one(spirv, instruction)
    return Validation(text, instruction, disassembly)


def _instructions(spirv: bytes) -> list[tuple[int, int]]:
    """(word offset, word count) of each instruction, up to the first malformed one."""
    from vgfc.spirv.binary import words_of

    words = words_of(spirv)
    out, index = [], 5
    while index < len(words):
        count = words[index] >> 16
        if count == 0 or index + count > len(words):
            break
        out.append((index, count))
        index += count
    return out


def opcode_at(spirv: bytes, instruction: int) -> int | None:
    """The opcode of instruction number ``instruction`` (1-based), if the module has it."""
    from vgfc.spirv.binary import words_of

    found = _instructions(spirv)
    if not 0 < instruction <= len(found):
        return None
    return int(words_of(spirv)[found[instruction - 1][0]] & 0xFFFF)


def _disassemble_one(spirv: bytes, instruction: int) -> str | None:
    """One instruction, disassembled on its own (numeric ids: its names are elsewhere)."""
    from vgfc.diagnostics import VgfcError
    from vgfc.spirv.spirv_tools import disassemble, words_of

    found = _instructions(spirv)
    if not 0 < instruction <= len(found):
        return None
    start, count = found[instruction - 1]
    words = words_of(spirv)
    try:
        text = disassemble((words[:5] + words[start : start + count]).tobytes())
    except VgfcError:  # an instruction the disassembler cannot read either
        return None
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines and not lines[-1].startswith(";") else None


def line_of(spirv: bytes, instruction: int) -> int | None:
    """The source line the ``OpLine`` covering instruction number ``instruction`` gives, when
    it is a line of the main source (``OpSource``'s file), not of an included file."""
    from vgfc.spirv.binary import words_of
    from vgfc.spirv.grammar import opcode

    op_line, op_no_line = opcode("OpLine"), opcode("OpNoLine")
    op_source, op_label, op_end = opcode("OpSource"), opcode("OpLabel"), opcode("OpFunctionEnd")
    words = words_of(spirv)
    main: int | None = None
    current: tuple[int, int] | None = None  # (file id, line)
    for number, (start, count) in enumerate(_instructions(spirv), 1):
        op = words[start] & 0xFFFF
        if op == op_label:  # a new block: an OpLine before it does not reach into it
            current = None
        if number == instruction:
            if current is None or main is None or current[0] != main:
                return None
            return current[1] or None
        if op == op_source and count > 3:
            main = words[start + 3]
        elif op == op_line and count > 3:
            current = (words[start + 1], words[start + 2])
        elif op in (op_no_line, op_end):
            current = None
    return None


_NAMED = re.compile(
    r"^(?:%(?P<result>[A-Za-z]\w*) = Op(?:TypeStruct|Variable|Function)\b"
    r"|Op(?:Member)?(?:Decorate|Name)\w* %(?P<target>[A-Za-z]\w*)\b"
    r"|(?P<local_size>OpExecutionMode(?:Id)? %\S+ LocalSize(?:Id)?\b))"
)
LOCAL_SIZE = re.compile(r"\blocal_size_[xyz]\b|\bnumthreads\b")
"""Where a GLSL or HLSL source sets its workgroup size."""


def named_line(disassembly: str | None, source: str) -> int | None:
    """The one source line that declares what an instruction outside any function is about:
    a block or struct, a variable or a function it defines, the target of a decoration (by
    name), the workgroup size (``local_size_x``, ``numthreads``). ``None`` for anything else
    (a type's or a constant's friendly name is made up by the disassembler, not taken from the
    source), or when no line or several lines match (the line shown must be the one meant)."""
    found = _NAMED.match(disassembly or "")
    if found is None:
        return None
    if found.group("local_size"):
        return only_line(source, LOCAL_SIZE)
    name = found.group("result") or found.group("target")
    return only_line(source, re.compile(rf"\b{re.escape(name)}\b"))


def only_line(source: str, pattern: re.Pattern[str]) -> int | None:
    """The number of the one line of ``source`` (``//`` comments aside) where ``pattern``
    occurs; ``None`` when none or several do."""
    hits = [
        number
        for number, line in enumerate(source.splitlines(), 1)
        if pattern.search(line.split("//", 1)[0])
    ]
    return hits[0] if len(hits) == 1 else None


# --- declarations -----------------------------------------------------------------------------

_GLSL_LAYOUT = re.compile(r"\blayout\s*\(([^)]*)\)")
_GLSL_QUALIFIER = re.compile(r"\b(set|binding)\s*=\s*(\d+)\b")
_HLSL_VK_BINDING = re.compile(r"\[\[\s*vk::binding\s*\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\)\s*\]\]")
_HLSL_REGISTER = re.compile(r"\bregister\s*\(\s*[A-Za-z](\d+)\s*(?:,\s*space(\d+)\s*)?\)")


def declaration(source: str, language: str, set_: int, binding: int) -> int | None:
    """The line of ``source`` that declares descriptor ``set_``/``binding``: GLSL's
    ``layout(set = S, binding = B)`` (set 0 when not given), HLSL's ``[[vk::binding(B, S)]]``
    or else ``register(xB, spaceS)``. ``None`` when no line or several lines do (a binding
    given by a macro, say, or declared twice under ``#if``)."""
    hits = []
    for number, line in enumerate(source.splitlines(), 1):
        code = line.split("//", 1)[0]
        if (set_, binding) in _bindings(code, language):
            hits.append(number)
    return hits[0] if len(hits) == 1 else None


def _bindings(code: str, language: str) -> set[tuple[int, int]]:
    """(set, binding) pairs one line of source declares."""
    out: set[tuple[int, int]] = set()
    if language == "GLSL":
        for layout in _GLSL_LAYOUT.finditer(code):
            qualifiers = dict(_GLSL_QUALIFIER.findall(layout.group(1)))
            if "binding" in qualifiers:
                out.add((int(qualifiers.get("set", 0)), int(qualifiers["binding"])))
    elif language == "HLSL":
        explicit = _HLSL_VK_BINDING.search(code) or _HLSL_REGISTER.search(code)
        if explicit:
            out.add((int(explicit.group(2) or 0), int(explicit.group(1))))
    return out


def source_excerpt(source: str, line: int | None) -> tuple[str, ...]:
    """Line ``line`` of ``source`` as an excerpt (no caret)."""
    lines = source.splitlines()
    if line is None or not 0 < line <= len(lines):
        return ()
    return excerpt(SourceMessage(line, None, "", lines[line - 1]))
