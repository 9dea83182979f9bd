"""Properties of the VGF codec over generated models (``vgf_models.models``, and ``RICH``, which
has every feature): decode inverts encode; encoding is deterministic and a decoded file encodes
to the same bytes; and the streaming writer (``encode``, which writes constants from where they
lie) gives the bytes the VGF library writes holding every constant itself
(``encode_with_vgfpy``), the plain way it stands in for."""

from __future__ import annotations

from hypothesis import HealthCheck, example, given, settings
from vgf_models import RICH, models, without_version

from vgfc.vgf.decode import decode
from vgfc.vgf.diff import diff_models
from vgfc.vgf.encode import encode, encode_with_vgfpy
from vgfc.vgf.model import Model


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@example(RICH)
@given(models())
def test_decode_inverts_encode(m: Model) -> None:
    back = decode(encode(m))
    assert back == m
    assert without_version(back) == without_version(m)
    assert back.version is not None  # a decoded file says which VGF version it is
    assert all(r.tensor is None for r in back.resources)  # no provenance in a file
    assert all(s.partition is None for s in back.segments)
    assert diff_models(back, m) == []


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@example(RICH)
@given(models())
def test_encoding_is_deterministic(m: Model) -> None:
    data = encode(m)
    assert encode(m) == data
    # A decoded file is the same model: it encodes to the same bytes.
    assert encode(decode(data)) == data


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(models())
def test_generated_models_stream_to_the_bytes_the_library_writes(m: Model) -> None:
    if any(not c.data for c in m.constants):
        return  # refused either way (tests/unit/vgf/test_codec.py)
    assert encode(m) == encode_with_vgfpy(m)
