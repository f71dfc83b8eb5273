"""What the broker itself wrote down: its ``log-cleaner.log`` (and the cleaner lines that 3.5-3.9
print to ``server.log``) read into typed events, folded into cleanings, thread lives and
uncleanable marks, and set beside the emulation; and the coordinator's own load times fitted
to competing models.

- :mod:`.files`: a log and its rotated files (log4j's date and ``.N`` suffixes, logrotate's
  ``.gz`` and ``-YYYYMMDD``), read as one stream of lines, across a rotation during the read;
- :mod:`.records`: lines into log4j records (a message with its continuation lines);
- :mod:`.cleaner_lines`: the cleaner's wordings per Kafka version, records into events;
- :mod:`.history`: the events folded into cleanings, thread lives and uncleanable marks;
- :mod:`.reality`: the history beside the emulation, as findings;
- :mod:`.throughput`: the cleaner's measured throughput against the commit rate;
- :mod:`.load_models`: models of the coordinator's load time fitted to the broker's own.

All file access goes through :mod:`offsets_auditor.logdir.fs` (read-only).
"""
