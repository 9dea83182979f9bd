"""Kernel libraries (``--kernels lib.yaml``): what a library is, and how one is read.

A library file is YAML, read by PyYAML in safe mode, then validated against
``schemas/kernel_library.schema.json``, which documents every key. Every problem is reported the
way a compiler reports a source error: ``lib.yaml:12: TFL/MaxUnpooling2D: kernels[0].dispatch:
...``, with the line the offending key is on.

Beyond the schema, everything that can be checked without a model is checked while reading, so
that ``vgfc kernels`` and the first compile fail the same way. A library is untrusted input, as a
model is: its size, its YAML and the files it names are held to :mod:`vgfc.limits`.

The package's modules, each with one concern:

- :mod:`~vgfc.resolve.library.records`: the typed records (library, entry, kernel, composed
  graph) and the names the file format fixes;
- :mod:`~vgfc.resolve.library.load`: reading ``--kernels`` values into libraries;
- :mod:`~vgfc.resolve.library.yaml_front`: the bounded YAML parse, the schema, line numbers;
- :mod:`~vgfc.resolve.library.read_entry`, :mod:`~vgfc.resolve.library.read_kernel`,
  :mod:`~vgfc.resolve.library.read_compose` (on :mod:`~vgfc.resolve.library.reader`): checking
  validated data and building entries, by the section of an operator they read;
- :mod:`~vgfc.resolve.library.values`: dispatch sizes and composed-op constants under a scope.

Import from those modules.
"""
