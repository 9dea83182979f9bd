"""The MLIR front end: TOSA MLIR (text or bytecode) -> a TOSA flatbuffer, through tosa-opt;
and back (:func:`deserialize`), for ``--dump-mlir``.

torch-mlir, IREE, onnx-mlir and TFLite's legalizer write TOSA as MLIR, and the reference
converter reads it. vgfc does not parse MLIR itself: the tosa-tools wheel it already depends on
ships the format owner's translator, ``tosa-opt``, whose ``--tosa-serialize`` writes the
flatbuffer the reader (:mod:`vgfc.read.reader`) then reads as any other. So the model is the
same one whichever form it came in, and the reference converter's VGF of the MLIR is its VGF of
that flatbuffer.

What a file is, is told by its content, never its name (:func:`form`): the flatbuffer
identifier ``TOSA`` at bytes 4 to 8, MLIR bytecode's magic ``ML\\xefR``, else MLIR text when the
first bytes hold no NUL byte (a flatbuffer's first word, an offset, always does).

How the translator runs (:func:`translate`, :func:`deserialize`, one runner):

- the program is found beside the installed tosa-tools package (its ``bin/``), not on PATH;
- the MLIR goes in on standard input, already read and size-checked by
  :func:`vgfc.files.inputs.open_input` (a FIFO, a folder or an over-long file is refused before
  the translator starts); the flatbuffer comes back through an anonymous file (no name on disk,
  so nothing survives the command, whether it ends by an error, Ctrl-C or SIGKILL); to print
  a flatbuffer as MLIR, the flatbuffer goes in through such a file and the text comes back on
  standard output;
- the graph's inputs and outputs keep the module's names (:data:`_KEEP_NAMES`), as vgfc keeps a
  flatbuffer's; tosa-opt's own default, ``TosaInput_0``, is left to those the module leaves
  unnamed;
- it is bounded as a shader worker is: CPU time and address space (``setrlimit``, from
  :data:`vgfc.limits.LIMITS`), a wall-clock backstop far above the CPU time
  (:func:`vgfc.processes.backstop`), no core file, and it dies with vgfc;
- its first ``error:`` becomes an :class:`~vgfc.diagnostics.InputError` at MLIR's own place:
  ``model.mlir:12:5: error: ...`` (a location the module itself declares, ``loc("net.py":3:1)``,
  is shown as that file's, with the model named in a note).
"""

from __future__ import annotations

import os
import re
import signal
from pathlib import Path

from vgfc.diagnostics import InputError, Location
from vgfc.limits import LIMITS, quote

TYPE_CHECKING = False
if TYPE_CHECKING:
    import mmap
    from collections.abc import Callable

__all__ = [
    "BYTECODE_MAGIC",
    "FLATBUFFER",
    "MLIR_BYTECODE",
    "MLIR_TEXT",
    "PACKAGE",
    "as_flatbuffer",
    "deserialize",
    "form",
    "to_json",
    "translate",
    "translator",
]

FLATBUFFER = "TOSA flatbuffer"
MLIR_BYTECODE = "TOSA MLIR bytecode"
MLIR_TEXT = "TOSA MLIR text"
BYTECODE_MAGIC = b"ML\xefR"
"""The first bytes of MLIR bytecode."""
PACKAGE = "tosa-tools"
"""The PyPI package that ships ``tosa-opt``."""

_IDENTIFIER = b"TOSA"
_TEXT_PROBE = 4096
"""Bytes at the start of a file looked at for a NUL byte, to tell text from binary."""
_ERROR = re.compile(r"^(?P<file>.*?):(?P<line>\d+):(?P<column>\d+): error: (?P<message>.*)$")
_STDIN = "<stdin>"
_KEEP_NAMES = "retain-graph-input-output-names=true"
"""The graph's inputs and outputs keep the names the module gives them (``tosa.tensor_name``,
what ``--tosa-deserialize`` prints): the MLIR of a flatbuffer compiles to that flatbuffer's VGF.
An argument or result without a name is ``TosaInput_N``/``TosaOutput_N``, N counting the unnamed
ones."""


def form(head: bytes | bytearray | memoryview) -> str | None:
    """What the bytes ``head`` (a file's first bytes, at least 8 when it has them) start:
    :data:`FLATBUFFER`, :data:`MLIR_BYTECODE`, :data:`MLIR_TEXT`, or ``None`` for binary data
    that is none of them (the flatbuffer reader then says why)."""
    head = bytes(head[:_TEXT_PROBE])
    if head[4:8] == _IDENTIFIER:
        return FLATBUFFER
    if head.startswith(BYTECODE_MAGIC):
        return MLIR_BYTECODE
    if head and b"\0" not in head:
        return MLIR_TEXT
    return None


_FOUND: Path | None = None


