"""vgfc.executorch: kernel-library entries as PyTorch ops, exported through ExecuTorch's Arm VGF
backend. These need torch and ExecuTorch: ``make test-executorch`` runs them in its own venv
(torch CPU, ExecuTorch 1.5.1 and ``vgfc[executorch,run]``, docs/pytorch.md); ``make test`` leaves
this folder out.

What they hold:
* eager calls run the entry's numpy reference, and that reference agrees with PyTorch's own
  operators (an oracle written apart from both the shader and the reference);
* the fake implementation gives what the library infers, over generated shapes and dtypes, and a
  call no kernel takes fails at export naming the op, the entry and the candidates;
* a schema that disagrees with its entry fails at load, naming ``lib.yaml:LINE``;
* the exported TOSA holds complete ``com.arm.VulkanCustomShader`` ops (the compile and run
  against eager PyTorch with both converters is ``tests/e2e/test_pytorch_sample.py``).
"""

from __future__ import annotations

import importlib.util
import re
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from torch._subclasses.fake_tensor import FakeTensorMode

import vgfc.executorch
from vgfc.diagnostics import InputError
from vgfc.dtypes import DType
from vgfc.ir import Tensor
from vgfc.resolve.infer import infer_outputs

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "samples" / "pytorch"
LIBRARY = SAMPLE / "my_ops.yaml"
CONVERTER = str(Path(sys.executable).parent / "vgfc-model-converter")


@pytest.fixture(scope="module")
def ops() -> vgfc.executorch.TorchOps:
    return vgfc.executorch.load(LIBRARY)


