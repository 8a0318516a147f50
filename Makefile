# promptdeck — two commands: `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
NPM_PREFIX := $(CURDIR)/.tools/npm

.PHONY: demo test lint typecheck pytest bench clean claude-cli

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[test,bench]'
	touch $(STAMP)

## demo: open promptdeck on its bundled demo workspace with the offline replay agent
demo: $(STAMP)
	$(BIN)/promptdeck demo

## test: lint, type-check core/, and run the whole test suite
test: $(STAMP) claude-cli lint typecheck pytest

lint: $(STAMP)
	$(BIN)/ruff check core tui themes tests bench
	$(BIN)/ruff format --check core tui themes tests bench

typecheck: $(STAMP)
	$(BIN)/mypy

pytest: $(STAMP)
	PATH="$(NPM_PREFIX)/node_modules/.bin:$$PATH" $(BIN)/pytest -q

## claude-cli: the real Claude Code and Codex CLIs for the end-to-end tests (skipped, visibly, without npm)
claude-cli:
	@if command -v npm >/dev/null 2>&1; then \
		if [ ! -x "$(NPM_PREFIX)/node_modules/.bin/claude" ]; then \
			mkdir -p $(NPM_PREFIX) && \
			npm install --silent --no-audit --no-fund --prefix $(NPM_PREFIX) @anthropic-ai/claude-code >/dev/null 2>&1 \
			|| echo "make: npm could not install @anthropic-ai/claude-code; the end-to-end test will be skipped"; \
		fi; \
		if [ ! -x "$(NPM_PREFIX)/node_modules/.bin/codex" ]; then \
			mkdir -p $(NPM_PREFIX) && \
			npm install --silent --no-audit --no-fund --prefix $(NPM_PREFIX) @openai/codex >/dev/null 2>&1 \
			|| echo "make: npm could not install @openai/codex; the end-to-end codex test will be skipped"; \
		fi; \
	else \
		echo "make: npm not found; the end-to-end claude and codex tests will be skipped"; \
	fi

## bench: run the benchmarks and print their figures
bench: $(STAMP)
	$(BIN)/python bench/run_all.py

clean:
	rm -rf $(VENV) .tools .pytest_cache .mypy_cache .ruff_cache build *.egg-info
