# The kit's front door. `make install` then `make test`; `make certify VENDOR=cpu` certifies.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
VENDOR ?= cpu
OUT ?= results/$(VENDOR)

.PHONY: install test lint certify bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --upgrade --quiet pip

install: $(BIN)/python
	# torch is pinned in pyproject.toml; the constraint keeps every other package from moving it.
	$(BIN)/pip install --quiet --constraint constraints.txt -e ".[test]"
	# The demo vendor, installed the way any vendor is: through its profile's requirements.
	$(BIN)/ckit vendors install simnpu

test:
	$(BIN)/pytest

lint:
	$(BIN)/ruff check kit tests bench vendors/simnpu
	$(BIN)/mypy kit vendors/simnpu/src/simnpu

certify:
	$(BIN)/ckit vendors install $(VENDOR)
	$(BIN)/ckit keys generate --vendor $(VENDOR) --if-missing
	$(BIN)/ckit run --vendor $(VENDOR) --out $(OUT)
	$(BIN)/ckit verify $(OUT)/report.dsse.json --keyring signing/keyring

bench:
	$(BIN)/python bench/isolation_overhead.py
	$(BIN)/python bench/fault_slowdown.py
	$(BIN)/python bench/verify_scale.py

clean:
	rm -rf results .tox build *.egg-info
