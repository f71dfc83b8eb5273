# offsets-auditor: one image, both entry points (see deploy/docker/entrypoint.sh):
#
#   docker build -t offsets-auditor .
#   docker run --rm -v /var/lib/kafka/data:/data:ro -v results:/results offsets-auditor \
#       scan /data --broker-config /data/../server.properties --out /results
#   docker run --rm -v results:/results:ro -p 8080:8080 offsets-auditor \
#       serve --results /results --host 0.0.0.0 --port 8080
#
# The scan runs Spark (local[*] in the container, or as driver/executor pods on Kubernetes), so the
# runtime carries a Java 17 JRE. Mount broker log dirs read-only: the auditor never writes to them.
# The base is pinned by the digest of the python:3.11.13-slim-bookworm multi-platform manifest
# (check it with `docker buildx imagetools inspect python:3.11.13-slim-bookworm`).
ARG PYTHON_IMAGE=python:3.11.13-slim-bookworm@sha256:86adf8dbadc3d6e82ee5dd2c74bec2e1c2467cdad47886280501df722372d2e1

# --- build: wheels of the project (its C extension needs gcc) and of every dependency ---------
FROM ${PYTHON_IMAGE} AS build
# hadolint ignore=DL3008
RUN apt-get update \
 && apt-get install -y --no-install-recommends gcc libc6-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY pyproject.toml setup.py README.md MANIFEST.in ./
COPY offsets_auditor offsets_auditor
COPY spark_jobs spark_jobs
COPY api api
RUN pip wheel --no-cache-dir --wheel-dir /wheels ".[spark,api,live]"

# --- runtime: Python, a headless JRE for Spark, the wheels; no compiler ---------------------------
FROM ${PYTHON_IMAGE} AS runtime
LABEL org.opencontainers.image.title="offsets-auditor" \
      org.opencontainers.image.description="Audit Kafka's __consumer_offsets from broker log dirs: Spark scan and metrics service" \
      org.opencontainers.image.licenses="Apache-2.0"
# The JRE follows bookworm's security updates (the base digest pins the rest), so its version is
# not pinned. The man dir: the JRE's postinst links a man page the slim image has no dir for.
# hadolint ignore=DL3008
RUN mkdir -p /usr/share/man/man1 \
 && apt-get update \
 && apt-get install -y --no-install-recommends openjdk-17-jre-headless tini \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir --no-index /wheels/*.whl \
 && rm -rf /wheels \
 && groupadd --system --gid 10001 auditor \
 && useradd --system --uid 10001 --gid 10001 --home-dir /tmp --no-create-home auditor
COPY deploy/docker/entrypoint.sh /usr/local/bin/offsets-auditor-entrypoint
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PYSPARK_PYTHON=/usr/local/bin/python \
    SPARK_HOME=/usr/local/lib/python3.11/site-packages/pyspark \
    HOME=/tmp
WORKDIR /tmp
USER 10001:10001
EXPOSE 8080
ENTRYPOINT ["/usr/bin/tini", "--", "/usr/local/bin/offsets-auditor-entrypoint"]
CMD ["--help"]