def _sample_export() -> object:
    spec = importlib.util.spec_from_file_location("pytorch_sample_export", SAMPLE / "export.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


# -- eager ---------------------------------------------------------------------------------------


def test_eager_runs_the_reference_which_agrees_with_pytorch(ops: vgfc.executorch.TorchOps) -> None:
    torch.manual_seed(1)
    x = torch.randn(2, 4, 5, 7)
    swish = torch.ops.my_ops.swish(x, beta=1.5)
    torch.testing.assert_close(swish, x * torch.sigmoid(1.5 * x), atol=1e-6, rtol=1e-6)
    assert torch.equal(torch.ops.my_ops.swish(x), torch.ops.my_ops.swish(x, 1.0))
    up = torch.ops.my_ops.upsample2x(x)
    expected = torch.nn.functional.interpolate(
        x, scale_factor=2, mode="bilinear", align_corners=False
    )
    torch.testing.assert_close(up, expected, atol=1e-5, rtol=1e-5)


def test_an_entry_without_a_reference_has_no_eager_implementation(tmp_path: Path) -> None:
    library = _library(tmp_path, 'torch: "noref_ops::double(Tensor x) -> Tensor"', reference=False)
    vgfc.executorch.load(library)
    with pytest.raises(
        RuntimeError,
        match=r"noref_ops::double has no eager implementation.*lib\.yaml:\d+.*module:function",
    ):
        torch.ops.noref_ops.double(torch.ones(1, 2, 2, 4))


# -- the fake implementation ---------------------------------------------------------------------

DIMS = st.integers(min_value=1, max_value=9)
SHAPES = st.tuples(st.sampled_from([1, 1, 2]), st.integers(1, 5), DIMS, DIMS)
DTYPES = st.sampled_from([torch.float32, torch.float16, torch.int8, torch.int32])


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(shape=SHAPES, dtype=DTYPES, beta=st.floats(min_value=-4, max_value=4, allow_nan=False))
def test_fake_outputs_are_the_library_inference(
    ops: vgfc.executorch.TorchOps, shape: tuple[int, ...], dtype: torch.dtype, beta: float
) -> None:
    for name, args, kwargs, expected_shape in (
        ("my_ops::swish", (), {"beta": beta}, shape),
        ("my_ops::upsample2x", (), {}, (shape[0], shape[1], 2 * shape[2], 2 * shape[3])),
    ):
        op = ops[name]
        tensor = Tensor("x", shape, _DTYPE[dtype])
        params = {k: v for k, v in kwargs.items()}
        ((inferred_dtype, inferred_shape),) = infer_outputs(op.entry, {"x": tensor}, params)
        # Calls the kernels surely take: fp32 for swish; fp32, batch 1, three or four channels
        # (padded to four) for the RGBA image of upsample2x. Others may fail, naming the entry.
        surely = dtype is torch.float32 and (
            name.endswith("swish") or (shape[0] == 1 and shape[1] in (3, 4))
        )
        call = getattr(torch.ops.my_ops, name.split("::")[1])
        with FakeTensorMode() as mode:
            x = mode.from_tensor(torch.empty(shape, dtype=dtype))
            try:
                out = call(x, *args, **kwargs)
            except InputError as e:
                assert not surely, str(e)
                assert re.search(rf"my_ops\.yaml:\d+: my_ops/{name.split('::')[1]}", str(e))
                continue
        assert tuple(out.shape) == inferred_shape == expected_shape
        assert _DTYPE[out.dtype] is inferred_dtype is _DTYPE[dtype]


_DTYPE = {
    torch.float32: DType.FP32,
    torch.float16: DType.FP16,
    torch.int8: DType.INT8,
    torch.int32: DType.INT32,
}


def test_a_call_no_kernel_takes_fails_at_export_naming_op_entry_and_candidates(
    ops: vgfc.executorch.TorchOps,
) -> None:
    class Model(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.ops.my_ops.swish(x, beta=2.0)

    with pytest.raises(InputError) as error:
        torch.export.export(Model(), (torch.ones(1, 2, 3, 4, dtype=torch.int32),))
    text = str(error.value)
    assert re.search(r"my_ops\.yaml:\d+: my_ops/swish", text)
    assert "x: INT32[1, 2, 3, 4], beta=2.0" in text
    assert "swish_f32" in text and "allow_lossy" in text


# -- load errors ---------------------------------------------------------------------------------


def _library(folder: Path, torch_line: str, *, reference: bool = True, params: str = "") -> Path:
    (folder / "double.comp").write_text(
        textwrap.dedent(
            """\
            #version 450
            layout(local_size_x = 64) in;
            layout(set = 0, binding = 0) readonly buffer I { float x[]; };
            layout(set = 0, binding = 1) writeonly buffer O { float y[]; };
            void main() {
                uint i = gl_GlobalInvocationID.x;
                if (i < uint(COUNT)) y[i] = 2.0 * x[i];
            }
            """
        )
    )
    (folder / "double_ref.py").write_text("def double(x, **params):\n    return 2 * x\n")
    text = textwrap.dedent(
        f"""\
        vgfc_kernels: 1
        name: t
        operators:
          - domain: t
            name: double
            {torch_line}
            {"reference: double_ref:double" if reference else ""}
            inputs: [x]
            outputs: [y]
            layout: NCHW
            {params}
            infer:
              y: {{same_as: x}}
            kernels:
              - name: double_f32
                arg_meta: {{x: [FP32], y: [FP32]}}
                shader: {{file: double.comp, defines: {{COUNT: "N * H * W * C"}}}}
                resources: {{x: {{binding: 0}}, y: {{binding: 1}}}}
                dispatch: {{global: ["N * H * W * C"]}}
        """
    )
    path = folder / "lib.yaml"
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("torch_line", "params", "message"),
    [
        (
            'torch: "bad_a::double(Tensor y) -> Tensor"',
            "",
            r"tensor arguments \(y\) are not the entry's inputs \(x\)",
        ),
        (
            'torch: "bad_b::double(Tensor x, int k) -> Tensor"',
            "",
            r"argument 'k' is not a parameter of the entry \(it has none\)",
        ),
        (
            'torch: "bad_c::double(Tensor x, int k) -> Tensor"',
            "params: {encoding: json, fields: [{name: k, type: f32}]}",
            r"argument 'k' is int, the parameter is f32",
        ),
        (
            'torch: "bad_d::double(Tensor x) -> Tensor"',
            "params: {encoding: json, fields: [{name: k, type: f32}]}",
            r"parameter 'k' has no default and the schema does not pass it",
        ),
        ('torch: "bad_e::double(Tensor x) -> (Tensor, Tensor)"', "", r"returns Tensor , Tensor"),
        ('torch: "bad_f::double(Tensor x -> Tensor"', "", r"not a PyTorch operator schema"),
        (
            'torch: "bad_g::double(Tensor x, flaot k=1.0) -> Tensor"',
            "params: {encoding: json, fields: [{name: k, type: f32, default: 1.0}]}",
            r"unknown type 'flaot' \(did you mean float\?\) \(column 25\)",
        ),
        (
            'torch: "bad_h::double(Tensor x, int[] k=[1, 2]) -> Tensor"',
            "params: {encoding: json, fields: [{name: k, type: f32, default: 1.0}]}",
            r"argument 'k' is int\[\], the parameter is f32",
        ),
    ],
)
def test_a_schema_that_disagrees_with_its_entry_fails_at_load_naming_the_line(
    tmp_path: Path, torch_line: str, params: str, message: str
) -> None:
    library = _library(tmp_path, torch_line, params=params)
    line = 1 + library.read_text().splitlines().index(f"    {torch_line}")
    with pytest.raises(InputError) as error:
        vgfc.executorch.load(library)
    text = str(error.value)
    assert f"lib.yaml:{line}: t/double: torch" in text
    assert re.search(message, text), text


def test_a_library_with_no_schema_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="names a PyTorch schema"):
        vgfc.executorch.load(_library(tmp_path, ""))


