"""Chapter 22, "From C and Python": the library's softmax from Python on a
NumPy array (the kiln package, python/kiln), checked against NumPy, then an
error the package raises. The device is $KILN_DEVICE, else cpu."""
import os
import sys

import numpy

# [book:python]
import kiln

x = numpy.random.default_rng(0).standard_normal((2, 5), dtype=numpy.float32)
y = kiln.run("softmax", x, device=os.environ.get("KILN_DEVICE", "cpu"))
print(y.round(4))
try:
    kiln.run("softmax", x.astype(numpy.int32))
except kiln.KilnError as error:
    print(error)
# [/book:python]

shifted = numpy.exp(x.astype(numpy.float64) - x.max(axis=1, keepdims=True))
expected = shifted / shifted.sum(axis=1, keepdims=True)
ok = numpy.all(numpy.abs(y - expected) <= (5 + 5) * 2.0**-24 * expected)
print("ok" if ok else "FAILED")
sys.exit(0 if ok else 1)
