"""offsets-auditor core: Kafka's __consumer_offsets on disk, decoded and audited.

Framework-free: no Spark, web or metrics imports here (enforced by import-linter).
"""

__version__ = "0.1.0"
