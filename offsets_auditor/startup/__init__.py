"""What the broker's next start does to a log dir, per Kafka version: the index files it calls
corrupt and rebuilds (``indexes``), the segments it re-reads after an unclean shutdown
(``recovery``), and the findings both give (``checks``)."""
