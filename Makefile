# The kit's front door. `make install` then `make test`; `make certify VENDOR=cpu` certifies.
PYTHON ?= python3
# The PyTorch release to install: 2.13.0 (the CPU wheel pip's find-links holds) by default;
# `make install TORCH=2.14.1 VENV=.venv-2.14.1` builds an environment of the other release the kit
# carries a standard for (from the index: a CUDA build of about 5.5 GB, which runs on the CPU).
TORCH ?= 2.13.0
VENV ?= .venv
BIN := $(VENV)/bin
VENDOR ?= cpu
CKIT ?= $(BIN)/ckit
KEYRING ?= signing/keyring
# Each `make certify` writes a directory of its own, so a second one never meets the first's
# report (a run never overwrites one). OUT=DIR names it instead.
RUN_STAMP := $(shell date -u +%Y%m%dT%H%M%SZ)
OUT ?= results/$(VENDOR)/$(RUN_STAMP)
# Extra `ckit run` options, e.g. CERTIFY_ARGS="--workers 4".
CERTIFY_ARGS ?=

.PHONY: install test test-heavy test-full lint certify certify-run bench bench-flows bench-scale bench-v2 bench-train bench-verify bench-audit bench-certify bench-compile clean

# Python writes each module's bytecode cache on first import, as it does by default: an
# environment that forbids it (PYTHONDONTWRITEBYTECODE=1) recompiles the kit's modules in every
# process a run or a test starts (the orchestrator, each fork server, each judge: about a second
# of CPU each).
unexport PYTHONDONTWRITEBYTECODE

# pip, quiet: one line per step says what is happening (a step's errors still come in full).
PIP_QUIET := --quiet --disable-pip-version-check

$(BIN)/python:
	@echo "install: creating the environment $(VENV) ($(PYTHON) -m venv)"
	@$(PYTHON) -m venv $(VENV)
	@echo "install: upgrading pip in $(VENV)"
	@$(BIN)/pip install --upgrade $(PIP_QUIET) pip

# --no-compile: pip would byte-compile every module of the environment (21,000 files, about 70 s
# of CPU for the torch 2.14.1 one, built while `make test` runs in CI); Python compiles a module
# the first time it is imported, and most are never imported.
# pyproject.toml admits each release the kit carries a standard for; the torch constraint picks
# one and keeps every other package from moving it (constraints.txt is the default's). The demo
# vendor is installed the way any vendor is, through its profile (skipped when the same sources
# are installed already: `ckit vendors install --force` reinstalls).
install: $(BIN)/python
	@echo "install: 1/2 the kit, torch $(TORCH) and the test dependencies into $(VENV) (pip; minutes on a cold cache)"
	@echo "torch==$(TORCH)" > $(VENV)/torch-constraint.txt
	@$(BIN)/pip install $(PIP_QUIET) --no-compile --constraint $(VENV)/torch-constraint.txt -e ".[test]" || \
		{ echo "install: pip failed (its error is above): fix that (network, pip.conf's find-links for the torch wheel), then run make install again" >&2; exit 1; }
	@echo "install: 2/2 the demo vendor simnpu (ckit vendors install simnpu)"
	@$(BIN)/ckit vendors install simnpu
	@echo "install: done; next: make test, or make certify VENDOR=cpu"

# Every core (tests/conftest.py keeps tests that share a fixture on one worker; one worker more
# than the cores was measured and gained nothing: the suite keeps two cores 98% busy). The 25
# slowest tests are printed so a new slow one shows in CI's log. TEST_WORKERS=0 runs in one
# process.
TEST_WORKERS ?= auto
test:
	$(BIN)/pytest -n $(TEST_WORKERS) --dist loadgroup --durations=25 -m "not heavy and not full"

# The tests marked heavy (pyproject.toml): the locked lists regenerated, fixed shards of complete
# certifications, four shards merged, device faults run end to end, Inductor compiles, environments
# built from scratch (judge attack venvs, cppnpu compiled, container images): minutes each; CI
# runs them next.
# One worker more than the cores: a heavy test waits part of its time (a hang's timeout, a
# container engine, Slurm), and the extra worker fills it (2 cores: 87% busy with 2 workers,
# 99% with 3; the suite 19 min 19 s -> 17 min 44 s). Each worker still computes on one core's
# share (tests/conftest.py).
HEAVY_WORKERS ?= $(shell echo $$(( $$(nproc) + 1 )))
test-heavy:
	$(BIN)/pytest -n $(HEAVY_WORKERS) --dist loadgroup --durations=10 -m heavy

# The tests marked full (pyproject.toml), beyond CI's 30-minute budget: the README's complete
# certifications as written in fresh clones (`make certify VENDOR=cpu`, simnpu's worked example),
# its C++ backend block, the flows block and the new release's block, and the benchmarks run
# end to end; about 30 minutes on 2 cores. Run before a release of the kit.
test-full:
	$(BIN)/pytest -n $(HEAVY_WORKERS) --dist loadgroup --durations=10 -m full

lint:
	$(BIN)/ruff check kit tests bench vendors/simnpu vendors/cppnpu
	$(BIN)/mypy kit vendors/simnpu/src/simnpu vendors/cppnpu/src/cppnpu

