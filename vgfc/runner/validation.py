"""The Khronos validation layer under the emulation layers: ``vgfc run/verify --validate``.

lavapipe computes right numbers for code that breaks Vulkan's rules (an image bound in a way its
usage does not allow, a pipeline layout that does not match the shader); a strict GPU driver
does not. The validation layer (Debian ``vulkan-validationlayers``) is the judge that sees such
misuse on any machine. It sits below the two emulation layers, so it checks the Vulkan calls
that really reach the driver, and writes its messages to a log file that vgfc reads back.

**Which segment a message belongs to.** A message names Vulkan objects by handle (``Objects:
[0] 0x3200..., type: 15, name: NULL``), never the segment of the VGF that made them. Three ways
to tie it to a segment were weighed:

* *Debug names.* The scenario runner names its pipelines ``<graph uid>/<segment name>`` and
  their shader modules after them, but only under ``--enable-gpu-debug-markers``, and it names
  every tensor too: the validation layer Debian ships (1.3.239) knows no ``VK_ARM_tensors``
  object type, reports the naming call itself, and then aborts the runner (``free(): invalid
  pointer``). Names also come after the pipeline is created, too late for the messages that
  ``vkCreateComputePipelines`` raises, and command-buffer labels are not in the log.
* *Handles against creation order.* The layer's handles are a counter in creation order, but
  which counter values belong to which segment depends on the runner's and the emulation
  layers' internals (the graph layer creates pipelines of its own), and messages raised while
  the command buffer is recorded (``vkCmdDispatch``) come after every segment was set up.
* *Prefixes of the file* (what vgfc does). The runner runs the segments of a VGF in order, so
  the file cut after its first ``k`` segments (same modules, resources, constants and scenario)
  makes exactly the calls of the full run that belong to those segments. A message's segment is
  the last segment of the shortest prefix that reports it: set-up (pipeline, descriptor writes)
  and recording (dispatch) alike, whatever the message's wording. Messages are deterministic, so
  they are matched between runs by their rule and words with handles masked
  (:attr:`Message.signature`); the ``n``-th copy of a message goes to the shortest prefix with
  ``n`` copies. A binary search over prefixes costs about log2(segments) extra runs per distinct
  message, and only when validation already failed. A message the empty prefix reports belongs
  to no segment (resource set-up).

A compute segment is shown with its module, which in a file vgfc wrote is named after the custom
operator (its ``operator_name``): ``segment 3 'compute_segment_1' (compute, module 'square')``.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

from vgfc.diagnostics import Location, UnsupportedError, VgfcError
from vgfc.limits import LIMITS, quote
from vgfc.record import record
from vgfc.vgf.model import Model, ModuleType

__all__ = [
    "LAYER_NAME",
    "SETUP",
    "Finding",
    "Message",
    "ValidationError",
    "attribute",
    "describe_segment",
    "emulation_layer_own",
    "find_layer",
    "read_messages",
    "settings",
    "validation_error",
]

LAYER_NAME = "VK_LAYER_KHRONOS_validation"
APT_HINT = "apt-get install vulkan-validationlayers"
_MANIFEST = "VkLayer_khronos_validation.json"
_LAYER_DIRS = (
    "/usr/local/share/vulkan/explicit_layer.d",
    "/usr/share/vulkan/explicit_layer.d",
    "/etc/vulkan/explicit_layer.d",
)
# "VUID-...(ERROR / SPEC): msgNum: 123 - Validation Error: [ VUID-... ] ... | text"
_HEAD = re.compile(r"^(?P<id>[\w-]+)\((?P<level>[A-Z]+) / (?P<kind>[A-Z]+)\): msgNum: ")
# What the layer puts before a message's own words: "... Object 0: handle = 0x..., type = ...;
# | MessageID = 0xe63c2d8b | "; and the quote of the rule it appends.
_PREAMBLE = re.compile(r"\| MessageID = 0x[0-9a-fA-F]+ \| ")
_SPEC_QUOTE = " The Vulkan spec states:"
_HANDLE = re.compile(r"0x[0-9a-fA-F]+")

SETUP = -1
"""The "segment" of a message that even the file without segments reports: resource set-up."""
_MAX_LINES = 10  # messages listed one per line under the error


@record
class Message:
    """One validation message."""

    id: str
    """The VUID (``VUID-VkWriteDescriptorSet-descriptorType-00337``) or ``UNASSIGNED-...``."""
    level: str
    """``ERROR``, ``WARNING`` ..."""
    text: str

    @property
    def detail(self) -> str:
        """The message's own words, on one line: without the object list and message id in
        front and the quote of the rule at the end."""
        text = self.text
        preamble = _PREAMBLE.search(text)
        if preamble is not None:
            text = text[preamble.end() :]
        cut = text.find(_SPEC_QUOTE)
        if cut > 0:
            text = text[:cut]
        return " ".join(text.split())

    @property
    def signature(self) -> str:
        """The rule and the words with every handle masked: the same message in another run."""
        return f"{self.id}: {_HANDLE.sub('0x?', self.detail)}"


@record
class Finding:
    """A message and the segment it belongs to."""

    message: Message
    segment: int | None
    """Index into the model's segments; :data:`SETUP` for none (resource set-up); ``None`` when
    it could not be found (a prefix run failed or ran out of time)."""
    where: str
    """:func:`describe_segment` of it."""

    def to_json(self) -> dict[str, object]:
        """The finding for ``--json``: the message's words whole, never cut."""
        return {
            "segment": self.segment,
            "where": self.where,
            "id": self.message.id,
            "level": self.message.level,
            "message": self.message.detail,
        }


