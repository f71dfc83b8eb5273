"""One cluster's view from several brokers' evidence: how many ``__consumer_offsets``
partitions the topic has, which broker leads each (the group coordinator), and how sure the
answer is.

Pure rules over typed values; no file or network access except :mod:`.kraft_log`, which reads a
KRaft ``__cluster_metadata`` log through ``offsets_auditor.logdir.fs``:

- :mod:`.metadata`: the offsets topic's partitions with leader, replicas, ISR, leader epoch, as a
  live cluster or a KRaft metadata log states them;
- :mod:`.kraft_records`: decoding of the KRaft metadata records that describe topics and
  partitions; :mod:`.kraft_log`: replaying a ``__cluster_metadata`` log dir into that metadata;
- :mod:`.evidence`: what one broker's scan contributes (partition dirs held, its
  ``offsets.topic.num.partitions``, its cluster and broker id);
- :mod:`.partition_count`: the count, in the order live metadata, KRaft metadata, the union of
  the brokers' partition dirs when complete, the brokers' config; with the reasons;
- :mod:`.coordinator_answer`: a group's partition and coordinator from all of the above.
"""
