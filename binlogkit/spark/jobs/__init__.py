"""The spark-submit jobs, in the Spark room beside the data source: ``audit.py`` (``binlogkit
audit`` on a cluster: summaries, merge and findings on executors) and ``export.py``
(``binlogkit export`` on a cluster: executors decode files and ranges of big files and write
their Parquet parts). Each is a script for ``spark-submit binlogkit/spark/jobs/NAME.py`` and a
module whose ``main(spark, argv)`` / ``run...`` the CLI calls in Spark local mode. They use the
rooms below them (audit, export, reading) and the file plan of ``spark.files``."""
