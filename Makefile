# Kiln: `make data` runs the data pipeline, `make test` runs the tests.
# Both create .venv on first use and reinstall only when requirements/*.lock change.

PYTHON   ?= python3
VENV     ?= .venv
DATA_DIR ?= data
INPUT    ?=
CONFIG   ?=
ARGS     ?=
DEMO_DOCS ?=
PYTEST_ARGS ?=

PY       := $(VENV)/bin/python
LOCKS    := requirements/data.lock requirements/nodeps.in requirements/dev.lock
LOCK_ID  := $(shell cat $(LOCKS) pyproject.toml 2>/dev/null | sha256sum | cut -c1-16)
STAMP    := $(VENV)/.installed-$(LOCK_ID)

.DEFAULT_GOAL := help
.PHONY: help data test lint status venv lock clean-data

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-12s %s\n", $$1, $$2}'
	@echo "  variables: INPUT=<file, folder or glob>  DATA_DIR=$(DATA_DIR)  CONFIG=<yaml>  DEMO_DOCS=<n>  ARGS=<extra flags>"

$(STAMP): $(LOCKS) pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q --no-deps -r requirements/data.lock -r requirements/dev.lock
	$(PY) -m pip install -q --no-deps -e .
	@rm -f $(VENV)/.installed-*
	@touch $@

venv: $(STAMP) ## create or update .venv (data stages + dev tools)

data: $(STAMP) ## run every data stage: on INPUT if given, else on the built-in demo corpus
	$(PY) -m stages --data-dir $(DATA_DIR) \
		$(if $(strip $(INPUT)),--input $(INPUT),--demo $(if $(DEMO_DOCS),--demo-docs $(DEMO_DOCS))) \
		$(if $(CONFIG),--config $(CONFIG)) $(ARGS)

test: $(STAMP) ## run the test suite
	$(PY) -m pytest $(PYTEST_ARGS)

lint: $(STAMP) ## ruff over the code
	$(VENV)/bin/ruff check .

status: $(STAMP) ## show what each stage under DATA_DIR has done
	$(VENV)/bin/kiln status $(DATA_DIR)

lock: ## re-resolve requirements/*.in into requirements/*.lock (needs PyPI)
	requirements/lock.sh $(PYTHON)

clean-data: ## delete DATA_DIR
	rm -rf $(DATA_DIR)
