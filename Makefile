# Pawnstorm developer tasks. Everything runs inside a local virtualenv (.venv),
# created on demand; editing pyproject.toml triggers a reinstall.

# The interpreter the virtualenv is made from: the system's python3 where it
# is 3.11 or newer and can make a virtualenv, else the first python3 on PATH.
# Debian's runs `bench` about 6% faster than pyenv's default build of the
# same Python, made without --enable-optimizations (docs/speed.md, "The
# interpreter"); `make PYTHON=... install` picks another.
SYSTEM_PYTHON = /usr/bin/python3
PYTHON ?= $(shell $(SYSTEM_PYTHON) -c 'import ensurepip, sys; sys.exit(sys.version_info < (3, 11))' >/dev/null 2>&1 \
	&& echo $(SYSTEM_PYTHON) || echo python3)
VENV = .venv
VPY = $(VENV)/bin/python
PIP = $(VPY) -m pip
PYTEST_ARGS ?=

.PHONY: all install interpreter run test test-fast exe bench clean distclean

all: install

install: $(VENV)/.installed

# The interpreter a new virtualenv is made from (an existing one stays as it was made: `make distclean install`).
interpreter:
	@$(PYTHON) -c 'import sys; print(sys.executable, sys.version.split()[0])'

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --upgrade pip

$(VENV)/.installed: pyproject.toml | $(VENV)/bin/python
	$(PIP) install -e .
	touch $@

$(VENV)/.installed-test: pyproject.toml $(VENV)/.installed
	$(PIP) install -e '.[test]'
	touch $@

$(VENV)/.installed-build: pyproject.toml $(VENV)/.installed
	$(PIP) install -e '.[build]'
	touch $@

run: $(VENV)/.installed
	exec $(VENV)/bin/pawnstorm

# The whole suite (what CI runs, through .ci/run): 7 to 12 minutes on two cores, by the machine (1069 tests, fresh clone).
test: $(VENV)/.installed-test
	$(VPY) -m pytest -q -rs $(PYTEST_ARGS)

# Everything but the tests marked `slow` (pyproject.toml): the quick check while editing.
test-fast: $(VENV)/.installed-test
	$(VPY) -m pytest -q -rs -m "not slow" $(PYTEST_ARGS)

exe: $(VENV)/.installed-build
	$(VENV)/bin/pyinstaller --noconfirm --clean build.spec
	@echo "built dist/pawnstorm"

bench: $(VENV)/.installed
	$(VENV)/bin/pawnstorm bench

clean:
	rm -rf build dist .pytest_cache .hypothesis *.egg-info
	find . -path ./$(VENV) -prune -o -type d -name __pycache__ -exec rm -rf {} +

distclean: clean
	rm -rf $(VENV)
