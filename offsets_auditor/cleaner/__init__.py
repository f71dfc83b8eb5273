"""Log cleaner emulation: what Kafka's cleaner will do to each ``__consumer_offsets`` partition,
for the broker's real version and config (docs/kafka-internals.md §4)."""
