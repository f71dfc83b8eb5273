"""Which Kafka version wrote a log dir: evidence from the broker's own files, as a version range.

- :mod:`.record_rules`, :mod:`.file_rules`: pure rules, one observation -> the
  :class:`Evidence` it gives (each citing the Kafka source that shows it); :mod:`.combine`:
  evidence -> :class:`VersionRange` and the version the emulation uses (:class:`Detection`).
- :mod:`.collect`: the I/O (read-only, through :mod:`offsets_auditor.logdir.fs`): what a log
  dir and a server log show. :func:`detect_version` is the one entry point every command uses.
- :mod:`.spans`: the versions at which the emulated behaviour changes inside a range.
"""

from offsets_auditor.version_detection.collect import detect_version
from offsets_auditor.version_detection.combine import Detection, detect
from offsets_auditor.version_detection.model import Evidence, Strength, VersionRange

__all__ = ["Detection", "Evidence", "Strength", "VersionRange", "detect", "detect_version"]
