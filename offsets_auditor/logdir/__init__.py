"""A broker log dir, read-only: every file-system access of the core (``fs``), the log dir's
model as listed (``model``: partitions, segments, index files, leftovers, consistent snapshots),
its small files (``checkpoints``, ``meta_properties``) and whether a directory is one
(``shape``)."""
