"""Performance targets and how they are measured (see ``benchmarks/README.md``)."""
