"""Tests of same_rows, the NaN-safe exact comparison the PySpark tests use; no PySpark needed."""

import collections
import unittest

from same_rows import canonical, first_difference

NAN = float("nan")
Pair = collections.namedtuple("Pair", "a b")


class Row(tuple):
    """Like pyspark.sql.Row: a tuple with __fields__."""

    def __new__(cls, **kwargs):
        row = tuple.__new__(cls, kwargs.values())
        row.__fields__ = list(kwargs)
        return row


class SameRowsTest(unittest.TestCase):
    def test_nan_rows_are_the_same_where_eq_says_not(self):
        want = [Row(id=1, d=NAN), Row(id=2, d=1.5)]
        got = [Row(id=1, d=float("nan")), Row(id=2, d=1.5)]
        self.assertNotEqual(want, got)  # what == makes of them
        self.assertIsNone(first_difference(want, got))
        # NaNs of other bit patterns are one value too, as in Spark.
        other_nan = -NAN
        self.assertEqual(canonical(NAN), canonical(other_nan))

    def test_exact_otherwise(self):
        self.assertNotEqual(canonical(0.0), canonical(-0.0))
        self.assertNotEqual(canonical(1), canonical(1.0))
        self.assertNotEqual(canonical(1), canonical(True))
        self.assertNotEqual(canonical(NAN), canonical(None))
        self.assertNotEqual(canonical(Row(a=1, b=2)), canonical(Row(b=1, a=2)))
        self.assertNotEqual(canonical(Row(a=1)), canonical((1,)))
        self.assertNotEqual(canonical(1e-300), canonical(1.0000000000000002e-300))
        self.assertEqual(canonical(Pair(1, NAN)), canonical(Pair(1, NAN)))

    def test_the_first_difference_is_named(self):
        want = [Row(id=1, d=NAN), Row(id=2, d=NAN)]
        got = [Row(id=1, d=NAN), Row(id=3, d=NAN)]
        self.assertEqual("at [1]: want %r, got %r" % (want[1], got[1]),
                         first_difference(want, got))
        self.assertEqual("lengths differ: want 1, got 2", first_difference([1.0], [1.0, NAN]))
        self.assertEqual("at [0] at [1]: want 0.0, got -0.0",
                         first_difference([[NAN, 0.0]], [[NAN, -0.0]]))


if __name__ == "__main__":
    unittest.main()
