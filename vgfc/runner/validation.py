"""The Khronos validation layer under the emulation layers: ``vgfc run/verify --validate``.

lavapipe computes right numbers for code that breaks Vulkan's rules (an image bound in a way its
usage does not allow, a pipeline layout that does not match the shader); a strict GPU driver
does not. The validation layer (Debian ``vulkan-validationlayers``) is the judge that sees such
misuse on any machine. It sits below the two emulation layers, so it checks the Vulkan calls
that really reach the driver, and writes its messages to a log file that vgfc reads back.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from vgfc.diagnostics import UnsupportedError

__all__ = [
    "LAYER_NAME",
    "Message",
    "emulation_layer_own",
    "find_layer",
    "read_messages",
    "settings",
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


@dataclass(frozen=True, slots=True)
class Message:
    """One validation message."""

    id: str
    """The VUID (``VUID-VkWriteDescriptorSet-descriptorType-00337``) or ``UNASSIGNED-...``."""
    level: str
    """``ERROR``, ``WARNING`` ..."""
    text: str

    def summary(self, limit: int = 300) -> str:
        text = " ".join(self.text.split())
        return text if len(text) <= limit else text[:limit] + "..."


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
    the file has a push-constant block to get wrong.
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
