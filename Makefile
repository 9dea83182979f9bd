# vgfc developer entry points. `make help` lists them.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
VGFC := $(VENV)/bin/vgfc
# Debian packages the tests need: graphviz renders `vgfc partition --dot` output.
APT_PACKAGES := graphviz mesa-vulkan-drivers libvulkan1 vulkan-validationlayers

SAMPLES := samples/mixed.tosa
SAMPLE_SOURCES := samples/build_samples.py $(wildcard samples/shaders/*)

.PHONY: help install install-test apt-deps samples run test lint typecheck bench clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-14s %s\n", $$1, $$2}'

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

run: $(VENV)/.installed ## install, then partition and compile the bundled mixed sample, with a report
	@[ -f samples/mixed.tosa ] || $(PY) samples/build_samples.py
	@mkdir -p build
	$(VGFC) partition samples/mixed.tosa
	$(VGFC) compile samples/mixed.tosa -o build/mixed.vgf --report build/mixed.report.json
	@echo "wrote build/mixed.vgf and build/mixed.report.json; see them with: $(VGFC) inspect build/mixed.vgf"

test: install-test ## install test dependencies, then run the whole test suite
	$(PY) -m pytest -q

lint: install-test ## ruff and mypy
	$(VENV)/bin/ruff check vgfc tests samples benchmarks scripts
	$(VENV)/bin/ruff format --check vgfc tests samples benchmarks scripts
	$(VENV)/bin/mypy

bench: install-test ## run the benchmarks under benchmarks/
	$(PY) benchmarks/bench_reader.py
	$(PY) benchmarks/bench_shader.py
	$(PY) benchmarks/bench_compile.py
	$(PY) benchmarks/bench_samples.py
	$(PY) benchmarks/bench_conformance.py

clean: ## remove the virtual environment and caches
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis
