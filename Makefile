# The two commands a new user needs (see README): `make demo` and `make test`.
# Both create ./.venv with python3 and install the project into it on first use.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-dev
SAMPLE := tests/fixtures/kafka-0.9.0.1/cleaner-died/kafka-logs

.PHONY: demo test lint sanitize bench tools deploy-check test-deps service-load

# The bytecode is compiled at install, as a wheel install does: the editable install leaves none,
# and with PYTHONDONTWRITEBYTECODE set (as in many images) every command compiled every module.
$(STAMP): pyproject.toml setup.py
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,spark,api,live]'
	$(BIN)/python -m compileall -q offsets_auditor spark_jobs api >/dev/null
	touch $(STAMP)

# The demo: the Spark scan of four real brokers' log dirs (Kafka 0.9.0.1 and 2.3.0, the config
# they share), then two brokers of one real 2.3.0 cluster, each scanned as its own host would scan
# it (its own publisher), all published to $(RESULTS) and served as one view per cluster on
# http://localhost:$(PORT)/ (Ctrl-C stops).
RESULTS ?= .demo-results
PORT ?= 8080
DEMO_LOGDIRS := $(SAMPLE) \
	tests/fixtures/kafka-2.3.0/multi-pass/kafka-logs \
	tests/fixtures/kafka-2.3.0/transactions/kafka-logs \
	tests/fixtures/kafka-0.9.0.1/unclean-shutdown/kafka-logs
DEMO_CLUSTER := tests/fixtures/kafka-2.3.0/cluster
# its brokers' log dirs have no cluster.id (Kafka writes it from 2.4): the id they reported
DEMO_CLUSTER_ID := rtEes1wOSt6-9yHQBkXfVA

demo: $(STAMP)
	@$(BIN)/offsets-auditor scan $(DEMO_LOGDIRS) \
		--broker-config $(SAMPLE)/../broker-server.properties --out $(RESULTS) \
		|| [ $$? -le 2 ] # 1 warnings, 2 critical findings: expected for these samples
	@for b in 0 1; do \
		$(BIN)/offsets-auditor scan $(DEMO_CLUSTER)/broker-$$b/kafka-logs \
			--broker-config $(DEMO_CLUSTER)/broker-$$b/server.properties \
			--cluster-id $(DEMO_CLUSTER_ID) --out $(RESULTS) --publisher demo-cluster-broker-$$b \
			|| { s=$$?; [ $$s -le 2 ] || exit $$s; }; \
	done
	$(BIN)/offsets-auditor serve --results $(RESULTS) --port $(PORT)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports

# Debian's prometheus (promtool) and prometheus-alertmanager, unpacked into .tools/ (no root):
# the deploy/ tests run promtool and, end to end, Prometheus and Alertmanager.
tools:
	scripts/tools/prometheus.sh >/dev/null

# Debian's chromium, chromium-driver and wrk for the service's browser and load tests
test-deps:
	scripts/service-test-deps.sh

# pytest includes tests/deploy: rules (promtool check/test rules), dashboard, Kubernetes manifests,
# Dockerfile (hadolint), runbooks, and the end-to-end run of docs/operators-guide.md.
test: lint tools test-deps
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

# The service under wrk: 1M groups, 3 brokers x 50 partitions (see README, "The service")
service-load: $(STAMP) test-deps
	$(BIN)/python -m benchmarks.service_load
