"""Unit tests of spark_gpusort's own logic, without PySpark: the calls it makes through the JVM
gateway, checked against a recording stand-in for the gateway, and its argument errors.

These run wherever Python does (test_spark_gpusort.py needs PySpark and a JVM); they check what
the module asks of the JVM, not that PySpark and the plugin then sort (that is the other file's).
"""

import os
import sys
import types
import unittest

JAR = os.environ.get("GPUSORT_PLUGIN_JAR")
if JAR and os.path.isfile(JAR):
    sys.path.insert(0, JAR)
else:
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "main", "python"))

import spark_gpusort  # noqa: E402


class Recorder:
    """Stands in for the Py4J gateway, the JVM view and the Java objects; records every call."""

    def __init__(self):
        self.calls = []
        outer = self

        class JavaArray(list):
            pass

        class Jvm:
            pass

        def new_array(cls, n):
            outer.calls.append(("new_array", cls, n))
            return JavaArray([None] * n)

        def col(name):
            outer.calls.append(("col", name))
            return ("jcol", name)

        def method(name):
            def call(orders):
                outer.calls.append((name, list(orders), type(orders).__name__))
                return ("jsort", name)
            return call

        ns = types.SimpleNamespace
        sql = ns(Column="ColumnClass", functions=ns(col=col))
        gpusort = ns(GpuSort=ns(byKey=method("byKey"),
                                withinPartitions=method("withinPartitions")))
        self.jvm = Jvm()
        self.jvm.org = ns(apache=ns(spark=ns(sql=sql)))
        self.jvm.io = ns(gpusort=gpusort)
        self.gateway = ns(new_array=new_array)


class FakeJdf:
    def __init__(self, recorder):
        self.recorder = recorder

    def transform(self, function):
        self.recorder.calls.append(("transform", function))
        return ("jdf sorted by", function)


class FakeDataFrame:
    def __init__(self, jdf, session):
        self.jdf = jdf
        self.session = session


class CallsTest(unittest.TestCase):
    def setUp(self):
        self.rec = Recorder()
        context = types.SimpleNamespace(_gateway=self.rec.gateway)
        session = types.SimpleNamespace(_jvm=self.rec.jvm, sparkContext=context)
        self.session = session
        self.df = types.SimpleNamespace(_jdf=FakeJdf(self.rec), sparkSession=session)
        # The module imports pyspark's DataFrame class when it wraps the result.
        names = ("pyspark", "pyspark.sql", "pyspark.sql.classic", "pyspark.sql.classic.dataframe")
        self.saved = {k: sys.modules.get(k) for k in names}
        pyspark = types.ModuleType("pyspark")
        sql = types.ModuleType("pyspark.sql")
        sql.DataFrame = FakeDataFrame
        sys.modules.update({"pyspark": pyspark, "pyspark.sql": sql})
        sys.modules.pop("pyspark.sql.classic", None)
        sys.modules.pop("pyspark.sql.classic.dataframe", None)

    def tearDown(self):
        for k, v in self.saved.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v

    def test_by_key_passes_names_and_columns_in_order(self):
        column = types.SimpleNamespace(_jc=("jexpr", "amount DESC"))
        out = spark_gpusort.by_key(self.df, "day", column, "id")
        self.assertEqual([
            ("new_array", "ColumnClass", 3),
            ("col", "day"),
            ("col", "id"),
            ("byKey", [("jcol", "day"), ("jexpr", "amount DESC"), ("jcol", "id")], "JavaArray"),
            ("transform", ("jsort", "byKey")),
        ], self.rec.calls)
        self.assertIsInstance(out, FakeDataFrame)
        self.assertEqual(("jdf sorted by", ("jsort", "byKey")), out.jdf)
        self.assertIs(self.session, out.session)

    def test_within_partitions_takes_a_list_too(self):
        spark_gpusort.within_partitions(self.df, ["a", "b"])
        self.assertIn(("withinPartitions", [("jcol", "a"), ("jcol", "b")], "JavaArray"),
                      self.rec.calls)
        self.assertNotIn("byKey", [c[0] for c in self.rec.calls])

    def test_argument_errors(self):
        with self.assertRaises(ValueError):
            spark_gpusort.by_key(self.df)
        with self.assertRaises(TypeError):
            spark_gpusort.by_key(self.df, 42)
        self.assertNotIn("transform", [c[0] for c in self.rec.calls])

    def test_a_session_without_a_jvm_is_refused(self):
        connect = types.SimpleNamespace(sparkSession=types.SimpleNamespace())
        with self.assertRaises(TypeError) as raised:
            spark_gpusort.by_key(connect, "a")
        self.assertIn("spark.sql.extensions", str(raised.exception))


if __name__ == "__main__":
    unittest.main()
