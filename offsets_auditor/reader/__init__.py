"""Reading ``.log`` segments into columns: one C parser and the Python reference decoders, both
producing :mod:`offsets_auditor.reader.columns` (see ``reader.segment.read_segment``)."""
