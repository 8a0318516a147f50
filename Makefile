# promptdeck — two commands: `make demo` and `make test`.
#   make demo        installs promptdeck alone (no test tools) and opens the demo
#   make test        installs the test tools and the agent CLIs, then ruff, mypy and pytest
#   make test E2E=0  the same without fetching the agent CLIs; the end-to-end tests are skipped
PYTHON ?= python3
E2E    ?= 1
# Two test processes per core: many tests spend their time waiting on processes they started
# (the agent CLIs, the replay agent, git, tmux), which a second process per core fills.
WORKERS ?= $(shell echo $$(( $$(nproc 2>/dev/null || echo 1) * 2 )))
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
DEMO_STAMP := $(VENV)/.installed-demo
INSTALL_LOG := $(VENV)/install.log
NPM_PREFIX := $(CURDIR)/.tools/npm

# setuptools ends every editable install with a note about folders named like the package in
# the working directory; this layout has none (core/, cli/, tui/ and themes/ install as promptdeck.*),
# so that one note is silenced here. pip's own output goes to $(INSTALL_LOG), shown on failure.
PIP_INSTALL := PYTHONWARNINGS="ignore:Editable installation" $(BIN)/python -m pip install \
	--quiet --disable-pip-version-check

ifeq ($(E2E),0)
PYTEST_ENV := PROMPTDECK_SKIP_E2E=1
else
PYTEST_ENV :=
endif

.PHONY: demo test lint typecheck pytest bench bench-peers clean agent-clis claude-cli codex-cli

$(BIN)/python:
	@$(PYTHON) -m venv $(VENV)
	@$(BIN)/python -m pip install --quiet --disable-pip-version-check --upgrade pip \
		> $(VENV)/pip-upgrade.log 2>&1 || cat $(VENV)/pip-upgrade.log

# The runtime dependencies only; a venv that already has the test install has them all.
$(DEMO_STAMP): pyproject.toml | $(BIN)/python
	@if [ -f $(STAMP) ] && [ $(STAMP) -nt pyproject.toml ]; then :; else \
		echo "make: installing promptdeck and its runtime dependencies into $(VENV) (first run only; log: $(INSTALL_LOG))"; \
		$(PIP_INSTALL) -e . > $(INSTALL_LOG) 2>&1 || { cat $(INSTALL_LOG); exit 1; }; \
	fi
	@touch $@

$(STAMP): pyproject.toml | $(BIN)/python
	@echo "make: installing promptdeck with its test and bench tools into $(VENV) (first run only; log: $(INSTALL_LOG))"
	@$(PIP_INSTALL) -e '.[test,bench]' > $(INSTALL_LOG) 2>&1 || { cat $(INSTALL_LOG); exit 1; }
	@touch $@

## demo: open promptdeck on its bundled demo workspace with the offline replay agent
demo: $(DEMO_STAMP)
	@$(BIN)/promptdeck demo

## test: lint (ruff, import contracts), type-check core/ cli/ tui/ themes/ bench/, and run the whole test suite
test: $(STAMP) agent-clis lint typecheck pytest

lint: $(STAMP)
	$(BIN)/ruff check core cli tui themes tests bench
	$(BIN)/ruff format --check core cli tui themes tests bench
	$(BIN)/lint-imports

typecheck: $(STAMP)
	$(BIN)/mypy

# The suite runs spread over worker processes (pytest-xdist): WORKERS (two per core unless
# given; `auto` is one per core); `make pytest WORKERS=0` runs it in one process. --dist loadgroup hands tests out one by one,
# except that a group (pytest.mark.xdist_group, e.g. the wheel's tests) stays on one worker.
pytest: $(STAMP)
	PATH="$(NPM_PREFIX)/node_modules/.bin:$$PATH" $(PYTEST_ENV) $(BIN)/pytest -q \
		-n $(WORKERS) --dist loadgroup

# npm_cli BINARY PACKAGE SIZE: install an agent CLI for the end-to-end tests into .tools/npm,
# once, saying what it fetches and how big it is first; without npm, say the tests will skip.
define npm_cli
	@if [ -x "$(NPM_PREFIX)/node_modules/.bin/$(1)" ]; then :; \
	elif ! command -v npm >/dev/null 2>&1; then \
		echo "make: npm not found; the end-to-end $(1) tests will be skipped"; \
	else \
		echo "make: fetching $(2) with npm into .tools/npm ($(3), once; 'make test E2E=0' skips it and the end-to-end tests)"; \
		mkdir -p $(NPM_PREFIX) && \
		npm install --silent --no-audit --no-fund --prefix $(NPM_PREFIX) $(2) >/dev/null 2>&1 \
		|| echo "make: npm could not install $(2); the end-to-end $(1) tests will be skipped"; \
	fi
endef

## agent-clis: the real agent CLIs for the end-to-end tests (skipped, visibly, with E2E=0)
agent-clis: claude-cli codex-cli

claude-cli:
ifeq ($(E2E),0)
	@echo "make: E2E=0: not fetching the agent CLIs; the end-to-end tests will be skipped"
else
	$(call npm_cli,claude,@anthropic-ai/claude-code,about 235 MB)
endif

codex-cli:
ifneq ($(E2E),0)
	$(call npm_cli,codex,@openai/codex,about 400 MB)
endif

## bench-peers: repomix, the peer the benchmarks compare with, into .tools/npm (once)
bench-peers:
	@if [ -x "$(NPM_PREFIX)/node_modules/.bin/repomix" ]; then :; \
	elif ! command -v npm >/dev/null 2>&1; then \
		echo "make: npm not found; the benchmarks will run without repomix"; \
	else \
		echo "make: fetching repomix with npm into .tools/npm (about 60 MB, once)"; \
		mkdir -p $(NPM_PREFIX) && \
		npm install --silent --no-audit --no-fund --prefix $(NPM_PREFIX) repomix >/dev/null 2>&1 \
		|| echo "make: npm could not install repomix; the benchmarks will run without it"; \
	fi

## bench: the budgets (fresh processes, interleaved with the floor and the peers; exit 1 when
## a budget is missed), then every other benchmark's figures
bench: $(STAMP) bench-peers
	$(BIN)/python bench/run_all.py

clean:
	rm -rf $(VENV) .tools .pytest_cache .mypy_cache .ruff_cache build *.egg-info