def translator() -> Path:
    """The ``tosa-opt`` program of the installed tosa-tools package (its ``bin/`` folder, where
    the wheel puts its native tools; the ``tosa-opt`` on PATH is a Python shim that finds the
    same file and costs an interpreter's start). Raises :class:`InputError` when there is none."""
    global _FOUND
    if _FOUND is not None and os.access(_FOUND, os.X_OK):
        return _FOUND
    from importlib import metadata

    name = "tosa-opt.exe" if os.name == "nt" else "tosa-opt"
    try:
        dist = metadata.distribution(PACKAGE)
    except metadata.PackageNotFoundError:
        raise InputError(
            f"reading TOSA MLIR needs tosa-opt, and {PACKAGE} is not installed "
            f"(pip install {PACKAGE})"
        ) from None
    path = Path(str(dist.locate_file(Path("bin") / name)))
    if not os.access(path, os.X_OK):
        raise InputError(
            f"reading TOSA MLIR needs tosa-opt, and the {PACKAGE} {dist.version} installation "
            "has none"
        )
    _FOUND = path
    return path


def translate(data: bytes | bytearray | memoryview | mmap.mmap, shown: str) -> mmap.mmap:
    """The TOSA flatbuffer of the MLIR ``data`` (text or bytecode), memory-mapped; ``shown``
    names the input in diagnostics. Raises :class:`InputError` for anything the translator
    refuses, and when it passes its limits."""
    import mmap
    import tempfile

    if len(data) > LIMITS.mlir_bytes_max:
        raise InputError(
            f"{len(data)} bytes of MLIR, more than the {LIMITS.mlir_bytes_max} a model given as "
            "MLIR may have (mlir_bytes_max)",
            Location(file=shown),
        )
    with tempfile.TemporaryFile(prefix="vgfc-mlir-") as out:
        fd = out.fileno()
        _run(
            [
                f"--tosa-serialize={_KEEP_NAMES}",
                f"--tosa-flatbuffer-filename=/dev/fd/{fd}",
                "-o",
                os.devnull,
            ],
            data,
            (fd,),
            len(data),
            shown,
            "translating the MLIR",
        )
        size = os.fstat(fd).st_size
        if size == 0:
            raise InputError(
                "the MLIR holds no TOSA graph to read (tosa-opt serialises a function "
                "'main' of TOSA operators)",
                Location(file=shown),
            )
        return mmap.mmap(fd, size, access=mmap.ACCESS_READ)


def deserialize(flatbuffer: bytes | bytearray | memoryview | mmap.mmap, shown: str) -> str:
    """The TOSA MLIR text of the TOSA flatbuffer ``flatbuffer``, as the translator prints it
    (``tosa-opt --tosa-deserialize`` on an empty module): the module the reference converter
    reads from that file. ``shown`` names the model in diagnostics. Raises
    :class:`InputError` when the translator cannot read it or passes its limits."""
    import tempfile

    # The flatbuffer goes in through an anonymous file and the module comes back through
    # another (tosa-opt writes its notes on standard output): nothing with a name is left.
    with (
        tempfile.TemporaryFile(prefix="vgfc-mlir-") as given,
        tempfile.TemporaryFile(prefix="vgfc-mlir-") as out,
    ):
        given.write(flatbuffer)
        given.flush()
        _run(
            [
                "--tosa-deserialize",
                f"--tosa-deserialize-filename=/dev/fd/{given.fileno()}",
                "-o",
                f"/dev/fd/{out.fileno()}",
            ],
            b"",
            (given.fileno(), out.fileno()),
            len(flatbuffer),
            shown,
            "printing the model as MLIR",
        )
        out.seek(0)
        return out.read().decode("utf-8", errors="replace")


def to_json(
    flatbuffer: bytes | bytearray | memoryview | mmap.mmap,
    schema: bytes,
    shown: str,
    schema_shown: str,
) -> bytes:
    """The JSON form of the TOSA flatbuffer ``flatbuffer``, written with the flatbuffer schema
    ``schema`` (a ``tosa.fbs``'s bytes, ``schema_shown`` its name) by the translator
    (``--tosa-serialize-json``): what the reference converter's ``--tosa-flatbuffer
    --tosa-flatbuffer-schema FILE`` writes. Raises :class:`InputError` for a schema or a model
    the translator refuses."""
    import tempfile

    with (
        tempfile.TemporaryFile(prefix="vgfc-mlir-") as given,
        tempfile.TemporaryFile(prefix="vgfc-mlir-") as rules,
        tempfile.TemporaryFile(prefix="vgfc-mlir-") as out,
    ):
        given.write(flatbuffer)
        given.flush()
        rules.write(schema)
        rules.flush()
        try:
            _run(
                [
                    "--tosa-deserialize",
                    f"--tosa-deserialize-filename=/dev/fd/{given.fileno()}",
                    "--tosa-serialize-json",
                    f"--tosa-flatbuffer-filename=/dev/fd/{out.fileno()}",
                    f"--tosa-flatbuffer-schema=/dev/fd/{rules.fileno()}",
                    "-o",
                    os.devnull,
                ],
                b"",
                (given.fileno(), rules.fileno(), out.fileno()),
                len(flatbuffer),
                shown,
                "writing the model as JSON",
                {rules.fileno(): schema_shown},
            )
        except InputError as e:
            if "schema file" in e.diagnostic.message:  # "Error loading/parsing ... schema file"
                raise InputError(
                    "not a TOSA flatbuffer schema tosa-opt can read", Location(file=schema_shown)
                ) from None
            raise
        out.seek(0)
        data = out.read()
    if not data:
        raise InputError(
            "not a TOSA flatbuffer schema tosa-opt can write the model with",
            Location(file=schema_shown),
        )
    return data


