"""Errors and warnings that point at the place in the model that caused them.

Every user-facing failure is a :class:`VgfcError`. Its :class:`Location` says which file, operator
(index, op, custom operator name and domain), tensor and attribute key it is about, and renders the
way a compiler does::

    model.tosa: op #3 CUSTOM 'blur' (com.arm.VulkanCustomShader): input_1_vkformat: unknown ...

Stages raise errors with as much of the location as they know; callers higher up fill in the rest
with :meth:`VgfcError.at` while the error unwinds, so a deep helper never needs the file name.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable

from vgfc.limits import LIMITS, clip, quote
from vgfc.record import asdict, fields, record, replace
from vgfc.warning_names import WARNINGS

__all__ = [
    "Diagnostic",
    "ErrorKind",
    "InputError",
    "InternalError",
    "Location",
    "Origin",
    "Place",
    "Severity",
    "ShaderError",
    "UnsupportedError",
    "VgfcError",
    "did_you_mean",
]


@record
class Origin:
    """What made an op that a kernel library bound or vgfc added for a custom op, as data: the
    resolve stage sets it on the op (:attr:`vgfc.ir.Operator.origin`) and every diagnostic raised
    at the op carries it (:meth:`vgfc.ir.Operator.where`). The attribute keys such a diagnostic
    names (``shader_code``, ``input_0_binding``) are not the op's but the library's, so its key is
    shown as the library's (:meth:`shown_key`)."""

    kind: str
    """``kernel`` (a library kernel the op runs as), ``compose`` (a built-in op an entry's
    ``compose`` made) or ``conversion`` (a CAST/TRANSPOSE/PAD/SLICE kernel selection inserted)."""
    entry: str
    """The library entry's label (``TFL/Op``)."""
    file: str
    """The library file as the user gave it (or ``mediapipe`` for a bundled one)."""
    line: int
    """The line that declares the kernel (``kernel``), else the entry."""
    kernel: str | None = None
    """The kernel's name (``kernel`` and ``conversion``)."""
    shader: str | None = None
    """The kernel's shader file name (``swish.comp``): what ``shader_code`` is shown as."""
    operands: tuple[tuple[str, str], ...] = ()
    """(``input_0``, the entry's name for that operand): ``input_0_binding`` is shown as
    ``resources.x``."""
    shader_file: str | None = None
    """The kernel's shader file as an editor opens it: beside the library as the user named
    it (``kernels/swish.comp``), else its real path. Where ``shader_code:LINE:COL`` points."""
    column: int | None = None
    """The column of ``line``'s entry or kernel, for gcc's first line (never in a message)."""

    def shown_key(self, key: str | None, op: str | None) -> str | None:
        """``key`` (an attribute key of the op, or ``None``) as a diagnostic shows it."""
        if self.kind == "conversion":
            return key
        return f"{self.file}:{self.line}: {self.detail(key, op)}"

    def detail(self, key: str | None, op: str | None) -> str:
        """:meth:`shown_key` without the library's file and line: ``TFL/Op: k: resources.x``."""
        if self.kind == "compose":
            return f"{self.entry}: compose: {op}" + (f": {key}" if key else "")
        shown = f"{self.entry}: {self.kernel}"
        if not key:
            return shown
        detail = self.shader if key == "shader_code" and self.shader is not None else key
        detail = {"entry_point": "shader.entry_point"}.get(detail, detail)
        for prefix, name in self.operands:
            if key.startswith(prefix + "_"):
                detail = f"resources.{name}"
        return f"{shown}: {detail}"


@record
class Place:
    """The file a diagnostic's first line starts with, as gcc writes it (``FILE:LINE:COL``):
    what an editor or a CI problem matcher jumps to."""

    file: str
    line: int | None = None
    column: int | None = None

    def render(self) -> str:
        if self.line is None:
            return self.file
        return f"{self.file}:{self.line}" + (f":{self.column}" if self.column is not None else "")


