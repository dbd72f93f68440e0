"""Exact comparison of collected rows, NaN-safe.

``Row`` is a tuple and Python's ``nan == nan`` is false, so two lists holding the same row with a
NaN never compare equal with ``==``. Here every value is brought to a canonical form that compares
exactly: a float by its bits (so -0.0 and 0.0 differ, as they may in Spark's output), except that
every NaN is one value (Spark sorts and groups all NaNs as one); each value with its type (1, 1.0
and True differ); a Row with its field names.
"""

import math
import struct

_NAN = ("float", "NaN")


def canonical(value):
    if isinstance(value, float):
        if math.isnan(value):
            return _NAN
        return ("float", struct.pack(">d", value))
    if isinstance(value, tuple):
        fields = getattr(value, "__fields__", None)
        return (type(value).__name__, tuple(fields) if fields is not None else None,
                tuple(canonical(v) for v in value))
    if isinstance(value, list):
        return ("list", tuple(canonical(v) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple(sorted((canonical(k), canonical(v)) for k, v in value.items())))
    return (type(value).__name__, value)


def first_difference(want, got):
    """None where ``want`` and ``got`` (lists, of rows or of lists of rows) are the same, else a
    message naming the first place they differ."""
    if canonical(want) == canonical(got):
        return None
    if isinstance(want, list) and isinstance(got, list):
        for i, (w, g) in enumerate(zip(want, got)):
            if canonical(w) != canonical(g):
                if isinstance(w, list) and isinstance(g, list):
                    return "at [%d] %s" % (i, first_difference(w, g))
                return "at [%d]: want %r, got %r" % (i, w, g)
        return "lengths differ: want %d, got %d" % (len(want), len(got))
    return "want %r, got %r" % (want, got)
