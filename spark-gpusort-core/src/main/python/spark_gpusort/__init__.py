"""GpuSort for PySpark: sort a DataFrame on the plugin's engine (CUDA, Vulkan or the CPU engine).

The plugin jar carries this package at its root, so the one jar serves both sides::

    spark-submit --jars spark-gpusort-core_spark4.2_2.13-<version>-plugin.jar \\
                 --py-files spark-gpusort-core_spark4.2_2.13-<version>-plugin.jar job.py

and in the job::

    from pyspark.sql import functions as F
    from spark_gpusort import by_key, within_partitions

    ordered = by_key(df, "day", F.col("amount").desc())     # as df.orderBy(...)
    grouped = within_partitions(df, "user")                 # as df.sortWithinPartitions(...)

Both call ``io.gpusort.GpuSort`` through the session's JVM gateway (Py4J) and return a new
DataFrame with the same rows and schema, ordered exactly as ``orderBy`` /
``sortWithinPartitions`` with the same arguments order them. The plan shows a ``GpuSort`` node (or
the range-sort exchange) in ``explain()``. Columns may be names or ``Column`` expressions with
``asc()``, ``desc()``, ``asc_nulls_last()`` and so on. Keys of a type the engines cannot encode
fall back to Spark's own sort, as from Scala and Java.

A Spark Connect session has no JVM gateway in the Python process: these functions raise
``TypeError`` there. Turning the plugin on for SQL (``spark.sql.extensions``) serves
``orderBy`` and ``ORDER BY`` in any session, Connect included.
"""

__all__ = ["by_key", "within_partitions"]


def by_key(df, *cols):
    """Orders the whole DataFrame by ``cols`` on the GPU sort, as ``df.orderBy(*cols)``."""
    return _transform(df, cols, "byKey")


def within_partitions(df, *cols):
    """Orders each partition of ``df`` by ``cols``, as ``df.sortWithinPartitions(*cols)``."""
    return _transform(df, cols, "withinPartitions")


def _transform(df, cols, method):
    if len(cols) == 1 and isinstance(cols[0], (list, tuple)):
        cols = tuple(cols[0])
    if not cols:
        raise ValueError("GpuSort needs at least one column to sort by")
    jdf = getattr(df, "_jdf", None)
    session = df.sparkSession
    jvm = getattr(session, "_jvm", None)
    if jdf is None or jvm is None:
        raise TypeError(
            "spark_gpusort needs a classic PySpark session with a JVM gateway; got %s. "
            "With Spark Connect, turn the plugin on through spark.sql.extensions instead."
            % type(df).__name__)
    gateway = session.sparkContext._gateway
    column_class = jvm.org.apache.spark.sql.Column
    orders = gateway.new_array(column_class, len(cols))
    for i, c in enumerate(cols):
        orders[i] = _java_column(jvm, c)
    sort = getattr(jvm.io.gpusort.GpuSort, method)(orders)
    return _dataframe(jdf.transform(sort), session)


def _java_column(jvm, c):
    if isinstance(c, str):
        return jvm.org.apache.spark.sql.functions.col(c)
    jc = getattr(c, "_jc", None)
    if jc is None:
        raise TypeError("a sort key must be a column name or a Column; got %r" % (c,))
    return jc


def _dataframe(jdf, session):
    # PySpark 4's DataFrame is abstract, its in-JVM one pyspark.sql.classic's; PySpark 3.5 has
    # the one class, which takes a SQLContext or (as here) a SparkSession.
    try:
        from pyspark.sql.classic.dataframe import DataFrame
    except ImportError:
        from pyspark.sql import DataFrame
    return DataFrame(jdf, session)