@record
class Location:
    """Where a diagnostic points. Every field is optional; present ones are rendered in order."""

    file: str | None = None
    """Path of the model (or VGF, or kernel library) file as the user gave it."""
    file_line: int | None = None
    """A line of the file itself (a kernel library's), 1-based."""
    file_column: int | None = None
    """A column in that line, 1-based."""
    op_index: int | None = None
    """Index of the operator in the main block, in program order."""
    op: str | None = None
    """TOSA op name, e.g. ``CONV2D`` or ``CUSTOM``."""
    name: str | None = None
    """The custom operator's ``operator_name`` (CUSTOM ops only)."""
    domain: str | None = None
    """The custom operator's ``domain_name`` (CUSTOM ops only)."""
    tensor: str | None = None
    """A tensor the diagnostic is about."""
    key: str | None = None
    """An attribute key, e.g. ``input_1_vkformat``."""
    line: int | None = None
    """A line in the text the key holds (a shader's source), 1-based."""
    column: int | None = None
    """A column in that line, 1-based."""
    instruction: int | None = None
    """An instruction of the SPIR-V module the key holds, 1-based from the first one after the
    header: spirv-val's ``line N``, the line ``spirv-dis --no-header`` prints it on."""
    origin: Origin | None = None
    """What made the op, where a kernel library did (or vgfc added it for a custom op): the key
    is shown as the library's (:attr:`shown_key`)."""
    source: str | None = None
    """The file ``line`` and ``column`` point into where it is not the model: a kernel's shader
    file, as an editor opens it (``vgfc kernels`` sets it; a bound kernel's is its origin's)."""

    def __post_init__(self) -> None:
        # Names and keys come from the model: shown on one line, a long one cut.
        for name in ("name", "domain", "tensor", "key"):
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, _one_line(value))

    @property
    def shown_key(self) -> str | None:
        """The key as rendered: the attribute key, or for an op a library made, the library's
        name for it after the entry and kernel (``lib.yaml:12: TFL/Op: k: resources.x``)."""
        if self.origin is None:
            return self.key
        shown = self.origin.shown_key(self.key, self.op)
        return _one_line(shown) if shown is not None else None

    def merged(self, other: Location) -> Location:
        """This location with the gaps filled from ``other`` (fields already set win)."""
        # Called for every key of every custom op, error or not: the fields are taken as they
        # are (both sides were checked by __post_init__ already), without building a dict.
        merged = object.__new__(Location)
        for name in _LOCATION_FIELDS:
            mine = getattr(self, name)
            object.__setattr__(merged, name, mine if mine is not None else getattr(other, name))
        return merged

    def render(self) -> str:
        """``file: op #i OP 'name' (domain): tensor 't': key``, without a trailing colon."""
        parts: list[str] = []
        if self.file is not None:
            # The column belongs to the first line's place (split); a location quoted in a
            # message, or in a note, names the file and line.
            parts.append(Place(self.file, self.file_line).render())
        if self.op_index is not None or self.op is not None:
            words = []
            if self.op_index is not None:
                words.append(f"op #{self.op_index}")
            if self.op is not None:
                words.append(self.op)
            if self.name:
                words.append(f"'{self.name}'")
            if self.domain:
                words.append(f"({self.domain})")
            parts.append(" ".join(words))
        if self.tensor is not None:
            parts.append(f"tensor '{self.tensor}'")
        key = self.shown_key
        if self.source is not None and self.line is not None:  # a line of another file
            if key is not None:
                parts.append(key)
            parts.append(Place(self.source, self.line, self.column).render())
        elif key is not None or self.line is not None:
            where = key if key is not None else "line"
            if self.line is not None:
                where += f":{self.line}" if key is not None else f" {self.line}"
                if self.column is not None:
                    where += f":{self.column}"
            parts.append(where)
        if self.instruction is not None:
            parts.append(f"instruction {self.instruction}")
        return ": ".join(parts)

    def split(self) -> tuple[Place | None, str, str | None]:
        """(the place, the context, a note) of gcc's form ``PLACE: error: CONTEXT: message``
        followed by ``note: in NOTE``: the place is the shader file and line of a kernel's
        shader, the library and line of an op a library made, else the file (the model); the
        operator's context follows in the note where the place is not the model."""
        origin = self.origin
        if origin is not None and origin.kind != "conversion":
            # The shader file, or the file it includes that the line is in.
            source = (self.source or origin.shader_file) if self.key == "shader_code" else None
            op = replace(self, key=None, line=None, column=None, origin=None, source=None)
            if source is not None and self.line is not None:
                note = replace(self, line=None, column=None).render()
                return Place(source, self.line, self.column), "", note
            context = origin.detail(self.key, self.op)
            if self.line is not None:
                context += f":{self.line}" + (f":{self.column}" if self.column else "")
            return Place(origin.file, origin.line, origin.column), context, op.render() or None
        if self.source is not None and self.line is not None:
            rest = replace(self, line=None, column=None, source=None)
            return Place(self.source, self.line, self.column), "", rest.render() or None
        if self.file is not None:
            rest = replace(self, file=None, file_line=None, file_column=None)
            return Place(self.file, self.file_line, self.file_column), rest.render(), None
        return None, self.render(), None

    def as_dict(self) -> dict[str, object]:
        """The fields that are set, for JSON output: ``key`` as rendered, ``origin`` as data."""
        out: dict[str, object] = {}
        for name in _LOCATION_FIELDS:
            value = self.shown_key if name == "key" else getattr(self, name)
            if value is not None:
                out[name] = asdict(value)
        return out


def _one_line(value: str) -> str:
    """``value`` (a name or key from the model) fit for one line of a message: cut when long."""
    if len(value) > LIMITS.location_field_length or not value.isprintable():
        # Room for the "... (N characters)" that follows the cut text.
        return quote(value, LIMITS.location_field_length - 30)
    return value


_LOCATION_FIELDS = fields(Location)


