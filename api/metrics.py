"""``GET /metrics``: what the service exposes now, rendered by a prometheus_client custom
collector on a private registry. ``api.exposition`` says what is exposed at any moment of the
history (``api.alerts`` evaluates the rules over it). Names and labels: docs/metrics.md, the
contract with ``deploy/prometheus`` and ``deploy/grafana``.

A sample of its exposition::

    # HELP offsets_auditor_partition_log_size_bytes Size of the __consumer_offsets ...
    # TYPE offsets_auditor_partition_log_size_bytes gauge
    offsets_auditor_partition_log_size_bytes{broker_id="0",...,partition="2"} 4.760452e+06
    # HELP offsets_auditor_scan_failures Scans of the publisher that failed since its newest run
    # TYPE offsets_auditor_scan_failures gauge
    offsets_auditor_scan_failures{publisher="broker-0.AbC"} 0.0
"""

from __future__ import annotations

import time
from collections.abc import Iterator

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from api.exposition import Exposition


class RunCollector(Collector):
    """What the service exposes now (``Exposition.families_at``), as prometheus_client metric
    families."""

    def __init__(self, exposition: Exposition) -> None:
        self._exposition = exposition

    def collect(self) -> Iterator[Metric]:
        for family in self._exposition.families_at(time.time()):
            metric: CounterMetricFamily | GaugeMetricFamily
            if family.kind == "counter":
                metric = CounterMetricFamily(
                    family.name.removesuffix("_total"), family.help, labels=family.labels
                )
            else:
                metric = GaugeMetricFamily(family.name, family.help, labels=family.labels)
            for values, value in family.series:
                metric.add_metric(list(values), value)
            yield metric
