"""The audit of broker log dirs, built from the layers below it: what it will do (``plan``),
its stages over segments, partitions and the log dir (``stages``), each partition's emulation
and verdict (``partition``), verdicts across a version range (``alternatives``), damaged bytes
(``damage``), the groups' recovery (``group_recovery``), load calibration, findings across
replicas (``replicas``) and the JSON report (``report``)."""