class ErrorKind(enum.Enum):
    """What went wrong, in the terms a user acts on. Decides the exit code."""

    INPUT = "input"
    """The model or an option is malformed or breaks a contract: fix the input."""
    UNSUPPORTED = "unsupported"
    """Valid input that vgfc does not handle (yet)."""
    SHADER = "shader"
    """A shader failed to compile, validate or match its declaration."""
    INTERNAL = "internal"
    """A bug in vgfc: please report it."""


class Severity(enum.Enum):
    ERROR = "error"
    WARNING = "warning"
    NOTE = "note"
    """Worth knowing, nothing wrong: a documented idiom vgfc recognised (a raw-bits view)."""


@record
class Diagnostic:
    """One message with its location; errors become :class:`VgfcError`, warnings are collected."""

    severity: Severity
    message: str
    location: Location = Location()
    excerpt: tuple[str, ...] = ()
    """Lines shown under the message: the offending source line and a caret under the column."""
    name: str | None = None
    """The warning's name (:data:`vgfc.warning_names.WARNINGS`): every warning has one, and an
    error keeps it where ``-Werror`` made the warning one."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "message", clip(self.message, LIMITS.message_length))
        if self.severity is Severity.WARNING and self.name is None:
            raise AssertionError(f"a warning without a name: {self.message}")
        if self.name is not None and self.name not in WARNINGS:
            raise AssertionError(f"{self.name!r} is not in vgfc.warning_names.WARNINGS")

    @property
    def tag(self) -> str:
        """`` [-Wname]`` (`` [-Werror=name]`` for a warning made an error), or nothing."""
        if self.name is None:
            return ""
        return f" [-Werror={self.name}]" if self.severity is Severity.ERROR else f" [-W{self.name}]"

    def render(self) -> str:
        """``location: message [-Wname]``; callers put the severity label in front."""
        prefix = self.location.render()
        text = f"{prefix}: {self.message}" if prefix else self.message
        return text + self.tag

    def lines(self, label: str | None = None) -> list[str]:
        """The diagnostic as printed, in gcc's form: ``PLACE: LABEL: CONTEXT: message
        [-Wname]`` (``LABEL: ...`` where nothing has a file), the excerpt indented under it,
        then ``note: in ...`` with the operator where the place is a library or shader file."""
        label = label or self.severity.value
        place, context, note = self.location.split()
        text = f"{context}: {self.message}" if context else self.message
        first = f"{place.render()}: {label}: {text}" if place else f"{label}: {text}"
        out = [first + self.tag, *(f"    {x}" for x in self.excerpt)]
        if note:
            out.append(f"note: in {note}")
        return out

    def as_dict(self) -> dict[str, object]:
        out: dict[str, object] = {
            "severity": self.severity.value,
            "message": self.message,
            "location": self.location.as_dict(),
            "text": self.render(),
        }
        if self.excerpt:
            out["excerpt"] = list(self.excerpt)
        if self.name is not None:
            out["name"] = self.name
        return out


class VgfcError(Exception):
    """The one error type vgfc raises for anything a user can cause or should see."""

    kind: ErrorKind = ErrorKind.INPUT
    name: str | None = None
    """The warning's name, where ``-Werror`` made a warning this error."""

    def __init__(
        self,
        message: str,
        location: Location | None = None,
        *,
        excerpt: tuple[str, ...] = (),
        **where: object,
    ) -> None:
        loc = location or Location()
        if where:
            loc = replace(loc, **where)
        self.message = clip(message, LIMITS.message_length)
        self.location = loc
        self.excerpt = excerpt
        super().__init__(self.render())

    def at(self, location: Location | None = None, **where: object) -> VgfcError:
        """Fill in location fields this error does not have yet; returns ``self`` for ``raise``."""
        extra = location or Location()
        if where:
            extra = replace(extra, **where)
        self.location = self.location.merged(extra)
        self.args = (self.render(),)
        return self

    @property
    def diagnostic(self) -> Diagnostic:
        return Diagnostic(Severity.ERROR, self.message, self.location, self.excerpt, self.name)

    def render(self) -> str:
        return self.diagnostic.render()

    def __str__(self) -> str:
        return self.render()


class InputError(VgfcError):
    kind = ErrorKind.INPUT


class UnsupportedError(VgfcError):
    kind = ErrorKind.UNSUPPORTED


class ShaderError(VgfcError):
    kind = ErrorKind.SHADER


class InternalError(VgfcError):
    kind = ErrorKind.INTERNAL


def did_you_mean(word: str, choices: Iterable[str], *, cutoff: float = 0.6) -> str:
    """`` (did you mean X?)`` for the closest choice, or an empty string when none is close
    (difflib's ratio under ``cutoff``)."""
    if len(word) > LIMITS.name_length_max:
        return ""  # nothing that long is close to a name, and comparing it costs time
    import difflib  # only for a message that offers a name

    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=cutoff)
    return f" (did you mean {close[0]}?)" if close else ""
