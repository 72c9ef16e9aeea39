# Set-up and everyday commands. Every target creates .venv when it is missing.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test test-all exactness lint bench reproduce-table6 reproduce-all published clean

$(STAMP): pyproject.toml
	test -d $(VENV) || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/marginkit demo

test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python -m pytest -m "not slow" -q -n auto

test-all: $(STAMP)
	$(BIN)/python -m pytest -q

# the tests marked exactness under every OpenBLAS kernel this CPU runs (Prescott,
# Sandybridge, Haswell, SkylakeX where it has AVX-512, and the default)
exactness: $(STAMP)
	$(BIN)/python tools/exactness_on_every_blas.py

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

bench: $(STAMP)
	$(BIN)/python benchmarks/bench_linear.py

reproduce-table6: $(STAMP)
	$(BIN)/marginkit reproduce gentile-table6 --out results/gentile-table6

reproduce-all: $(STAMP)
	$(BIN)/marginkit reproduce all --out results

# the published values, regenerated from the papers' transcriptions (MARGINKIT_PUBLISHED)
published: $(STAMP)
	$(BIN)/python tools/generate_published.py

clean:
	rm -rf $(VENV) build dist src/*.egg-info .pytest_cache .ruff_cache
