"""An entry's ``torch:`` schema read without torch: what it yields, the token a broken one is
refused at, and ``vgfc kernels`` refusing a schema that disagrees with its entry as load does.
(tests/executorch holds the reader to torch's own parser.)"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from paths import ROOT

from vgfc.diagnostics import InputError
from vgfc.resolve.library.torch_schema import Argument, parse_torch


def test_a_full_schema_is_read() -> None:
    s = parse_torch(
        "ns::op(Tensor x, Tensor(a!) out, float beta=1.0, *, int[] sizes=[1, 2], "
        'str mode="a,b", int[2] pair=[3, 4], Tensor? bias=None) -> Tensor'
    )
    assert (s.qualname, s.overload, s.returns) == ("ns::op", "", ("Tensor",))
    assert s.arguments == (
        Argument("x", "Tensor", False),
        Argument("out", "Tensor(a!)", False),
        Argument("beta", "float", True),
        Argument("sizes", "int[]", True),
        Argument("mode", "str", True),
        Argument("pair", "int[2]", True),
        Argument("bias", "Tensor?", True),
    )
    assert parse_torch("ns::op.out(Tensor x) -> (Tensor a, Tensor b)").returns == (
        "Tensor",
        "Tensor",
    )
    assert parse_torch("ns::op.fast(Tensor x) -> ()").overload == "fast"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "ns::op(Tensor x, flaot beta=1.0) -> Tensor",
            "unknown type 'flaot' (did you mean float?) (column 18)",
        ),
        ("ns::op(Tensr x) -> Tensor", "unknown type 'Tensr' (did you mean Tensor?) (column 8)"),
        ("ns::op(Tensor x) -> Tensro", "unknown type 'Tensro' (did you mean Tensor?) (column 21)"),
        ("ns::op(Tensor x -> Tensor", "expected ,, found '->' (column 17)"),
        ("ns::op(Tensor x) Tensor", "expected ->, found 'Tensor' (column 18)"),
        ("ns::op(Tensor x) -> Tensor y extra", "unexpected 'extra' after the result (column 30)"),
        ("ns::op(Tensor x, float b=[1, 2) -> Tensor", "a default runs to the end (column 42)"),
        ("ns::op(Tensor x) -> Tensor $", "unexpected '$' (column 28)"),
        ("", "expected name at the end (column 1)"),
    ],
)
def test_a_broken_schema_names_the_token_and_column(text: str, message: str) -> None:
    with pytest.raises(InputError) as e:
        parse_torch(text)
    assert str(e.value) == f"not a PyTorch operator schema: {message}"


def _library(tmp_path: Path, schema: str) -> Path:
    for name in ("my_ops.yaml", "my_ops_ref.py", "swish.comp", "upsample2x.comp"):
        shutil.copy(ROOT / "samples" / "pytorch" / name, tmp_path / name)
    path = tmp_path / "my_ops.yaml"
    text = path.read_text()
    original = 'torch: "my_ops::swish(Tensor x, float beta=1.0) -> Tensor"'
    assert original in text
    path.write_text(text.replace(original, f'torch: "{schema}"'))
    return path


def _line(path: Path) -> str:
    """``LINE:COL`` of the ``torch:`` key in the library."""
    lines = path.read_text().splitlines()
    number = next(i for i, t in enumerate(lines) if "my_ops::swish" in t)
    return f"{number + 1}:{lines[number].index('torch:') + 1}"


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        (
            "my_ops::swish(Tensor x, flaot beta=1.0) -> Tensor",
            "not a PyTorch operator schema: unknown type 'flaot' (did you mean float?) (column 25)",
        ),
        (
            "my_ops::swish(Tensor x, float beta=1.0, int gamma=2) -> Tensor",
            "argument 'gamma' is not a parameter of the entry (it has beta)",
        ),
        (
            "my_ops::swish(Tensor x, float bta=1.0) -> Tensor",
            "argument 'bta' is not a parameter of the entry (it has beta) (did you mean beta?)",
        ),
        (
            "my_ops::swish(Tensor x, int beta=1) -> Tensor",
            "argument 'beta' is int, the parameter is f32",
        ),
    ],
)
def test_vgfc_kernels_checks_the_schema_as_load_does(
    cli: Any, tmp_path: Path, schema: str, message: str
) -> None:
    library = _library(tmp_path, schema)
    run = cli("kernels", str(library))
    assert run.code == 1
    assert f"my_ops.yaml:{_line(library)}: error: my_ops/swish: torch: {message}" in run.err
    assert "3 kernel(s), 1 error(s)" in run.out  # the two kernels are still checked
    doc = json.loads(cli("kernels", "--json", str(library)).out)
    (bad,) = [k for k in doc["kernels"] if k["status"] == "error"]
    assert (bad["entry"], bad["kernel"]) == ("my_ops/swish", "torch")


def test_vgfc_kernels_passes_the_sample(cli: Any, tmp_path: Path) -> None:
    run = cli(
        "kernels", str(_library(tmp_path, "my_ops::swish(Tensor x, float beta=1.0) -> Tensor"))
    )
    assert run.code == 0, run.err
    assert "2 kernel(s), 0 error(s)" in run.out
