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
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["SourceMessage", "excerpt", "parse_log"]

_LINE = re.compile(r"^(?:INTERNAL )?ERROR: (?:(\d+):(\d+):)?\s*(.*?)\s*$")
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


@dataclass(frozen=True, slots=True)
class SourceMessage:
    line: int | None
    column: int | None
    message: str
    source_line: str | None


def parse_log(log: str, source: str | None) -> list[SourceMessage]:
    """The errors of a glslang info log, noise dropped, positions found in ``source``."""
    lines = source.splitlines() if source is not None else []
    out: list[SourceMessage] = []
    for raw in log.splitlines():
        match = _LINE.match(raw)
        if not match:
            continue
        text = match.group(3)
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
        number = int(match.group(2)) if match.group(2) else None
        code = lines[number - 1] if number is not None and 0 < number <= len(lines) else None
        column = None
        if code is not None and token and code.count(token) == 1:
            column = code.index(token) + 1
        out.append(SourceMessage(number, column, text, code))
    return out


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
