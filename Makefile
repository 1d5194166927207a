# a2a-grpc. `make run` and `make test` set everything up on first use: they
# create .venv/ and install the project with its dev tools into it.
SYSTEM_PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# Installs with uv's pip (a dev dependency, from PyPI): it resolves and installs in
# seconds what pip takes minutes over; the tests' own virtualenvs use it too (tools/kits.py).
UV := $(VENV)/bin/uv pip install --quiet --python $(PY)
BENCH_STAMP := $(VENV)/.bench-installed
# Python caches each module it compiles (__pycache__/, ignored by git) unless
# PYTHONDONTWRITEBYTECODE is set, as some container images do: then every process
# compiles its modules from source again, and the suite starts hundreds of servers
# and clients (the time it costs: docs/development.md).
unexport PYTHONDONTWRITEBYTECODE

.PHONY: run test lint proto install clean bench bench-carriers bench-cores bench-stores bench-instructions tck tck10 itk chaos soak browser docs

run: $(STAMP)
	$(PY) -m a2a_grpc serve $(ARGS)

# In parallel, two workers a core (at most 4: a third of a run's time is spent waiting on
# servers and clients in other processes), an idle worker taking tests queued for a busy
# one (worksteal): ARGS="-n 0 tests/unit" runs a part in one process.
WORKERS ?= $(shell $(SYSTEM_PYTHON) -c 'import os; print(min(4, 2 * (os.cpu_count() or 1)))')
test: $(STAMP)
	$(PY) -m pytest -n $(WORKERS) --dist worksteal --durations=15 $(ARGS)

# The documentation site (mkdocs.yml) into site/; a warning is an error.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict --site-dir site

# Measurements, not tests (see docs/benchmarks.md). `make bench` runs our server,
# the official SDK's (installed into .interop/sdk-venv on first use) and a no-work
# ceiling side by side, and rewrites the results in docs/benchmarks.md and
# docs/bench-wire.png (and, for the durable stores' growth rows, docs/bench-growth.png).
# ARGS="--rounds 1 --seconds 1" for a quick look, ARGS="--only durable" for the stores.
bench: $(BENCH_STAMP)
	$(PY) -m benchmarks.wire $(ARGS)

# Every core of a big machine: ours (1 process, --workers N) and the JS SDK (1 process,
# node's cluster of N) on cores 0..N-1, M load processes on the others, windows aligned,
# rates summed (benchmarks/cores.py). ARGS="--server-cores 8 --load-procs 8".
bench-cores: $(BENCH_STAMP)
	$(PY) -m benchmarks.cores $(ARGS)

# gRPC carried by other HTTP/2 servers (pyvoy, hypercorn, granian) against grpc.aio, on the
# ceiling's work (benchmarks/carriers.py; the carriers into .interop/carriers-venv).
bench-carriers: $(BENCH_STAMP)
	$(PY) -m benchmarks.carriers $(ARGS)

# The stores through their API: ListTasks pages at 1k/100k tasks, SendMessage per store.
bench-stores: $(STAMP)
	$(PY) -m benchmarks.stores $(ARGS)

# Instructions per in-process SendMessage and stream event, counted by callgrind
# (needs valgrind): repeatable where timings are not (benchmarks/instructions.py).
bench-instructions: $(STAMP)
	$(PY) -m benchmarks.instructions $(ARGS)

# The official conformance suite against our server and the official SDK's, side by
# side, every binding and category (docs/conformance.md). Not part of `make test`:
# the suite is not on PyPI. A2A_TCK_DIR=a checkout of a2aproject/a2a-tck (main).
tck: $(STAMP)
	$(PY) -m tools.tck $(ARGS)

# The 1.0-dev conformance kit against our server, each failure classed
# (docs/conformance-1.0-dev.md). A2A_TCK10_DIR=a checkout of a2aproject/a2a-tck, 1.0-dev.
tck10: $(STAMP)
	$(PY) -m tools.tck10 $(ARGS)

