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


class JCol(tuple):
    """A Java Column as a tuple that compares by value; desc() wraps it, as Column.desc does."""

    def desc(self):
        return JCol(("desc", self))


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
            return JCol(("jcol", name))

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
    """Stands in for pyspark.sql.DataFrame: built from a Java DataFrame and a session."""

    def __init__(self, jdf, session):
        self.jdf = jdf
        self.session = session
        self._jdf = jdf
        self.sparkSession = session


class FakeColumn:
    def __init__(self, jc):
        self._jc = jc


class CallsTest(unittest.TestCase):
    def setUp(self):
        self.rec = Recorder()
        context = types.SimpleNamespace(_gateway=self.rec.gateway)
        session = types.SimpleNamespace(_jvm=self.rec.jvm, sparkContext=context)
        self.session = session
        self.df = FakeDataFrame(FakeJdf(self.rec), session)
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
        column = FakeColumn(JCol(("jexpr", "amount DESC")))
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

    def test_ascending_as_order_by_takes_it(self):
        column = FakeColumn(JCol(("jexpr", "x")))
        cases = [
            (True, ["a", "x"]),
            (False, [("desc", "a"), ("desc", "x")]),
            (0, [("desc", "a"), ("desc", "x")]),
            (1, ["a", "x"]),
            ([False, True], [("desc", "a"), "x"]),
            ([1, 0], ["a", ("desc", "x")]),
            ((True, False), ["a", ("desc", "x")]),
        ]
        for ascending, want in cases:
            with self.subTest(ascending=ascending):
                self.rec.calls.clear()
                spark_gpusort.by_key(self.df, "a", column, ascending=ascending)
                got = [c for c in self.rec.calls if c[0] == "byKey"][0][1]
                self.assertEqual([self.expected(w) for w in want], got)
        self.rec.calls.clear()
        spark_gpusort.within_partitions(self.df, ["a", "b"], ascending=[True, False])
        self.assertIn(("withinPartitions", [("jcol", "a"), ("desc", ("jcol", "b"))], "JavaArray"),
                      self.rec.calls)

    @staticmethod
    def expected(w):
        if w == "x":
            return ("jexpr", "x")
        if isinstance(w, tuple):
            return ("desc", CallsTest.expected(w[1]))
        return ("jcol", w)

    def test_argument_errors(self):
        cases = [
            # (call, the exception, words its message must hold)
            (lambda: spark_gpusort.by_key(self.df), ValueError, "at least one column"),
            (lambda: spark_gpusort.by_key(self.df), TypeError, "at least one column"),
            (lambda: spark_gpusort.within_partitions(self.df, []), TypeError, "at least one"),
            (lambda: spark_gpusort.by_key(self.df, 42), TypeError, "column name (str) or a Column"),
            (lambda: spark_gpusort.by_key(self.df, "a", None), TypeError, "or a Column; got None"),
            (lambda: spark_gpusort.by_key([1, 2], "k"), TypeError,
             "by_key expected a pyspark.sql.DataFrame as its first argument; got list"),
            (lambda: spark_gpusort.by_key("k", self.df), TypeError, "DataFrame as its first"),
            (lambda: spark_gpusort.within_partitions(None, "k"), TypeError,
             "within_partitions expected a pyspark.sql.DataFrame"),
            (lambda: spark_gpusort.by_key(self.df, "a", ascending="false"), TypeError,
             "ascending to be a bool or a list of bools"),
            (lambda: spark_gpusort.by_key(self.df, "a", ascending=None), TypeError,
             "got None of type NoneType"),
            (lambda: spark_gpusort.by_key(self.df, "a", ascending=["no"]), TypeError,
             "'no' in the list"),
            (lambda: spark_gpusort.by_key(self.df, "a", "b", ascending=[True]), ValueError,
             "one ascending flag per sort column (2); got 1"),
            (lambda: spark_gpusort.by_key(self.df, "a", descending=True), TypeError, "descending"),
        ]
        for call, error, words in cases:
            with self.subTest(words=words):
                with self.assertRaises(error) as raised:
                    call()
                self.assertIn(words, str(raised.exception))
        self.assertNotIn("transform", [c[0] for c in self.rec.calls])
        self.assertNotIn("byKey", [c[0] for c in self.rec.calls])

    def test_an_rdd_is_refused(self):
        # An RDD (here a stand-in of that name) has no sparkSession; it must not get that far.
        rdd_class = type("RDD", (), {"__module__": "pyspark.rdd"})
        with self.assertRaises(TypeError) as raised:
            spark_gpusort.by_key(rdd_class(), "k")
        self.assertIn("got pyspark.rdd.RDD", str(raised.exception))

    def test_a_session_without_a_jvm_is_refused(self):
        # PySpark 3.5's Spark Connect DataFrame: pyspark.sql.connect.dataframe.DataFrame, not a
        # subclass of pyspark.sql.DataFrame, its session without a JVM gateway.
        connect_class = type("DataFrame", (), {"__module__": "pyspark.sql.connect.dataframe"})
        connect = connect_class()
        connect.sparkSession = types.SimpleNamespace()
        with self.assertRaises(TypeError) as raised:
            spark_gpusort.by_key(connect, "a")
        self.assertIn("spark.sql.extensions", str(raised.exception))

if __name__ == "__main__":
    unittest.main()