certify:
	@echo "certify: 1/3 the vendor $(VENDOR) (ckit vendors install: skipped when already installed)"
	@$(CKIT) vendors install $(VENDOR)
	@echo "certify: 2/3 the signing key of $(VENDOR) (made if missing)"
	@$(CKIT) keys generate --vendor $(VENDOR) --if-missing --keyring $(KEYRING)
	@echo "certify: 3/3 the run into $(OUT), then ckit verify"
	@$(MAKE) --no-print-directory certify-run VENDOR=$(VENDOR) OUT=$(OUT)

# Run, then verify what was signed whatever the grade, then exit with the run's own code: each
# grade has one (`ckit run --help`), which make shows as "Error N" (make itself then exits 2).
certify-run:
	@code=0; $(CKIT) run --vendor $(VENDOR) --out $(OUT) $(CERTIFY_ARGS) || code=$$?; \
	if [ -f "$(OUT)/report.dsse.json" ]; then \
		$(CKIT) verify "$(OUT)/report.dsse.json" --keyring $(KEYRING) || exit $$?; \
	fi; \
	echo "certify: $(OUT) (ckit run exit code $$code)"; \
	exit $$code

# Issue 26's speed figures side by side with their goals (bench/speed_summary.py: the whole
# unit tier several times, minutes), then verify's answer on a huge envelope, then whole-run
# reports verified a second in report.json's format beside the body format's (issue 37).
# BENCH_ARGS narrows or adds: BENCH_ARGS="--select 'unit/opinfo/a*/*/*'", BENCH_ARGS=--certify.
# Last, the complete certify of cpu and simnpu against issue 38's targets (bench-certify, below).
bench:
	$(BIN)/python bench/speed_summary.py $(BENCH_ARGS)
	$(BIN)/python bench/verify_scale.py
	$(BIN)/python bench/verify_throughput.py $(VERIFY_ARGS)
	$(BIN)/python bench/complete_certify.py --json results/complete-certify.json $(CERTIFY_BENCH_ARGS)

# The whole flows tier on the reference backends (about 40 minutes on 2 cores).
bench-flows:
	$(BIN)/python bench/flows_tier.py

# Scaling out (issue 11): 1 and 2 workers, 4 merged shards, verify throughput, isolation cost.
# The whole unit tier with 1 worker takes a long time on few cores; narrow it with
# SCALE_ARGS="--select 'unit/opinfo/a*/*/*'".
SCALE_ARGS ?=
bench-scale:
	$(BIN)/python bench/scale_out.py $(SCALE_ARGS)

# Standard v2's unit tier against v1's on the cpu vendor (issue 21: at most 2x v1's wall time on
# 2 cores). The whole tier takes hours on 2 cores; narrow both runs with
# V2_ARGS="--select 'unit/opinfo/a*/*/*'".
V2_ARGS ?=
bench-v2:
	$(BIN)/python bench/v2_budget.py $(V2_ARGS)

# The model tier on the cpu vendor without and with its training steps (issue 23: at most 2x
# the tier's wall time on 2 cores); TRAIN_ARGS="--select 'models/hf/*/eager'" narrows both runs.
TRAIN_ARGS ?=
bench-train:
	$(BIN)/python bench/training_budget.py $(TRAIN_ARGS)

# What Inductor costs per model the compile tier compiles (every Hugging Face model, each in a
# fresh process with an empty cache; about 7 minutes on 2 cores): COMPILE_ARGS="--model bert
# --train" narrows and adds the training step; --warm measures a rerun.
COMPILE_ARGS ?= --train
bench-compile:
	$(BIN)/python bench/compiled_model_cost.py $(COMPILE_ARGS)

# Whole-run reports verified per second in one process, report.json's format (issue 26) beside
# the body format's (issue 37); also part of `make bench`. VERIFY_ARGS="--reports 200
# --old-reports 3" for a quicker figure.
VERIFY_ARGS ?=
bench-verify:
	$(BIN)/python bench/verify_throughput.py $(VERIFY_ARGS)

# One signed submission copied under 10,000 run ids (issue 24): ckit audit and ckit gate within
# 60 s each on 2 cores. AUDIT_ARGS="--copies 999" for a smaller repository; AUDIT_ARGS="--bodies
# 1000": 1,000 whole-run body-format submissions audited with recorded verdicts (issue 37).
AUDIT_ARGS ?=
bench-audit:
	$(BIN)/python bench/audit_scale.py $(AUDIT_ARGS)

# A complete certify (ckit run, every default tier, no --select) of cpu and simnpu, timed, against
# issue 38's targets on 2 cores (bench/complete_certify.py's TARGET_MINUTES; exit 1 when missed or
# not conformant); figures in results/complete-certify.json. CERTIFY_BENCH_ARGS="--vendor cpu".
CERTIFY_BENCH_ARGS ?=
bench-certify:
	$(BIN)/python bench/complete_certify.py --json results/complete-certify.json $(CERTIFY_BENCH_ARGS)

clean:
	rm -rf results .tox build *.egg-info