# The A2A integration test kit: our agent (itk/) in multi-hop traversals with the
# official SDKs' agents (docs/itk.md). A2A_ITK_DIR=a checkout of a2aproject/a2a-itk.
itk: $(STAMP)
	$(PY) -m tools.itk $(ARGS)

# Three replicas under load while replicas are killed and paused, Redis is restarted and
# PostgreSQL's connections are cut; every acknowledged operation is then checked
# (docs/reliability.md). ARGS="--minutes 10 --doc" for the documented run.
chaos: $(STAMP)
	$(PY) -m tools.chaos $(ARGS)

# A steady load for a long time, with retention on: RSS, file descriptors, the store and
# Redis sampled (docs/reliability.md; --doc plots them, with the [bench] extra).
soak: $(BENCH_STAMP)
	$(PY) -m tools.chaos.soak $(ARGS)

# Debian's Chromium, for the inspector's browser tests (tests/browser; skipped without
# it, except under CI=true, where .ci/run installs it). Needs root and Debian's archive.
browser:
	command -v chromium >/dev/null || (apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium)

# ruff reads bridge/ where it is (it does not follow the package's links);
# mypy and the import rules read it as a2a_grpc.bridge.
lint: $(STAMP)
	$(PY) -m ruff check a2a_grpc bridge tests examples benchmarks tools itk
	$(PY) -m mypy
	$(VENV)/bin/lint-imports

# Compile proto/ (1.0, and 0.3 for older clients) into generated/ (with .pyi
# stubs), which the package holds as a2a_grpc/generated (a link to it); and the
# integration test kit's instruction (itk/instruction.proto) for itk/agent.py.
# The Python types come from copies of the protos whose package is private
# (a2a_grpc.lf.a2a.v1: tools/private_protos.py), so that they share a process
# with the official SDK's `lf.a2a.v1`; the gRPC stubs come from proto/ as it
# is, so their method paths are the published ones (a2a_grpc/core/published.py).
# `-I a2a_grpc/generated=...` makes the output import
# `from a2a_grpc.generated import a2a_pb2`; google/api/*.proto come from
# googleapis-common-protos.
GOOGLEAPIS = $$($(PY) -c 'import google.api, os; print(os.path.dirname(os.path.dirname(next(iter(google.api.__path__)))))')
PRIVATE_PROTOS := .private-protos

proto: $(STAMP)
	rm -rf $(PRIVATE_PROTOS)
	$(PY) -m tools.private_protos $(PRIVATE_PROTOS) proto/a2a.proto proto/a2a_v03.proto
	$(PY) -m grpc_tools.protoc -I a2a_grpc/generated=$(PRIVATE_PROTOS) -I "$(GOOGLEAPIS)" \
		--python_out=. --pyi_out=. $(PRIVATE_PROTOS)/a2a.proto $(PRIVATE_PROTOS)/a2a_v03.proto
	$(PY) -m grpc_tools.protoc -I a2a_grpc/generated=proto -I "$(GOOGLEAPIS)" \
		--grpc_python_out=. proto/a2a.proto proto/a2a_v03.proto
	rm -rf $(PRIVATE_PROTOS)
	@printf '"""Code generated by `make proto` from proto/*.proto. Do not edit."""\n' > generated/__init__.py
	$(PY) -m grpc_tools.protoc -I itk=itk --python_out=. --pyi_out=. itk/instruction.proto

install: $(STAMP)

$(STAMP): pyproject.toml
	@echo "setting up $(VENV) (first run only; needs PyPI)..."
	$(SYSTEM_PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip uv
	$(UV) -e '.[dev]'
	@touch $@

$(BENCH_STAMP): $(STAMP)
	$(UV) -e '.[dev,bench]'
	@touch $@

clean:
	rm -rf $(VENV) .interop .pytest_cache .mypy_cache .ruff_cache