class ValidationError(VgfcError):
    """The validation layer reported messages about the file: each, with its segment, in
    :attr:`findings` (in the order the layer reported them)."""

    def __init__(
        self,
        message: str,
        location: Location | None = None,
        *,
        excerpt: tuple[str, ...] = (),
        findings: Sequence[Finding] = (),
        **where: object,
    ) -> None:
        super().__init__(message, location, excerpt=excerpt, **where)
        self.findings = tuple(findings)


def find_layer() -> Path:
    """The validation layer's manifest; :class:`UnsupportedError` says what to install."""
    for folder in _LAYER_DIRS:
        manifest = Path(folder) / _MANIFEST
        if manifest.is_file():
            return manifest
    raise UnsupportedError(f"--validate needs the Khronos validation layer: {APT_HINT}")


def settings(log: Path) -> str:
    """A ``vk_layer_settings.txt`` that sends errors and warnings to ``log``."""
    return (
        "khronos_validation.debug_action = VK_DBG_LAYER_ACTION_LOG_MSG\n"
        f"khronos_validation.log_filename = {log}\n"
        "khronos_validation.report_flags = error,warn\n"
    )


def emulation_layer_own(message: Message, file_has_push_constants: bool) -> bool:
    """True for a message about the ML emulation layer's own pipelines, not the file's.

    The graph emulation layer runs some TOSA operators (TRANSPOSE among them) as compute shaders
    of its own whose push-constant block its pipeline layout lacks: the validation layer reports
    ``VUID-VkComputePipelineCreateInfo-layout-00703`` "Push constant buffer ... out of range" once
    per such operator, for the reference converter's files exactly as for vgfc's. Only a file
    whose compute segments declare no push constants can be cleared this way: then no shader of
    the file has a push-constant block to get wrong. In a file with push constants, the message
    is set aside once :func:`attribute` puts it in a graph segment (pass
    ``file_has_push_constants=False`` for such a message), whose pipelines are all the layer's.
    """
    return (
        not file_has_push_constants
        and message.id == "VUID-VkComputePipelineCreateInfo-layout-00703"
        and "Push constant buffer" in message.text
    )


def read_messages(log: Path) -> list[Message]:
    """The messages in the layer's log (empty when there is no log: nothing was reported)."""
    if not log.is_file():
        return []
    messages: list[Message] = []
    for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
        head = _HEAD.match(line)
        if head is not None:
            messages.append(Message(head["id"], head["level"], line[head.end() :]))
        elif messages and line.strip() and not line.startswith((" ", "\t")):
            # A line that is neither a new message nor the indented object list continues it.
            last = messages[-1]
            messages[-1] = Message(last.id, last.level, f"{last.text} {line.strip()}")
    return messages


