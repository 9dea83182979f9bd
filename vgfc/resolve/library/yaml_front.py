"""The front end of a kernel library: its YAML text to plain data that its schema holds.

The YAML is read by PyYAML in safe mode, held to the limits of :mod:`vgfc.limits` while it is
parsed: nesting depth, values (aliases expanded, so an alias bomb is refused), and the length of
numbers. The data is then validated against ``schemas/kernel_library.schema.json``. Line numbers
come from PyYAML's node tree, kept beside the plain data (:class:`Lines`), so that every problem,
here or in the readers, names the line and column of the offending key (:func:`path_text` names
its key).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from vgfc.diagnostics import InputError, Location
from vgfc.limits import LIMITS, quote

__all__ = ["Lines", "path_text", "read_document"]


def read_document(text: str, shown: str) -> tuple[Any, Lines]:
    """A library's text as data its schema holds, and the lines of its values.
    Raises :class:`InputError`."""
    import yaml

    where = Location(file=shown)
    try:
        loader = _new_loader(text, shown)
        try:
            node = loader.get_single_node()
            if node is None:
                raise InputError("empty: a kernel library needs vgfc_kernels and operators", where)
            _count_nodes(node, shown)
            data = loader.construct_document(node)
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark
        raise InputError(
            f"not valid YAML: {quote(e.problem or e.context, 200)}",
            Location(
                file=shown,
                file_line=mark.line + 1 if mark else 0,
                file_column=mark.column + 1 if mark else None,
            ),
        ) from None
    except yaml.YAMLError as e:
        raise InputError(f"not valid YAML: {quote(str(e), 200)}", where) from None
    lines = Lines(node)
    _validate(data, lines, shown)
    return data, lines


def _yaml_loader() -> type:
    """PyYAML's safe loader held to the limits while it composes and constructs."""
    import yaml

    class Loader(yaml.SafeLoader):
        def __init__(self, text: str, shown: str) -> None:
            super().__init__(text)
            self.shown = shown
            self.depth = 0
            self.nodes = 0

        def fail(self, message: str, mark: Any) -> InputError:
            line = mark.line + 1 if mark is not None else 0
            column = mark.column + 1 if mark is not None else None
            return InputError(
                message, Location(file=self.shown, file_line=line, file_column=column)
            )

        def compose_node(self, parent: Any, index: Any) -> Any:
            # Composing recurses once per level: the depth is checked before it goes deeper.
            if not self.check_event(yaml.AliasEvent):
                self.nodes += 1
                if self.nodes > LIMITS.yaml_nodes_max:
                    raise self.fail(
                        f"more than {LIMITS.yaml_nodes_max} values (yaml_nodes_max)",
                        self.peek_event().start_mark,  # type: ignore[no-untyped-call]
                    )
            self.depth += 1
            try:
                if self.depth > LIMITS.yaml_depth_max:
                    raise self.fail(
                        f"lists and maps nested more than {LIMITS.yaml_depth_max} deep "
                        "(yaml_depth_max)",
                        self.peek_event().start_mark,  # type: ignore[no-untyped-call]
                    )
                return super().compose_node(parent, index)
            finally:
                self.depth -= 1

        def construct_yaml_int(self, node: Any) -> Any:
            self.check_number(node)
            return super().construct_yaml_int(node)

        def construct_yaml_float(self, node: Any) -> Any:
            self.check_number(node)
            return super().construct_yaml_float(node)

        def check_number(self, node: Any) -> None:
            if len(node.value) > LIMITS.yaml_scalar_length_max:
                raise self.fail(
                    f"a number of {len(node.value)} characters, more than the "
                    f"{LIMITS.yaml_scalar_length_max} one may have (yaml_scalar_length_max)",
                    node.start_mark,
                )

    Loader.add_constructor("tag:yaml.org,2002:int", Loader.construct_yaml_int)
    Loader.add_constructor("tag:yaml.org,2002:float", Loader.construct_yaml_float)
    return Loader


def _new_loader(text: str, shown: str) -> Any:
    """A loader of ``text`` (the class is built on first use: PyYAML is imported then)."""
    global _LOADER
    if _LOADER is None:
        _LOADER = _yaml_loader()
    return _LOADER(text, shown)


_LOADER: type | None = None


