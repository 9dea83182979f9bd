"""The wire between a parent and its worker processes (:mod:`vgfc.processes`): each message is
its length (8 bytes, little-endian), then its bytes, over a socket pair.
"""

from __future__ import annotations

import struct
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    import socket

__all__ = ["LONGEST_WAIT", "receive", "send"]

_HEADER = struct.Struct("<Q")
LONGEST_WAIT = 3600.0
"""Seconds one socket wait may last (``settimeout`` refuses huge values); longer deadlines loop."""


def send(sock: socket.socket, data: bytes) -> None:
    """One message, waiting as long as the other end takes to make room for it."""
    sock.settimeout(None)
    sock.sendall(_HEADER.pack(len(data)) + data)


def receive(sock: socket.socket, deadline: float | None) -> bytes:
    """One message; raises :class:`TimeoutError` at ``deadline`` and :class:`EOFError` when the
    other end is closed."""
    (size,) = _HEADER.unpack(_receive_exactly(sock, _HEADER.size, deadline))
    return _receive_exactly(sock, size, deadline)


def _receive_exactly(sock: socket.socket, size: int, deadline: float | None) -> bytes:
    buffer = bytearray(size)
    view = memoryview(buffer)
    done = 0
    while done < size:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            sock.settimeout(min(left, LONGEST_WAIT))
        try:
            got = sock.recv_into(view[done:])
        except TimeoutError:
            continue  # the loop tells whether the deadline has passed
        if not got:
            raise EOFError
        done += got
    return bytes(buffer)
