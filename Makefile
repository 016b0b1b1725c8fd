# The two commands: `make run` (set up + serve on the embedded PostgreSQL) and `make test`.
# Both create .venv with Python >= 3.12 and install what they need; nothing else is required.

VENV := .venv
PY := $(VENV)/bin/python
RUN_STAMP := $(VENV)/.installed-run
DEV_STAMP := $(VENV)/.installed-dev
# The client distribution's build backend, pinned for the wheelhouse below.
CLIENT_BUILD := setuptools==84.2.1
WHEELHOUSE := $(VENV)/wheelhouse/.complete

# The MCP conformance suite (OAuth authorization-server mode) and the Node 22 it runs on, both from npm,
# pinned by tests/conformance/package-lock.json; tests/oauth/test_conformance.py runs it.
CONFORMANCE := tests/conformance/node_modules/.package-lock.json
# The real agent CLIs (Claude Code, Codex, OpenCode) that `make test-agents` drives, pinned by
# tests/agents/package-lock.json.
AGENT_CLIS := tests/agents/node_modules/.package-lock.json

.PHONY: run test test-browser test-agents test-bench bench-cluster setup lint format clean

run: $(RUN_STAMP)
	$(PY) manage.py serve --migrate --with-worker

test: $(DEV_STAMP) $(CONFORMANCE)
	scripts/test.sh

# The dashboard in a real browser (tests/browser): Playwright from PyPI driving Debian's chromium, so no
# browser is downloaded. Not part of `make test`.
test-browser: $(DEV_STAMP)
	@command -v chromium >/dev/null 2>&1 || { echo "make test-browser needs Debian's chromium; install it with: sudo apt-get install -y chromium" >&2; exit 1; }
	scripts/test.sh -m browser tests/browser

# The bench/ evaluations' harnesses (tests/bench): each evaluation run end to end against a scripted chat
# server on 127.0.0.1, checking the scoring, not a model. Not part of `make test`.
test-bench: $(DEV_STAMP)
	scripts/test.sh -m bench tests/bench

# The real agents end to end (tests/agents): Claude Code, Codex and OpenCode from npm, each on a HOME of
# its own, against a scripted model server on 127.0.0.1 and a live Kenfold. Not part of `make test`.
test-agents: $(DEV_STAMP) $(AGENT_CLIS)
	scripts/test.sh -m agents tests/agents

# Kenfold at scale on loopback (bench/cluster/run.py: PostgreSQL, PgBouncer, 3 web servers, 2 job workers,
# HAProxy; the correctness checks and the fault run). PgBouncer and HAProxy come from Debian, installed here
# when missing. Not part of `make test`. ARGS passes options, e.g. make bench-cluster ARGS="--phases numbers".
bench-cluster: $(DEV_STAMP)
	@missing=""; for program in pgbouncer haproxy; do \
	  command -v $$program >/dev/null 2>&1 || [ -x /usr/sbin/$$program ] || missing="$$missing $$program"; done; \
	if [ -n "$$missing" ]; then \
	  sudo=""; if [ "$$(id -u)" -ne 0 ]; then sudo="sudo"; fi; \
	  echo "make bench-cluster: installing$$missing from Debian"; \
	  $$sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	  $$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq$$missing >/dev/null; fi
	$(PY) bench/cluster/run.py $(ARGS)

setup: $(DEV_STAMP)

lint: $(DEV_STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports

format: $(DEV_STAMP)
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

$(PY):
	@py=$$(scripts/find-python.sh) && echo "Creating $(VENV) with $$py" && "$$py" -m venv $(VENV)
	@$(PY) -m pip install --quiet --upgrade pip

# The server and the client distribution (client/: the `kenfold` command and kenfold_common, which the
# server imports) are installed editable, without dependencies (the requirements files pin those); the
# client's own dependencies come too, so .venv/bin/kenfold works for `refs sync` hooks. -qq hides
# setuptools' generic warning about editable installs.
# (The client goes second: an older .venv whose root distribution still owned bin/kenfold would drop it.)
$(RUN_STAMP): requirements.txt client/requirements.txt pyproject.toml client/pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -r requirements.txt -r client/requirements.txt
	$(PY) -m pip install -qq --no-deps -e .
	$(PY) -m pip install -qq --no-deps -e ./client
	@touch $@

$(DEV_STAMP): requirements.txt requirements-dev.txt client/requirements.txt pyproject.toml client/pyproject.toml $(WHEELHOUSE) | $(PY)
	$(PY) -m pip install --quiet -r requirements-dev.txt
	$(PY) -m pip install -qq --no-deps -e .
	$(PY) -m pip install -qq --no-deps -e ./client
	@touch $@ $(RUN_STAMP)

# The wheelhouse holds the client's pinned dependencies and its build backend, so that a test can install
# the client distribution alone into a fresh venv (pip --no-index) without reaching a package index: for
# this Python, and for Python 3.11, the oldest the client supports that this machine has (tree-sitter's
# wheel is built per Python version; the others are the same files).
$(WHEELHOUSE): client/requirements.txt | $(PY)
	$(PY) -m pip download --quiet --only-binary=:all: -d $(VENV)/wheelhouse -r client/requirements.txt $(CLIENT_BUILD)
	$(PY) -m pip download --quiet --only-binary=:all: --python-version 3.11 -d $(VENV)/wheelhouse -r client/requirements.txt $(CLIENT_BUILD)
	@touch $@

$(CONFORMANCE): tests/conformance/package.json tests/conformance/package-lock.json
	npm ci --prefix tests/conformance --no-audit --no-fund --loglevel=error
	@touch $@

# `npm install --no-save`, not `npm ci`: npm ci wants a lock entry for every platform's optional build of
# opencode-ai, and the registry these machines reach lacks the macOS and Windows ones, so no lock can list
# them; install takes the locked versions of what is there and leaves the lock file alone.
$(AGENT_CLIS): tests/agents/package.json tests/agents/package-lock.json
	@npm install --no-save --prefix tests/agents --no-audit --no-fund --loglevel=error || { echo "make test-agents: could not install the agent CLIs from npm (see the error above); it needs the npm registry, or a cache that holds tests/agents/package-lock.json's packages" >&2; exit 1; }
	@touch $@

clean:
	rm -rf $(VENV) tests/conformance/node_modules tests/agents/node_modules
