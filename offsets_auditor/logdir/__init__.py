"""A broker log dir, read-only: every file-system access of the core (``fs``), the log dir's
model as listed (``model``: partitions, segments, index files, leftovers, consistent snapshots),
its small files (``checkpoints``, ``meta_properties``), whether a directory is one
(``shape``), whether a broker is running on it (``liveness``: its ``.lock`` held) and the
broker's ``server.log`` beside it (``server_log``)."""
