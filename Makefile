# The two commands: `make run` (set up + serve on the embedded PostgreSQL) and `make test`.
# Both create .venv with Python >= 3.12 and install what they need; nothing else is required.

VENV := .venv
PY := $(VENV)/bin/python
RUN_STAMP := $(VENV)/.installed-run
DEV_STAMP := $(VENV)/.installed-dev

.PHONY: run test setup lint format clean

run: $(RUN_STAMP)
	$(PY) manage.py serve --migrate --with-worker

test: $(DEV_STAMP)
	scripts/test.sh

setup: $(DEV_STAMP)

lint: $(DEV_STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

format: $(DEV_STAMP)
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

$(PY):
	@py=$$(scripts/find-python.sh) && echo "Creating $(VENV) with $$py" && "$$py" -m venv $(VENV)
	@$(PY) -m pip install --quiet --upgrade pip

# The project itself is installed editable, without dependencies (requirements*.txt pin those), so the
# `kenfold` command lands in .venv/bin. -qq hides setuptools' generic warning about editable installs.
$(RUN_STAMP): requirements.txt pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -r requirements.txt
	$(PY) -m pip install -qq --no-deps -e .
	@touch $@

$(DEV_STAMP): requirements.txt requirements-dev.txt pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -r requirements-dev.txt
	$(PY) -m pip install -qq --no-deps -e .
	@touch $@ $(RUN_STAMP)

clean:
	rm -rf $(VENV)
