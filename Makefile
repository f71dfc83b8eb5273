# The two commands a new user needs (see README): `make demo` and `make test`.
# Both create ./.venv with python3 and install the project into it on first use.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-dev
SAMPLE := tests/fixtures/kafka-0.9.0.1/cleaner-died/kafka-logs

.PHONY: demo test lint sanitize bench tools deploy-check

$(STAMP): pyproject.toml setup.py
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,spark,api]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/offsets-auditor dump --summary $(SAMPLE)/__consumer_offsets-*/*.log
	@$(BIN)/offsets-auditor audit $(SAMPLE) \
		--broker-config $(SAMPLE)/../broker-server.properties \
		|| echo "(audit exit status $$?: 2 = critical findings, as expected for this sample)"

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports

# Debian's prometheus (promtool) and prometheus-alertmanager, unpacked into .tools/ (no root):
# the deploy/ tests run promtool and, end to end, Prometheus and Alertmanager.
tools:
	scripts/tools/prometheus.sh >/dev/null

# pytest includes tests/deploy: rules (promtool check/test rules), dashboard, Kubernetes manifests,
# Dockerfile (hadolint), runbooks, and the end-to-end run of docs/operators-guide.md.
test: lint tools
	$(BIN)/pytest
	scripts/sanitize.sh $(BIN)/python

# Only the deploy/ checks.
deploy-check: $(STAMP) tools
	$(BIN)/pytest tests/deploy

# The C reader built with ASan and UBSan, under the tests that drive it hardest.
sanitize: $(STAMP)
	scripts/sanitize.sh $(BIN)/python

bench: $(STAMP)
	$(BIN)/python -m benchmarks.decode