# -- export --------------------------------------------------------------------------------------


def test_the_sample_exports_into_one_delegate_with_complete_shader_ops(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from vgfc.read.reader import load as read_model
    from vgfc.resolve.attrs import parse_shader_spec

    monkeypatch.setenv(
        "MODEL_CONVERTER_PATH", str(Path(sys.executable).parent / "vgfc-model-converter")
    )
    _sample_export().export(tmp_path)
    graph = read_model(tmp_path / "model.tosa")
    customs = [op for op in graph.operators if op.op == "CUSTOM"]
    assert [op.attrs["operator_name"] for op in customs] == [
        "my_ops.swish",
        "my_ops.upsample2x",
        "my_ops.swish",
    ]
    for op in customs:
        assert op.attrs["domain_name"] == "com.arm.VulkanCustomShader"
        spec = parse_shader_spec(op, graph)
        assert spec.spirv is not None and spec.language == "SPIR-V"
    sampled = parse_shader_spec(customs[1], graph).inputs[0]
    assert sampled.descriptor_type == "VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER"
    assert sampled.sampler is not None and sampled.sampler.min_filter == "VK_FILTER_LINEAR"
    # The two swish calls (beta 1.5 and the default) are two shaders.
    assert customs[0].attrs["implementation_attrs"] != customs[2].attrs["implementation_attrs"]
    eager = np.load(tmp_path / "eager.npy")
    assert eager.shape == (1, 2, 22, 18)


# -- the guide -----------------------------------------------------------------------------------


def test_the_guides_model_runs_as_written(monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/pytorch.md section 2, run as it stands, from the sample's folder: the ops load, the
    model runs eagerly, exports into one delegate and gives a program."""
    text = (ROOT / "docs" / "pytorch.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    (code,) = [b for b in blocks if "to_edge_transform_and_lower" in b]
    monkeypatch.chdir(SAMPLE)
    monkeypatch.setenv(
        "MODEL_CONVERTER_PATH", str(Path(sys.executable).parent / "vgfc-model-converter")
    )
    scope: dict[str, object] = {}
    exec(compile(code, "docs/pytorch.md", "exec"), scope)
    assert isinstance(scope["pte"], bytes) and len(scope["pte"]) > 0
    assert tuple(scope["eager"].shape) == (1, 2, 22, 18)  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("op", "shape", "dtype", "inserted"),
    [
        # Three channels: padded to the image's four before the shader, sliced back after it.
        ("upsample2x", (1, 3, 5, 6), torch.float32, ["TRANSPOSE", "PAD", "CUSTOM", "SLICE"]),
        # FP16 data for an FP32-only kernel: widened before, narrowed back after.
        ("swish", (1, 2, 3, 4), torch.float16, ["CAST", "CUSTOM", "CAST"]),
    ],
)
def test_the_conversions_a_kernel_needs_are_in_the_exported_graph(
    ops: vgfc.executorch.TorchOps,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    op: str,
    shape: tuple[int, ...],
    dtype: torch.dtype,
    inserted: list[str],
) -> None:
    from executorch.backends.arm.vgf import VgfCompileSpec, VgfPartitioner
    from executorch.exir import to_edge_transform_and_lower

    import vgfc
    from vgfc.read.reader import load as read_model

    class Model(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return getattr(torch.ops.my_ops, op)(x)

    monkeypatch.setenv("MODEL_CONVERTER_PATH", CONVERTER)
    spec = VgfCompileSpec()
    spec.dump_intermediate_artifacts_to(str(tmp_path))
    partitioner = ops.attach(VgfPartitioner(spec))
    x = torch.rand(shape).to(dtype)
    to_edge_transform_and_lower(torch.export.export(Model(), (x,)), partitioner=[partitioner])
    (tosa,) = tmp_path.glob("output_*TOSA*.tosa")
    shapes = ("CONST", "CONST_SHAPE")  # the PAD's and SLICE's operands
    names = [o.op for o in read_model(tosa).operators if o.op not in shapes]
    at = names.index("CUSTOM")
    window = names[at - inserted.index("CUSTOM") : at + len(inserted) - inserted.index("CUSTOM")]
    assert window == inserted, names
    compiled = vgfc.compile(tosa, shader_timeout=0)
    assert compiled.vgf is not None and len(compiled.vgf) > 0


def test_loading_again_follows_the_new_entry_and_a_clashing_schema_is_refused(
    tmp_path: Path,
) -> None:
    first = tmp_path / "one"
    first.mkdir()
    vgfc.executorch.load(_library(first, 'torch: "again_ops::double(Tensor x) -> Tensor"'))
    x = torch.ones(1, 2, 2, 4)
    assert torch.equal(torch.ops.again_ops.double(x), 2 * x)
    # The same schema again, its reference now triples: eager follows the entry loaded last.
    second = tmp_path / "two"
    second.mkdir()
    library = _library(second, 'torch: "again_ops::double(Tensor x) -> Tensor"')
    (second / "double_ref.py").write_text("def double(x, **params):\n    return 3 * x\n")
    vgfc.executorch.load(library)
    assert torch.equal(torch.ops.again_ops.double(x), 3 * x)
    third = tmp_path / "three"
    third.mkdir()
    clash = _library(
        third,
        'torch: "again_ops::double(Tensor x, int k=1) -> Tensor"',
        params="params: {encoding: json, fields: [{name: k, type: i32, default: 1}]}",
    )
    with pytest.raises(InputError, match="already defined in this process with another schema"):
        vgfc.executorch.load(clash)


_SCHEMAS = [
    "ns::a(Tensor x) -> Tensor",
    'ns::b(Tensor x, float beta=1.0, *, int[] sizes=[1, 2], str mode="a,b") -> Tensor',
    "ns::c.out(Tensor(a!) x, int[2] p=[3, 4], Tensor? b=None, bool f=True) -> (Tensor a, Tensor b)",
    "ns::e(Tensor x) -> Tensor named",
    "ns::d(Tensor x, Scalar s, float[] w) -> ()",
]
_BROKEN = [
    "ns::a(Tensor x, flaot b=1.0) -> Tensor",
    "ns::a(Tensr x) -> Tensor",
    "ns::a(Tensor x -> Tensor",
    "ns::a(Tensor x) Tensor",
    "ns::a(Tensor x) -> Tensor named extra",
]


def _as_torch_prints(kind: str) -> str:
    kind = re.sub(r"\(.*\)", "", kind)  # the alias is not part of the type
    if kind == "Scalar":
        return "number"
    if kind.endswith("?"):
        return f"Optional[{_as_torch_prints(kind[:-1])}]"
    found = re.fullmatch(r"(\w+)\[\d*\]", kind)
    return f"List[{found.group(1)}]" if found else kind


@pytest.mark.parametrize("text", _SCHEMAS)
def test_vgfcs_schema_reader_agrees_with_torchs(text: str) -> None:
    from vgfc.resolve.library.torch_schema import parse_torch

    ours, theirs = parse_torch(text), torch._C.parse_schema(text)
    assert (ours.qualname, ours.overload) == (theirs.name, theirs.overload_name)
    assert [(a.name, _as_torch_prints(a.type)) for a in ours.arguments] == [
        (a.name, str(a.type)) for a in theirs.arguments
    ]
    assert [_as_torch_prints(r) for r in ours.returns] == [str(r.type) for r in theirs.returns]


@pytest.mark.parametrize("text", _BROKEN)
def test_what_torch_refuses_vgfcs_reader_refuses(text: str) -> None:
    from vgfc.resolve.library.torch_schema import parse_torch

    with pytest.raises(RuntimeError):
        torch._C.parse_schema(text)
    with pytest.raises(InputError):
        parse_torch(text)