def _run(
    arguments: list[str],
    data: bytes | bytearray | memoryview | mmap.mmap,
    fds: tuple[int, ...],
    size: int,
    shown: str,
    doing: str,
    names: dict[int, str] | None = None,
) -> None:
    """Run the translator, bounded, on ``data`` (its standard input) with ``arguments`` and
    the file descriptors ``fds`` passed on; ``size`` bytes of model set its memory limit;
    ``doing`` says what it does in errors. Raises :class:`InputError` when it fails."""
    import subprocess

    from vgfc.processes import backstop

    where = Location(file=shown)
    program = translator()
    cpu = LIMITS.mlir_cpu_seconds_max
    memory = LIMITS.mlir_memory_base + LIMITS.mlir_memory_per_byte * size
    command = [
        str(program),
        "-",
        *arguments,
        "--mlir-disable-threading",  # one thread: CPU time is the translation's own
    ]
    try:
        done = subprocess.run(
            command,
            input=data,
            capture_output=True,
            pass_fds=fds,
            timeout=backstop(cpu),
            check=False,
            preexec_fn=_bounded(os.getpid(), cpu, memory),
        )
    except subprocess.TimeoutExpired:
        raise InputError(
            f"{doing} took more than {backstop(cpu):g} s without ending", where
        ) from None
    except OSError as e:
        raise InputError(f"cannot run tosa-opt: {e.strerror or e}", where) from None
    if done.returncode != 0:
        log = (done.stdout + done.stderr).decode("utf-8", errors="replace")
        for fd in fds:  # the files have names of their own
            log = log.replace(f"/dev/fd/{fd}", (names or {}).get(fd, shown))
        raise _failure(done.returncode, log, shown, cpu, memory, doing)


def as_flatbuffer(
    data: bytes | bytearray | memoryview | mmap.mmap, shown: str
) -> bytes | bytearray | memoryview | mmap.mmap:
    """``data`` when it is not MLIR (a flatbuffer, or bytes the reader will refuse), else its
    translation (:func:`translate`)."""
    kind = form(data[:_TEXT_PROBE])
    return data if kind in (None, FLATBUFFER) else translate(data, shown)


def _failure(code: int, log: str, shown: str, cpu: float, memory: int, doing: str) -> InputError:
    """The error of a translator that exited with ``code``, from its log."""
    for line in log.splitlines():
        found = _ERROR.match(line)
        if found is None:
            continue
        file, message = found.group("file"), found.group("message").strip()
        line_no, column = int(found.group("line")), int(found.group("column"))
        if line_no == 0:  # no place (bytecode's errors are at 0:0)
            return InputError(quote(message, LIMITS.message_length), Location(file=shown))
        if file in (_STDIN, "-"):
            return InputError(
                quote(message, LIMITS.message_length),
                Location(file=shown, file_line=line_no, file_column=column),
            )
        # A location the module declares (loc("net.py":3:1)): that file's place; the model in
        # a note.
        return InputError(
            quote(message, LIMITS.message_length),
            Location(file=shown, source=quote(file, 300), line=line_no, column=column),
        )
    where = Location(file=shown)
    if code in (-signal.SIGXCPU, -signal.SIGKILL):
        return InputError(f"{doing} exceeded {cpu:g} s of CPU time", where)
    if "out of memory" in log.lower() or "bad_alloc" in log:
        return InputError(
            f"{doing} exceeded {memory >> 20} MiB of memory "
            "(mlir_memory_base + mlir_memory_per_byte per byte of the model)",
            where,
        )
    how = f"signal {-code}" if code < 0 else f"exit status {code}"
    # tosa-tools' loaders say "Error loading ... file: NAME" before the pass's last words.
    lines = [ln.strip() for ln in log.splitlines() if ln.strip()]
    last = next((ln for ln in lines if ln.startswith("Error ")), lines[-1] if lines else "")
    return InputError(
        f"tosa-opt failed ({how})" + (f": {quote(last, LIMITS.message_length)}" if last else ""),
        where,
    )


def _bounded(parent: int, cpu: float, memory: int) -> Callable[[], None]:
    """What the translator's process does before it runs: its limits, and death with vgfc."""

    def setup() -> None:
        import math
        import resource

        from vgfc.processes_worker import die_with

        for limit, value in (
            (resource.RLIMIT_CORE, 0),
            (resource.RLIMIT_CPU, math.ceil(cpu)),
            (resource.RLIMIT_AS, memory),
        ):
            _, hard = resource.getrlimit(limit)
            if hard != resource.RLIM_INFINITY:
                value = min(value, hard)
            resource.setrlimit(limit, (value, hard))
        die_with(parent, signal.SIGKILL)

    return setup