def _count_nodes(node: Any, shown: str) -> None:
    """Refuse alias bombs: a document whose expansion visits too many values."""
    import yaml

    seen = 0
    stack = [node]
    while stack:
        n = stack.pop()
        seen += 1
        if seen > LIMITS.yaml_nodes_max:
            raise InputError(
                f"the document expands to more than {LIMITS.yaml_nodes_max} values through "
                "its aliases (yaml_nodes_max)",
                Location(file=shown),
            )
        if isinstance(n, yaml.MappingNode):
            for k, v in n.value:
                stack.extend((k, v))
        elif isinstance(n, yaml.SequenceNode):
            stack.extend(n.value)


class Lines:
    """The line and column of any value of the document, by its path of keys and indices."""

    def __init__(self, root: Any) -> None:
        self.root = root

    def place(self, path: Sequence[Any]) -> tuple[int, int]:
        """(line, column), both 1-based, of the value at ``path``: of its key in a mapping (not
        of its block), of the item in a list; of the deepest step the document has."""
        import yaml

        node = self.root
        mark = node.start_mark
        for step in path:
            if isinstance(node, yaml.MappingNode):
                for k, v in node.value:
                    if k.value == step or str(k.value) == str(step):
                        node, mark = v, k.start_mark
                        break
                else:
                    break
            elif isinstance(node, yaml.SequenceNode) and isinstance(step, int):
                if step >= len(node.value):
                    break
                node = node.value[step]
                mark = node.start_mark
            else:
                break
        return int(mark.line) + 1, int(mark.column) + 1


def _validate(data: Any, lines: Lines, shown: str) -> None:
    import jsonschema

    from vgfc.schema import load_schema

    if not isinstance(data, dict):
        raise InputError(
            f"a kernel library is a mapping (vgfc_kernels, operators), not {type(data).__name__}",
            Location(file=shown),
        )
    validator = jsonschema.Draft202012Validator(load_schema("kernel_library.schema.json"))
    errors = sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path))
    if not errors:
        return
    unknown = _unknown_key(errors, lines)
    if unknown is not None:
        # A misspelt key is the cause of what else fails in its mapping (``{bindng: 0}`` also
        # lacks ``binding``): it is named first, at its own line and column.
        path, message = unknown
    else:
        error = jsonschema.exceptions.best_match(errors)
        assert error is not None
        path, message = list(error.absolute_path), _schema_message(error)
    line, column = lines.place(path)
    where = Location(file=shown, file_line=line, file_column=column, key=path_text(data, path))
    raise InputError(message, where)


def _unknown_key(errors: Sequence[Any], lines: Lines) -> tuple[list[Any], str] | None:
    """The path to the first key (in document order) that the schema does not know, and its
    message with did-you-mean, looking into the errors of ``oneOf`` branches too; None if every
    key is known."""
    from vgfc.diagnostics import did_you_mean

    found: list[tuple[list[Any], str]] = []
    stack = list(errors)
    while stack:
        error = stack.pop()
        stack.extend(error.context or ())
        if error.validator != "additionalProperties" or not isinstance(error.instance, dict):
            continue
        allowed = sorted(error.schema.get("properties", {}))
        for key in error.instance:
            if key not in allowed:
                message = f"unknown key '{quote(str(key), 60)}'{did_you_mean(str(key), allowed)}"
                found.append(([*error.absolute_path, key], message))
    if not found:
        return None
    return min(found, key=lambda f: lines.place(f[0]))


def _schema_message(error: Any) -> str:
    if (
        error.validator == "oneOf"
        and error.schema.get("oneOf")
        and all("required" in s for s in error.schema["oneOf"])
    ):
        keys = " or ".join(s["required"][0] for s in error.schema["oneOf"])
        return f"needs exactly one of {keys}"
    return quote(error.message, 200)


def path_text(data: Any, path: Sequence[Any]) -> str:
    """``TFL/Foo: kernels[0].dispatch`` for a path into the document."""
    text = ""
    prefix = ""
    if len(path) >= 2 and path[0] == "operators" and isinstance(path[1], int):
        raw = data["operators"][path[1]]
        if isinstance(raw, dict):
            prefix = f"{raw.get('domain', '?')}/{raw.get('name', '?')}"
        else:
            prefix = f"operators[{path[1]}]"
        path = path[2:]
    for step in path:
        text += f"[{step}]" if isinstance(step, int) else (f".{step}" if text else str(step))
    return f"{prefix}: {text}" if prefix and text else (prefix or text or "(top level)")
