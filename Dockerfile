# offsets-auditor: the CLI (and, with the api/spark extras, the job and the service).
#
#   docker build -t offsets-auditor .
#   docker run --rm -v /var/lib/kafka/data:/data:ro offsets-auditor audit /data --kafka-version 2.3.0
#
# Mount broker log dirs read-only: the auditor never writes to them anyway.

FROM python:3.11-slim AS build
# gcc builds the optional C fast lanes; without it the package still works, slower
RUN apt-get update \
 && apt-get install -y --no-install-recommends gcc libc6-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY pyproject.toml setup.py README.md ./
COPY offsets_auditor offsets_auditor
COPY spark_jobs spark_jobs
COPY api api
RUN pip wheel --no-cache-dir --wheel-dir /wheels .

FROM python:3.11-slim
RUN useradd --system --uid 10001 --no-create-home auditor
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir /wheels/*.whl && rm -rf /wheels
USER auditor
ENTRYPOINT ["offsets-auditor"]
CMD ["--help"]
