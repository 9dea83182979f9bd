"""Bazel rules for vgfc: a TOSA model compiled to a VGF file as a hermetic, cacheable action.

Copy this file into your workspace (for example as bazel/vgfc.bzl) and load it:

    load("//bazel:vgfc.bzl", "vgf_model")

    vgf_model(
        name = "a",
        model = "models/a.tosa",
        includes = ["include/shared.glsl", "include/a.glsl"],
        include_dirs = ["include"],
    )

The action is a genrule, which needs no rule set from the network. It declares every file the
compile reads (the model, the kernel libraries, their shader files, every #include), so it runs in
Bazel's sandbox and on remote executors: a file left undeclared is missing there and the compile
fails, naming it. `vgfc compile MODEL -M` lists what a compile reads. The shader cache is off
(--no-cache): the action writes nothing but the VGF, and the same inputs give the same bytes on
every machine, so Bazel's disk or remote cache serves it.

The vgfc program is the label `vgfc_tool` (default //tools:vgfc): a file in your workspace that
runs your installed vgfc, so that its text is part of every action's key (see
docs/build-systems.md, "Bazel").
"""

# Staging: why the inputs are copied before vgfc reads them. vgfc confines #include (and a kernel
# library's shader files) to the include folders by real path, so that a link in a folder cannot
# make it read a file elsewhere; Bazel's sandbox presents each input as a link into the source tree,
# which vgfc would refuse. The copies are real files at the same relative paths (so vgfc's messages
# name the files as the workspace does), and only the declared inputs are copied, so an undeclared
# include fails with any spawn strategy, not only in the sandbox.

def _package_path(folder):
    """`folder`, relative to the calling BUILD file's package, as a path from the execution root
    (where a genrule's command runs)."""
    repository = native.repository_name().lstrip("@")
    parts = ["external", repository] if repository else []
    if native.package_name():
        parts.append(native.package_name())
    if folder not in ("", "."):
        parts.append(folder)
    return "/".join(parts) or "."

_WRITING = ("-o", "--output", "-d", "--output-dir", "--report", "-M", "-MM", "-MD", "-MMD", "-MF")
"""The options of vgfc compile that write files: the rule gives -o itself, and the others would
write files Bazel does not know of."""

def _quote(word):
    """`word` as one word of the shell (Bazel still expands $(location ...) and $$ in it)."""
    return "'" + word.replace("'", "'\\''") + "'"

def vgf_model(
        name,
        model,
        kernels = [],
        shaders = [],
        includes = [],
        include_dirs = [],
        copts = [],
        out = None,
        vgfc_tool = "//tools:vgfc",
        **kwargs):
    """A VGF file compiled from a TOSA model by `vgfc compile`.

    Args:
      name: the target's name.
      model: the .tosa file (a label).
      kernels: kernel library files, each given with --kernels (labels).
      shaders: the shader files those libraries name (labels): declared inputs only, as the
        libraries find them beside themselves.
      includes: every file a shader #includes, nested ones too (labels): declared inputs only.
      include_dirs: the folders searched for #include, as vgfc's -I, relative to this package.
      copts: further options of vgfc compile (["-DSCALE=2", "--target", "executorch"]), each
        one word of the shell; Bazel expands $(location LABEL) in them, and $$ is a $. An
        option that names a file must name a declared input.
      out: the VGF's name (default: NAME.vgf).
      vgfc_tool: the label of the program that runs vgfc.
      **kwargs: passed to the genrule (visibility, tags, testonly, ...).
    """
    for option in copts:
        if option.split("=")[0] in _WRITING:
            fail("vgf_model %s: copts: %s writes a file the rule does not declare" % (name, option))
    command = [
        '"$$tool"',
        "compile",
        "$(location %s)" % model,
        "-o",
        '"$$out"',
        "--no-cache",
        "--color",
        "never",
        "-q",
    ]
    for library in kernels:
        command += ["--kernels", "$(location %s)" % library]
    for folder in include_dirs:
        command += ["-I", _quote(_package_path(folder))]
    command += [_quote(option) for option in copts]
    script = [
        "set -e",
        "out=$$PWD/$@",
        "tool=$$PWD/$(location %s)" % vgfc_tool,
        # The declared inputs, copied with their paths into a folder of this action's own
        # (see Staging above).
        "stage=$$out.inputs",
        'rm -rf "$$stage"',
        "trap 'rm -rf \"$$stage\"' EXIT",
        'for f in $(SRCS); do mkdir -p "$$stage/$$(dirname "$$f")"; cp "$$f" "$$stage/$$f"; done',
        'cd "$$stage"',
        " ".join(command),
    ]
    native.genrule(
        name = name,
        srcs = [model] + kernels + shaders + includes,
        outs = [out or name + ".vgf"],
        tools = [vgfc_tool],
        cmd = "\n".join(script),
        message = "Compiling VGF %s" % (out or name + ".vgf"),
        **kwargs
    )
