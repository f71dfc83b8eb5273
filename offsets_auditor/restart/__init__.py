"""How far a restarting broker has got, read from the broker's own ``server.log``.

- :mod:`.log_lines`: one log4j line -> a typed event (per-version patterns, each citing the Kafka
  source file that prints it).
- :mod:`.log_dir_totals`: what the log dirs say is left to do (partitions, segments after the
  recovery point, ``__consumer_offsets`` sizes).
- :mod:`.progress`: the fold of events into a :class:`~.progress.RestartProgress`, with ETAs.
- :mod:`.follow`: ``tail -F`` over a growing, rotating ``server.log`` with an injected clock.
"""