def attribute(
    messages: Sequence[Message],
    segments: int,
    prefix_signatures: Callable[[int], tuple[Sequence[str], bool] | None],
) -> list[int | None]:
    """The segment of each of ``messages`` (the full run's, in order): its index, :data:`SETUP`
    for resource set-up, or ``None`` where it could not be found.

    ``prefix_signatures(k)`` runs the file cut after its first ``k`` segments (``0 <= k <
    segments``) and returns the :attr:`Message.signature` s it reports and whether the run went
    as far as it would have (not cut short by a crash the full run does not have), or ``None``
    when it could not be run. The ``n``-th copy of a message belongs to the last segment of the
    shortest prefix that reports ``n`` copies; prefixes are searched by bisection and each is
    run at most once. A run cut short still proves a message it reports, but not one it lacks:
    it may have ended before the segment that draws it.
    """
    cache: dict[int, tuple[Counter[str], bool] | None] = {
        segments: (Counter(m.signature for m in messages), True)
    }

    def counts(k: int) -> tuple[Counter[str], bool] | None:
        if k not in cache:
            found = prefix_signatures(k)
            cache[k] = None if found is None else (Counter(found[0]), found[1])
        return cache[k]

    seen: Counter[str] = Counter()
    # The shortest prefix found for a message's previous copy: later copies are not shorter.
    floor: dict[str, int] = {}
    result: list[int | None] = []
    for message in messages:
        signature = message.signature
        seen[signature] += 1
        low, high = floor.get(signature, 0), segments
        while low < high:
            middle = (low + high) // 2
            found = counts(middle)
            if found is None:
                break
            tally, complete = found
            if tally[signature] >= seen[signature]:
                high = middle
            elif complete:
                low = middle + 1
            else:
                break
        if low < high:
            result.append(None)
            continue
        floor[signature] = low
        result.append(low - 1 if low > 0 else SETUP)
    return result


def describe_segment(model: Model, index: int | None) -> str:
    """``segment 3 'compute_segment_1' (compute, module 'square')``; a graph segment without its
    module (the graph modules are named after the segments)."""
    if index is None:
        return "segment unknown"
    if index == SETUP:
        return "no segment (resource set-up)"
    segment = model.segments[index]
    kind = "compute" if segment.type is ModuleType.COMPUTE else "graph"
    if segment.type is ModuleType.COMPUTE:
        kind += f", module '{quote(model.module_of(segment).name, 80)}'"
    return f"segment {index} '{quote(segment.name, 80)}' ({kind})"


def validation_error(
    model: Model, messages: Sequence[Message], segments: Sequence[int | None]
) -> ValidationError:
    """The error for ``messages`` and their segments. One line per distinct message and segment
    (``segment 3 'compute_segment_1' (compute, module 'square'): VUID-...: words``, with
    ``(xN)`` for repeats): the error's message when there is one such short line, else the lines
    under a message that says how many, in which segments and which rules (at most ten lines).
    The layer's words are never cut: a message is capped (``message_length``), its lines are not.
    """
    findings = [
        Finding(m, s, describe_segment(model, s)) for m, s in zip(messages, segments, strict=True)
    ]
    groups: dict[tuple[str, str], list[Finding]] = {}
    for f in findings:
        groups.setdefault((f.where, f.message.signature), []).append(f)
    lines = [
        f"{where}: {group[0].message.id}: {group[0].message.detail}"
        + (f" (x{len(group)})" if len(group) > 1 else "")
        for (where, _), group in groups.items()
    ]
    head = f"Vulkan validation reported {len(messages)} message(s)"
    if len(lines) == 1 and len(head) + len(lines[0]) < LIMITS.message_length // 2:
        return ValidationError(f"{head}: {lines[0]}", findings=findings)
    places = list(dict.fromkeys(f.segment for f in findings))
    if len(places) == 1:
        where = findings[0].where
    else:
        numbers = {SETUP: "set-up", None: "unknown"}
        where = "segments " + ", ".join(numbers.get(i, str(i)) for i in places)
    counts: Counter[str] = Counter(m.id for m in messages)
    ids = ", ".join(f"{k} (x{n})" if n > 1 else k for k, n in counts.items())
    if len(lines) > _MAX_LINES:
        lines[_MAX_LINES - 1 :] = [f"... and {len(lines) - _MAX_LINES + 1} more"]
    return ValidationError(f"{head} in {where}: {ids}", findings=findings, excerpt=tuple(lines))
