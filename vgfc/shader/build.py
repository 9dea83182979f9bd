"""Build shaders: compile (GLSL/HLSL), validate and reflect, through the shader cache, many at once.

:func:`build_shader` does one: a cache hit (:mod:`vgfc.shader.cache`) returns at once; otherwise
glslang compiles it (in its bounded worker process), SPIRV-Tools validates it, vgfc reflects it,
and the result is stored. :class:`ShaderBuilds` does a model's worth: each distinct request once,
the cached ones first, the rest compiled in the background while the caller lowers graph
partitions, and each validated and reflected when the caller asks for it, while the workers go on
with the next ones.

Parallel how: glslang is called through ctypes, which releases the GIL, but vgfc serializes
glslang calls within a process (see :mod:`vgfc.shader.glslang`: its per-thread allocators and
the second copy of glslang inside libSPIRV), and a bounded worker compiles one shader at a time.
So cold shaders go to bounded worker processes, each driven by a thread that waits on its socket;
every compile keeps its own limit of CPU time and memory cap. A fresh worker builds glslang's
tables of built-in functions (about 80 ms, as long as some 60 shaders take) before it takes work
(for GLSL 450; other versions on their first compile), and this
process needs a CPU of its own to validate, reflect and lower meanwhile, so a model gets one
worker per 16 cold shaders and at most one per idle CPU beyond this process's (see
:func:`_lanes`): on two CPUs that is one worker, compiling while this process does the rest.
"""

from __future__ import annotations

import copy
import math
import os
import threading
from collections import deque
from collections.abc import Iterable

from vgfc.diagnostics import InternalError, Location, ShaderError, VgfcError
from vgfc.shader import cache
from vgfc.shader.cache_entries import CompiledShader
from vgfc.shader.cache_keys import ShaderRequest

TYPE_CHECKING = False
if TYPE_CHECKING:
    from vgfc.processes import Worker
    from vgfc.shader.includer import IncludeProbe

__all__ = ["CompiledShader", "ShaderBuilds", "ShaderRequest", "build_shader"]

Binary = tuple[bytes, tuple["IncludeProbe", ...]]
"""A compiled (or given) binary and the include probes that produced it."""
Outcome = CompiledShader | Exception
"""A build's result, or the error it raised."""


def build_shader(request: ShaderRequest, *, worker: Worker | None = None) -> CompiledShader:
    """Compile (or take as given), validate and reflect one shader, through the cache when
    ``request.options.cache``. ``worker``: the bounded worker to compile in (default: glslang's
    own). Raises :class:`~vgfc.diagnostics.ShaderError`."""
    if request.options.cache:
        hit = cache.load(request)
        if hit is not None:
            return hit
    try:
        return _finish(request, _compile(request, worker))
    except ShaderError as e:
        raise _explained(request, e) from None


def _build_uncached(request: ShaderRequest) -> CompiledShader:
    return _finish(request, _compile(request, None))


def _explained(request: ShaderRequest, error: ShaderError) -> ShaderError:
    """``error``, naming the Vulkan environment the shader needs when it is a newer one."""
    from vgfc.shader.environments import explain

    return explain(request, error, _build_uncached)


class ShaderBuilds:
    """A model's shaders, compiling in the background while the caller does other work.

    Each distinct request is built once: cache hits at once, in this thread; the rest are
    compiled by background threads, in the order given, each driving a worker process, while
    :meth:`get` (in the caller's thread) validates, reflects and stores each result as it is
    asked for. So the workers compile the next shaders while the caller checks this one. Used
    as a context manager, leaving it drops the compiles that have not started (after an error,
    say)."""

    def __init__(self, requests: Iterable[ShaderRequest]) -> None:
        self._done: dict[ShaderRequest, Outcome] = {}
        self._compiled: dict[ShaderRequest, Binary | Exception] = {}
        self._todo: deque[ShaderRequest] = deque()
        self._ready = threading.Condition()
        requests = dict.fromkeys(requests)
        folder = cache.cache_dir()
        self.cache_problem = None
        """Why the shader cache cannot be used, when a request asked for it."""
        if any(r.options.cache for r in requests):
            self.cache_problem = cache.cache_problem(folder)
        usable = self.cache_problem is None
        for request in requests:
            hit = cache.load(request, folder) if request.options.cache and usable else None
            if hit is not None:
                self._done[request] = hit
            elif isinstance(request.code, bytes):
                self._compiled[request] = (request.code, ())
            else:
                self._todo.append(request)
        self._pending = set(self._todo)
        # In-process compiles (no timeout) take glslang's lock: one lane is all they can use.
        lanes = _lanes(len(self._todo)) if all(_bounded(r) for r in self._todo) else 1
        for i, worker in enumerate(_workers(min(lanes, len(self._todo)))):
            name = f"vgfc-shader-{i}"
            threading.Thread(target=self._lane, args=(worker,), name=name, daemon=True).start()

    def get(self, request: ShaderRequest) -> CompiledShader:
        """The result for ``request`` (waiting for its compile); raises its error, a fresh copy
        each time, so callers can give each copy its own location."""
        outcome = self._done.get(request)
        if outcome is None:
            with self._ready:
                while request in self._pending and request not in self._compiled:
                    self._ready.wait()
                compiled = self._compiled.get(request)
            if compiled is None:  # not one of the requests given: build it here
                return build_shader(request)
            try:
                if isinstance(compiled, Exception):
                    raise compiled
                outcome = _finish(request, compiled)
            except ShaderError as e:
                outcome = _explained(request, e)
            except Exception as e:
                outcome = e
            self._done[request] = outcome
        if isinstance(outcome, Exception):
            raise copy.copy(outcome)
        return outcome

    def close(self) -> None:
        """Drop the compiles that have not started (those running finish in the background)."""
        with self._ready:
            self._pending.difference_update(self._todo)
            self._todo.clear()
            self._ready.notify_all()

    def __enter__(self) -> ShaderBuilds:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def _lane(self, worker: Worker | None) -> None:
        while True:
            with self._ready:
                if not self._todo:
                    return
                request = self._todo.popleft()
            compiled: Binary | Exception = InternalError("the shader compile thread stopped")
            try:
                compiled = _compile(request, worker)
            except Exception as e:  # raised by get(), where the caller meets it
                compiled = e
            finally:  # whatever happens, get() must not wait for it forever
                with self._ready:
                    self._compiled[request] = compiled
                    self._ready.notify_all()


