"""GpuSort for PySpark: sort a DataFrame on the plugin's engine (CUDA, Vulkan or the CPU engine).

The plugin jar carries this package at its root, so the one jar serves both sides::

    spark-submit --jars spark-gpusort-core_spark4.2_2.13-<version>-plugin.jar \\
                 --py-files spark-gpusort-core_spark4.2_2.13-<version>-plugin.jar job.py

and in the job::

    from pyspark.sql import functions as F
    from spark_gpusort import by_key, within_partitions

    ordered = by_key(df, "day", F.col("amount").desc())     # as df.orderBy(...)
    grouped = within_partitions(df, "user")                 # as df.sortWithinPartitions(...)
    latest = by_key(df, "day", "ts", ascending=[True, False])  # as df.orderBy(..., ascending=)

Both call ``io.gpusort.GpuSort`` through the session's JVM gateway (Py4J) and return a new
DataFrame with the same rows and schema, ordered exactly as ``orderBy`` /
``sortWithinPartitions`` with the same arguments order them. The plan shows a ``GpuSort`` node (or
the range-sort exchange) in ``explain()``. Columns may be names or ``Column`` expressions with
``asc()``, ``desc()``, ``asc_nulls_last()`` and so on. Keys of a type the engines cannot encode
fall back to Spark's own sort, as from Scala and Java. ``ascending`` is taken as ``orderBy``
takes it: a bool (or an int) for every column, or a list of them, one per column (a list of another
length is a ``ValueError``, where ``orderBy`` would drop the columns left over). A first argument
that is not a DataFrame, no column, a key that is neither a name nor a ``Column``, or an
``ascending`` of another type is a ``TypeError`` saying what was expected (no column is also a
``ValueError``, as ``orderBy`` raises).

A Spark Connect session has no JVM gateway in the Python process: these functions raise
``TypeError`` there. Turning the plugin on for SQL (``spark.sql.extensions``) serves
``orderBy`` and ``ORDER BY`` in any session, Connect included.
"""

__all__ = ["by_key", "within_partitions"]


def by_key(df, *cols, ascending=True):
    """Orders the whole DataFrame by ``cols`` on the GPU sort, as ``df.orderBy(*cols)``.

    ``cols`` are column names or ``Column`` expressions, given one by one or as one list.
    ``ascending`` is as ``orderBy``'s: a bool (or int) for every column, or a list of them, one
    per column; a false one makes its column descending (``Column.desc()``).
    """
    return _transform("by_key", df, cols, ascending, "byKey")


def within_partitions(df, *cols, ascending=True):
    """Orders each partition of ``df`` by ``cols``, as ``df.sortWithinPartitions(*cols)``.

    Takes ``cols`` and ``ascending`` as :func:`by_key` does.
    """
    return _transform("within_partitions", df, cols, ascending, "withinPartitions")


class _NoColumnsError(TypeError, ValueError):
    """No column to sort by: a TypeError, as for a missing argument, and a ValueError, as
    ``orderBy`` raises and as earlier versions of this module did."""


def _transform(name, df, cols, ascending, method):
    _check_dataframe(name, df)
    if len(cols) == 1 and isinstance(cols[0], (list, tuple)):
        cols = tuple(cols[0])
    if not cols:
        raise _NoColumnsError(
            "%s(df, *cols) expected at least one column to sort by (a name or a Column), "
            "after the DataFrame; got none" % name)
    for c in cols:
        if not isinstance(c, str) and getattr(c, "_jc", None) is None:
            raise TypeError("%s expected each sort key to be a column name (str) or a Column; "
                            "got %r of type %s" % (name, c, type(c).__name__))
    flags = _ascending_flags(name, ascending, len(cols))
    jdf = getattr(df, "_jdf", None)
    session = getattr(df, "sparkSession", None)
    jvm = getattr(session, "_jvm", None)
    if jdf is None or jvm is None:
        raise TypeError(
            "spark_gpusort needs a classic PySpark session with a JVM gateway; got %s. "
            "With Spark Connect, turn the plugin on through spark.sql.extensions instead."
            % _type_name(df))
    gateway = session.sparkContext._gateway
    column_class = jvm.org.apache.spark.sql.Column
    orders = gateway.new_array(column_class, len(cols))
    for i, (c, up) in enumerate(zip(cols, flags)):
        jc = _java_column(jvm, c)
        orders[i] = jc if up else jc.desc()
    sort = getattr(jvm.io.gpusort.GpuSort, method)(orders)
    return _dataframe(jdf.transform(sort), session)


def _check_dataframe(name, df):
    """A PySpark DataFrame, classic or Spark Connect (the latter refused later, with its own
    message); anything else (a list, an RDD, a column name where the DataFrame goes) is a
    TypeError naming what was expected."""
    try:
        from pyspark.sql import DataFrame
    except ImportError:
        DataFrame = None
    if DataFrame is not None and isinstance(df, DataFrame):
        return
    # PySpark 3.5's Spark Connect DataFrame does not derive from pyspark.sql.DataFrame (4.x's
    # does); it is recognized by its module, not imported (that needs Connect's dependencies).
    if type(df).__name__ == "DataFrame" and type(df).__module__.startswith("pyspark.sql."):
        return
    raise TypeError("%s expected a pyspark.sql.DataFrame as its first argument; got %s"
                    % (name, _type_name(df)))


def _ascending_flags(name, ascending, n):
    """One flag per column from ``ascending``, as ``orderBy`` reads it: a bool or an int (its
    truth) for all columns, or a list of them, one per column. Unlike ``orderBy``, which zips
    the list with the columns and drops what is left over, a list of another length is an
    error."""
    if isinstance(ascending, (bool, int)):
        return [bool(ascending)] * n
    if isinstance(ascending, (list, tuple)):
        for a in ascending:
            if not isinstance(a, (bool, int)):
                raise TypeError("%s expected ascending to be a bool or a list of bools; got %r "
                                "in the list, of type %s" % (name, a, type(a).__name__))
        if len(ascending) != n:
            raise ValueError("%s expected one ascending flag per sort column (%d); got %d"
                             % (name, n, len(ascending)))
        return [bool(a) for a in ascending]
    raise TypeError("%s expected ascending to be a bool or a list of bools (one per column); "
                    "got %r of type %s" % (name, ascending, type(ascending).__name__))


def _type_name(x):
    t = type(x)
    return t.__name__ if t.__module__ == "builtins" else "%s.%s" % (t.__module__, t.__name__)


def _java_column(jvm, c):
    if isinstance(c, str):
        return jvm.org.apache.spark.sql.functions.col(c)
    return c._jc


def _dataframe(jdf, session):
    # PySpark 4's DataFrame is abstract, its in-JVM one pyspark.sql.classic's; PySpark 3.5 has
    # the one class, which takes a SQLContext or (as here) a SparkSession.
    try:
        from pyspark.sql.classic.dataframe import DataFrame
    except ImportError:
        from pyspark.sql import DataFrame
    return DataFrame(jdf, session)
