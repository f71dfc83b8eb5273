"""``spark-submit spark_jobs/scan.py LOGDIR... --out RESULTS``: the scan (``spark_jobs.job``)
with the command line of ``offsets-auditor scan`` (``spark_jobs.cli``)."""

import sys

from spark_jobs.cli import main

if __name__ == "__main__":
    sys.exit(main())