def _compile(request: ShaderRequest, worker: Worker | None) -> Binary:
    """The request's binary: compiled by glslang, or the SPIR-V it gives."""
    if isinstance(request.code, bytes):
        return request.code, ()
    from vgfc.shader import glslang

    compiled = glslang.compile_recorded(
        request.code,
        glslang.Language(request.language),
        request.entry_point,
        request.options,
        worker=worker,
    )
    return compiled.spirv, compiled.includes


def _finish(request: ShaderRequest, binary: Binary) -> CompiledShader:
    """Validate and reflect a binary, and store the result when the cache is on."""
    from vgfc.spirv.reflect import reflect
    from vgfc.spirv.spirv_tools import validation_problem

    spirv, includes = binary
    problem = validation_problem(spirv, request.options.target_env)
    if problem is not None:
        raise _validation_error(request, spirv, *problem)
    opened = tuple(path for path, sha in includes if sha is not None)
    result = CompiledShader(spirv, reflect(spirv, request.entry_point), opened)
    if request.options.cache:
        cache.store(request, result, includes)
    return result


def _validation_error(
    request: ShaderRequest, spirv: bytes, message: str, instruction: int
) -> ShaderError:
    """The validator's complaint, where a user can find it (:mod:`vgfc.shader.messages`): at the
    source line the offending instruction came from, for a shader compiled here when that line
    can be told; else at the instruction's number, with the instruction disassembled."""
    from vgfc.shader import messages

    found = messages.split_validation(message, instruction, spirv)
    text = f"SPIR-V validation failed: {found.message}"
    source = request.code if isinstance(request.code, str) else None
    line = None
    if source is not None and instruction:
        line = _debug_line(request, spirv, instruction)
        if line is None:
            line = messages.named_line(found.disassembly, source)
    if source is not None and line is not None:
        shown = f" (in {found.disassembly})" if found.disassembly else ""
        return ShaderError(
            text + shown, Location(line=line), excerpt=messages.source_excerpt(source, line)
        )
    return ShaderError(
        text,
        Location(instruction=instruction or None),
        excerpt=(found.disassembly,) if found.disassembly else (),
    )


def _debug_line(request: ShaderRequest, spirv: bytes, instruction: int) -> int | None:
    """The source line of a failing instruction: the shader is compiled again with debug info
    (``OpLine``; only now, so a shader that validates never pays for it), validated, and the
    line covering the offending instruction read, when it fails on the same opcode."""
    from vgfc.shader import glslang, messages
    from vgfc.spirv.spirv_tools import validation_problem

    assert isinstance(request.code, str)
    try:
        debug = glslang.compile_recorded(
            request.code,
            glslang.Language(request.language),
            request.entry_point,
            request.options,
            debug_info=True,
        ).spirv
        problem = validation_problem(debug, request.options.target_env)
    except VgfcError:
        return None
    if problem is None or not problem[1]:
        return None
    if messages.opcode_at(debug, problem[1]) != messages.opcode_at(spirv, instruction):
        return None
    return messages.line_of(debug, problem[1])


def _bounded(request: ShaderRequest) -> bool:
    """Whether the request compiles in a worker process (and so can run beside others)."""
    return isinstance(request.code, str) and 0 < request.options.timeout < math.inf


def _lanes(cold: int) -> int:
    """How many workers compile ``cold`` shaders: one per 16 shaders (each new worker first
    spends about 80 ms building glslang's tables of built-in functions), and no more than the
    idle CPUs (CPUs less the load average, as ``make -l`` judges it) less one for this process,
    which validates, reflects and lowers meanwhile. Measured on two CPUs: a second worker made
    a cold 100-shader compile 80 ms slower, not faster."""
    share = _idle_cpus() // _models_at_once
    return max(1, min(share - 1, -(-cold // _SHADERS_PER_LANE)))


_SHADERS_PER_LANE = 16
_models_at_once = 1
"""How many processes compile models at the same time (``vgfc compile -j N``): each takes its
share of the idle CPUs for shader workers, so N models do not start N times the workers one
model would."""


def share_cpus(models_at_once: int) -> None:
    """Tell this process how many compile models at the same time (see :func:`_lanes`)."""
    global _models_at_once
    _models_at_once = max(1, models_at_once)


def _idle_cpus() -> int:
    cpus = _cpus()
    try:
        return cpus - int(os.getloadavg()[0])
    except OSError:  # pragma: no cover - no load average on this system
        return cpus


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


_POOL: list[Worker] = []
_POOL_LOCK = threading.Lock()


def _workers(n: int) -> list[Worker | None]:
    """``n`` bounded workers: glslang's own (``None``) and ``n - 1`` more, kept for the next
    call (each starts on first use and ends with this process)."""
    if n < 1:
        return []  # every shader was in the cache: glslang is not even imported
    from vgfc.shader.glslang import new_worker

    with _POOL_LOCK:
        while len(_POOL) < n - 1:
            _POOL.append(new_worker())
        return [None, *_POOL[: n - 1]]
