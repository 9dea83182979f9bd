"""The one option table (vgfc.options.OPTIONS): the click commands, the quick parser,
``vgfc.compile()`` and the records' defaults are all made from it, and the API checks what the
command line checks."""

from __future__ import annotations

from pathlib import Path

import click
import pytest
from tosa_factory import chain

import vgfc
from vgfc.cli.group import cli
from vgfc.cli.quick import parse_compile
from vgfc.compilation import Options, make_options
from vgfc.options import OPTIONS, UsageError, options_of
from vgfc.shader.options import CompileOptions

COMMANDS = ("compile", "check", "partition", "verify", "kernels")


def _command(name: str) -> click.Command:
    command = cli.get_command(click.Context(cli), name)
    assert command is not None, name
    return command


@pytest.mark.parametrize("name", COMMANDS)
def test_each_command_declares_exactly_the_options_the_table_gives_it(name: str) -> None:
    declared = {p.name for p in _command(name).params if isinstance(p, click.Option)}
    wanted = {o.param for o in options_of(name)}
    assert wanted <= declared
    # A compile option the table does not give the command is not there (its own options, such
    # as check's --json, are its business).
    others = {o.param for o in OPTIONS if o.into is not None} - wanted
    assert not (others & declared), sorted(others & declared)


def test_the_model_converter_takes_its_options_from_the_table() -> None:
    from vgfc.cli.model_converter_command import model_converter

    declared = {p.name for p in model_converter.params}
    assert {o.param for o in options_of("model-converter")} <= declared


def test_defaults_of_the_records_are_the_tables() -> None:
    built = make_options()
    assert built == Options()
    shader = CompileOptions()
    for option in options_of("compile", compiling=True):
        assert option.into is not None
        record: object = shader if option.into.startswith("shader.") else Options()
        field = option.into.removeprefix("shader.")
        assert getattr(record, field) == option.default, option.name


def test_every_quick_option_is_parsed_into_clicks_parameter(tmp_path: Path, monkeypatch) -> None:
    """Each option of the table that the quick path takes (not batch mode's) is recognised by
    it under every flag the table gives, with the parameter name click uses."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "m.tosa").write_bytes(chain(1))
    (tmp_path / "inc").mkdir()
    sample = {
        "file": "out.vgf",
        "choice": None,
        "seconds": "2",
        "count": "4096",
        "dirs": "inc",
        "defines": "N=1",
        "names": "lib.yaml",
        "text": "target",
    }
    for option in options_of("compile"):
        if option.batch or option.kind == "report":
            continue
        for flag in option.flags:
            choices = [c for c in option.choices if c != option.default]
            value = choices[0] if option.kind == "choice" else sample.get(option.kind)
            args = ["m.tosa", flag] if option.kind == "flag" else ["m.tosa", flag, str(value)]
            params = parse_compile(args)
            assert params is not None, args
            if option.kind == "flag":
                assert params[option.param] is True, args
            else:
                assert params[option.param] not in ((), None, option.default), args


def test_the_api_refuses_a_report_written_over_the_output(tmp_path: Path) -> None:
    model = tmp_path / "m.tosa"
    model.write_bytes(chain(1))
    out = tmp_path / "m.vgf"
    with pytest.raises(ValueError, match="the report and the VGF would both be written"):
        vgfc.compile(model, out, report=out)
    assert not out.exists()


def test_the_api_refuses_a_report_that_would_replace_the_model(tmp_path: Path) -> None:
    model = tmp_path / "m.tosa"
    model.write_bytes(chain(1))
    before = model.read_bytes()
    with pytest.raises(ValueError, match="that is a TOSA model, not a report"):
        vgfc.compile(model, tmp_path / "m.vgf", report=model)
    assert model.read_bytes() == before


def test_the_api_checks_include_dirs(tmp_path: Path) -> None:
    model = tmp_path / "m.tosa"
    model.write_bytes(chain(1))
    with pytest.raises(ValueError, match=r"include_dirs: .*missing.* is not a directory"):
        vgfc.compile(model, include_dirs=[tmp_path / "missing"])
    with pytest.raises(ValueError, match="is not a directory"):
        vgfc.compile(model, include_dirs=[model])


def test_one_string_is_one_library_not_its_characters(tmp_path: Path) -> None:
    assert make_options(kernels="mediapipe").kernels == ("mediapipe",)
    assert make_options(kernels=tmp_path / "ops.yaml").kernels == (str(tmp_path / "ops.yaml"),)
    assert make_options(include_dirs=str(tmp_path)).shader.include_dirs == (str(tmp_path),)
    assert make_options(defines="N=4").shader.defines == (("N", "4"),)


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"target": "bogus"}, "target must be one of scenario-runner, executorch"),
        ({"target_env": "vulkan2.0"}, "target_env must be one of"),
        ({"shader_timeout": -1}, "shader_timeout must be 0 or more seconds"),
        ({"shader_timeout": float("nan")}, "shader_timeout must be 0 or more seconds"),
        ({"shader_timeout": "soon"}, "shader_timeout must be 0 or more seconds"),
        ({"cache": "no"}, "cache must be True or False"),
        ({"defines": ["1X=2"]}, "'1X=2' is not NAME or NAME=VALUE"),
        ({"defines": [("A",)]}, r"defines: \('A',\) is not NAME, NAME=VALUE or \(NAME, VALUE\)"),
        ({"defines": [b"X=1"]}, "defines: b'X=1' is not NAME"),
        ({"kernels": [3]}, "kernels: 3 is not a file"),
        ({"kernels": 3}, "kernels: 3 is not one value or a list of them"),
        ({"include_dirs": 5}, "include_dirs: 5 is not one value or a list of them"),
    ],
)
def test_the_api_refuses_what_the_command_line_refuses(values: dict, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        make_options(**values)


def test_none_is_the_default() -> None:
    assert make_options(kernels=None, shader_timeout=None, target=None) == make_options()


def test_an_unknown_option_is_a_type_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="unknown compile option 'kernel'"):
        make_options(kernel=["ops.yaml"])


def test_the_command_line_says_the_apis_refusal_as_a_usage_error(cli, tmp_path: Path) -> None:
    model = tmp_path / "m.tosa"
    model.write_bytes(chain(1))
    run = cli("compile", str(model), "-D", "1X=2")
    assert run.code == 2
    assert "'1X=2' is not NAME or NAME=VALUE" in run.err


def test_every_option_is_in_the_commands_guide() -> None:
    """docs/commands.md (and, for vgfc-model-converter, docs/executorch.md) says what each
    option does: none is added to the table unseen there."""
    docs = Path(__file__).resolve().parents[3] / "docs"
    guide = (docs / "commands.md").read_text() + (docs / "executorch.md").read_text()
    import re

    def shown(flag: str) -> bool:
        return re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", guide) is not None

    missing = [o.flags[-1] for o in OPTIONS if not any(shown(f) for f in o.flags)]
    assert missing == []


@pytest.mark.parametrize("value", ["99999999999999999999", "1073741825", "9" * 5000, "-1"])
def test_a_memory_cap_past_any_address_space_is_a_short_usage_error(
    cli, tmp_path: Path, value: str
) -> None:
    model = tmp_path / "m.tosa"
    model.write_bytes(chain(1))
    run = cli("compile", str(model), "--shader-memory", value)
    assert run.code == 2
    assert "--shader-memory" in run.err and len(run.err) < 400
    assert not (tmp_path / "m.vgf").exists()
    with pytest.raises(UsageError, match="shader_memory must be a whole number"):
        make_options(shader_memory=int(value) if len(value) < 100 else 1 << 70)
