"""PySpark tests of spark_gpusort: by_key and within_partitions against orderBy and
sortWithinPartitions, through a real local session whose JVM has the plugin jar.

Maven runs them after the package phase (mvn verify, through run_tests.py) with GPUSORT_PLUGIN_JAR
set to the plugin jar, and imports spark_gpusort from that jar, as spark-submit --py-files would.
They need PySpark of the Spark line built: a folder of its files beside the repository (see
run_tests.py) or pip install pyspark==<spark.version>; without it they are skipped, and say so,
unless GPUSORT_PYSPARK_REQUIRED=1 (run_tests.py sets it where it found such a folder), under which
that is a failure.

Rows are compared with same_rows (exact, NaN-safe), not ==: a Row holding NaN never equals itself.
"""

import os
import random
import sys
import unittest

from same_rows import first_difference

JAR = os.environ.get("GPUSORT_PLUGIN_JAR")
if JAR:
    sys.path.insert(0, JAR)

LINE = os.environ.get("GPUSORT_SPARK_LINE")
REQUIRED = os.environ.get("GPUSORT_PYSPARK_REQUIRED") == "1"


def _cannot_run(message):
    if REQUIRED:
        raise RuntimeError(message + " (GPUSORT_PYSPARK_REQUIRED=1: a failure, not a skip)")
    raise unittest.SkipTest(message)


try:
    import pyspark
    from pyspark.sql import SparkSession, functions as F
    from pyspark.errors import AnalysisException
except ImportError as e:  # pragma: no cover - depends on the machine
    _cannot_run("PySpark is not installed (%s): the PySpark tests did not run" % e)

if LINE and not pyspark.__version__.startswith(LINE + "."):
    _cannot_run("PySpark %s is not of the Spark line built (%s): the PySpark tests did not run"
                % (pyspark.__version__, LINE))

import spark_gpusort
from spark_gpusort import by_key, within_partitions


def rows(n, seed):
    r = random.Random(seed)
    words = ["", "a", "ab", "b", "\u00e9t\u00e9", "zz", "a\u0000b", None]
    doubles = [0.0, -0.0, 1.5, -2.25, float("nan"), float("inf"), float("-inf"), None]
    out = []
    for i in range(n):
        k = None if r.random() < 0.05 else r.randint(-20, 20)
        s = r.choice(words) if r.random() < 0.5 else "w%04d" % r.randint(0, 500)
        d = r.choice(doubles) if r.random() < 0.3 else r.uniform(-1e6, 1e6)
        big = r.randint(-(1 << 62), 1 << 62)
        out.append((i, k, s, d, big))
    return out


class SparkGpuSortTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not JAR or not os.path.isfile(JAR):
            _cannot_run("GPUSORT_PLUGIN_JAR does not name the plugin jar: %r" % JAR)
        cls.spark = (SparkSession.builder.master("local[2]")
                     .appName("spark_gpusort tests")
                     .config("spark.jars", JAR)
                     .config("spark.ui.enabled", "false")
                     .config("spark.ui.showConsoleProgress", "false")
                     .config("spark.sql.shuffle.partitions", "4")
                     .getOrCreate())
        # Cached, so that each sort below reads the same five partitions without parallelizing
        # and shuffling the rows again.
        cls.df = cls.spark.createDataFrame(
            rows(3000, 20261204), "id long, k int, s string, d double, big long").repartition(5)
        cls.df.cache().count()

    @classmethod
    def tearDownClass(cls):
        cls.spark.stop()

    def assertSameRows(self, want, got):
        """Exact, NaN-safe (same_rows): a Row holding NaN is never == itself."""
        difference = first_difference(want, got)
        if difference is not None:
            self.fail("rows differ " + difference)

    def test_module_comes_from_the_plugin_jar(self):
        self.assertTrue(spark_gpusort.__file__.startswith(JAR), spark_gpusort.__file__)

    def test_by_key_orders_as_order_by(self):
        orderings = [
            ("k", "id"),
            (F.col("s").desc(), "id"),
            (F.col("d").asc_nulls_last(), F.col("k").desc_nulls_first(), "id"),
            (F.col("big").desc(), F.col("id")),
            ([F.col("s"), F.col("d").desc(), "id"],),
        ]
        for cols in orderings:
            with self.subTest(cols=str(cols)):
                got = by_key(self.df, *cols)
                want = self.df.orderBy(*cols)
                plan = got._jdf.queryExecution().executedPlan().toString()
                self.assertIn("GpuRangeSortExchange", plan)
                # id is the last key: the order is total, so the lists match row for row.
                self.assertSameRows(want.collect(), got.collect())

    def test_by_key_sort_mode_plans_gpu_sort(self):
        self.spark.conf.set("spark.gpusort.global.mode", "sort")
        try:
            got = by_key(self.df, F.col("d").desc(), "id")
            self.assertIn("GpuSort", got._jdf.queryExecution().executedPlan().toString())
            self.assertSameRows(self.df.orderBy(F.col("d").desc(), "id").collect(), got.collect())
        finally:
            self.spark.conf.unset("spark.gpusort.global.mode")

    def test_within_partitions_orders_each_partition(self):
        parts = self.df.repartition(3, "k")
        got = within_partitions(parts, F.col("s").desc(), "id")
        want = parts.sortWithinPartitions(F.col("s").desc(), "id")
        self.assertIn("GpuSort", got._jdf.queryExecution().executedPlan().toString())
        self.assertSameRows(want.rdd.glom().collect(), got.rdd.glom().collect())
        self.assertEqual(parts.schema, got.schema)

    def test_ascending_as_order_by_takes_it(self):
        cases = [
            (("k", "id"), False),
            (([F.col("s"), "d", "id"],), [0, True, 1]),
            ((F.col("d").desc_nulls_first(), "k", "id"), [True, False, True]),
        ]
        for cols, ascending in cases:
            with self.subTest(cols=str(cols), ascending=ascending):
                got = by_key(self.df, *cols, ascending=ascending)
                want = self.df.orderBy(*cols, ascending=ascending)
                self.assertIn("GpuRangeSortExchange",
                              got._jdf.queryExecution().executedPlan().toString())
                self.assertSameRows(want.collect(), got.collect())
        parts = self.df.repartition(3, "k")
        got = within_partitions(parts, "d", "id", ascending=[False, 1])
        want = parts.sortWithinPartitions("d", "id", ascending=[False, 1])
        self.assertIn("GpuSort", got._jdf.queryExecution().executedPlan().toString())
        self.assertSameRows(want.rdd.glom().collect(), got.rdd.glom().collect())

    def test_errors_match_spark(self):
        with self.assertRaises(AnalysisException):
            self.df.orderBy("missing").collect()
        with self.assertRaises(AnalysisException):
            by_key(self.df, "missing")
        with self.assertRaises(ValueError):
            by_key(self.df)
        with self.assertRaises(TypeError):
            within_partitions(self.df, 42)
        # orderBy answers a wrong ascending with a TypeError (PySparkTypeError) too.
        with self.assertRaises(TypeError):
            self.df.orderBy("k", ascending="no")
        with self.assertRaises(TypeError):
            by_key(self.df, "k", ascending="no")

    def test_wrong_arguments_are_type_errors_saying_what_was_expected(self):
        cases = [
            (lambda: by_key([1, 2], "k"), "by_key expected a pyspark.sql.DataFrame as its first "
                                          "argument; got list"),
            (lambda: by_key(self.df.rdd, "k"), "got pyspark.rdd.RDD"),
            (lambda: by_key("k", self.df), "DataFrame as its first argument; got str"),
            (lambda: within_partitions(F.col("k"), "k"), "got pyspark.sql.column.Column"),
            (lambda: by_key(self.df), "at least one column"),
            (lambda: by_key(self.df, "k", 1.5), "a column name (str) or a Column; got 1.5"),
            (lambda: by_key(self.df, "k", ascending=None), "ascending to be a bool or a list"),
            (lambda: within_partitions(self.df, "k", ascending=["yes"]), "'yes' in the list"),
        ]
        for call, words in cases:
            with self.subTest(words=words):
                with self.assertRaises(TypeError) as raised:
                    call()
                self.assertIn(words, str(raised.exception))
        with self.assertRaises(ValueError):
            by_key(self.df, "k", "id", ascending=[True])


if __name__ == "__main__":
    unittest.main()
