"""The group coordinator's view of ``__consumer_offsets``: every group's committed offsets as
the coordinator would load them (``rules`` for the per-version load semantics, with their Kafka
sources; ``delta`` reduces a segment's records, ``replay`` folds them in offset order; ``model``
the groups; ``export`` the ``kafka-consumer-groups.sh --reset-offsets --from-file`` CSV). Reading
a whole log dir's groups is ``offsets_auditor.audit.group_recovery``."""
