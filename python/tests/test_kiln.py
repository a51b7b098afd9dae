"""The kiln Python package on NumPy arrays: library kernels and an IR-text
kernel on the cpu and emu devices against NumPy references with bounds from
the dtype and the reduction length, and the errors it raises."""

import unittest

import numpy

import kiln

F32_ROUNDOFF = 2.0**-24
DEVICES = ("cpu", "emu")

# out[i] = x[i] * scale for i < n, 64 elements per program.
SCALE_KERNEL = """kernel @scale(%0: ptr<f32>, %1: ptr<f32>, %2: f32, %3: i32) {
  %4 = program_id {axis = 0} : i32
  %5 = constant {value = 64} : i32
  %6 = mul %4, %5 : i32
  %7 = arange {start = 0} : tile<64xi32>
  %8 = splat %6 : tile<64xi32>
  %9 = add %8, %7 : tile<64xi32>
  %10 = splat %3 : tile<64xi32>
  %11 = cmp %9, %10 {pred = lt} : tile<64xi1>
  %12 = splat %0 : tile<64xptr<f32>>
  %13 = addptr %12, %9 : tile<64xptr<f32>>
  %14 = load %13, %11 {cache = none, evict = none} : tile<64xf32>
  %15 = splat %2 : tile<64xf32>
  %16 = mul %14, %15 : tile<64xf32>
  %17 = splat %1 : tile<64xptr<f32>>
  %18 = addptr %17, %9 : tile<64xptr<f32>>
  store %18, %16, %11 {cache = none, evict = none}
}
"""


def gamma(terms, roundoff):
    return terms * roundoff / (1 - terms * roundoff)


class LibraryKernels(unittest.TestCase):
    def test_softmax(self):
        rows, cols = 33, 250
        x = numpy.random.default_rng(11).uniform(-4, 4, (rows, cols)).astype(numpy.float32)
        shifted = numpy.exp(x.astype(numpy.float64) - x.max(axis=1, keepdims=True))
        expected = shifted / shifted.sum(axis=1, keepdims=True)
        # exp, a sum of `cols` f32 terms, a division, the rounding to f32.
        relative = F32_ROUNDOFF + (cols + 4) * F32_ROUNDOFF
        for device in DEVICES:
            with self.subTest(device=device):
                y = kiln.run("softmax", x, device=device)
                self.assertIsInstance(y, numpy.ndarray)
                self.assertEqual((y.shape, y.dtype), (x.shape, numpy.float32))
                error = numpy.abs(y - expected) - relative * expected
                self.assertLessEqual(error.max(), numpy.finfo(numpy.float32).smallest_subnormal)

    def test_matmul(self):
        m, k, n = 50, 70, 30
        random = numpy.random.default_rng(12)
        a = random.uniform(-1, 1, (m, k)).astype(numpy.float32)
        b = random.uniform(-1, 1, (k, n)).astype(numpy.float32)
        exact = a.astype(numpy.float64) @ b.astype(numpy.float64)
        magnitude = numpy.abs(a.astype(numpy.float64)) @ numpy.abs(b.astype(numpy.float64))
        bound = (gamma(k + 2, F32_ROUNDOFF) + gamma(k + 2, 2.0**-53)) * magnitude + F32_ROUNDOFF * numpy.abs(exact)
        bound += numpy.finfo(numpy.float32).smallest_subnormal
        for device in DEVICES:
            with self.subTest(device=device):
                c = kiln.run("matmul", a, b, device=device)
                self.assertEqual(c.shape, (m, n))
                self.assertTrue(numpy.all(numpy.abs(c - exact) <= bound), numpy.abs(c - exact).max())

    def test_output_given_and_strided_input(self):
        x = numpy.random.default_rng(13).uniform(-2, 2, (8, 40)).astype(numpy.float32)
        wide = numpy.zeros((8, 64), dtype=numpy.float32)
        wide[:, :40] = x
        out = numpy.empty((8, 40), dtype=numpy.float32)
        # Rows 64 elements apart, read in place through the view's strides.
        returned = kiln.run("softmax", wide[:, :40], out=out)
        self.assertIs(returned, out)
        numpy.testing.assert_array_equal(out, kiln.run("softmax", x))

    def test_device_from_the_tensors(self):
        class OnSecondGpu:
            def __dlpack_device__(self):
                return (2, 1)  # kDLCUDA, GPU 1

        self.assertEqual(kiln._kernel._device_of([3, OnSecondGpu()]), "cuda:1")
        self.assertEqual(kiln._kernel._device_of([2.0, numpy.ones(2)]), "cpu")
        self.assertEqual(kiln.Device("emu:2").name, "emu:2")

    def test_read_only_input(self):
        x = numpy.random.default_rng(14).uniform(-2, 2, (3, 16)).astype(numpy.float32)
        frozen = x.copy()
        frozen.flags.writeable = False
        numpy.testing.assert_array_equal(kiln.run("softmax", frozen), kiln.run("softmax", x))


class IrKernels(unittest.TestCase):
    def test_scale(self):
        n = 150
        kernel = kiln.Kernel.from_ir(SCALE_KERNEL)
        self.assertEqual(kernel.name, "scale")
        x = numpy.random.default_rng(15).uniform(-8, 8, n).astype(numpy.float32)
        for device in DEVICES:
            with self.subTest(device=device):
                out = numpy.zeros(n, dtype=numpy.float32)
                kernel.launch(x, out, 1.75, n, grid=(n + 63) // 64, device=device)
                # One f32 multiplication, correctly rounded: NumPy's exact product.
                numpy.testing.assert_array_equal(out, x * numpy.float32(1.75))


class Errors(unittest.TestCase):
    def test_dtype_mismatch(self):
        softmax = kiln.Kernel.from_library("softmax")
        x = numpy.ones((4, 8), dtype=numpy.float32)
        out = numpy.empty((4, 8), dtype=numpy.float16)
        with self.assertRaises(kiln.KilnError) as raised:
            softmax.launch(x, out)
        self.assertEqual(raised.exception.status, "KILN_ERROR_INVALID_ARGUMENT")
        self.assertEqual(
            str(raised.exception),
            "kiln_launch: softmax argument 1 'out' has dtype f16, the kernel expects f32 (the dtype of 'x')",
        )

    def test_unknown_kernel(self):
        with self.assertRaisesRegex(
            kiln.KilnError,
            r"^kiln_kernel_from_library: unknown kernel 'softmx' \(the library offers: matmul, softmax, vector_add\)$",
        ):
            kiln.run("softmx", numpy.ones((2, 2), dtype=numpy.float32))

    def test_unknown_device(self):
        with self.assertRaisesRegex(kiln.KilnError, r"^kiln_device_open: unknown device 'tpu' \(available here: cpu"):
            kiln.run("softmax", numpy.ones((2, 2), dtype=numpy.float32), device="tpu")

    def test_non_contiguous_ir_argument(self):
        kernel = kiln.Kernel.from_ir(SCALE_KERNEL)
        x = numpy.ones(128, dtype=numpy.float32)
        out = numpy.empty(64, dtype=numpy.float32)
        with self.assertRaises(kiln.KilnError) as raised:
            kernel.launch(x[::2], out, 2.0, 64, grid=1)
        self.assertEqual(
            str(raised.exception),
            "kiln_launch: @scale argument 0 (ptr<f32>) has shape (64,) and strides (2,) (in elements), "
            "the kernel needs it contiguous (row-major, strides (1,))",
        )

    def test_not_a_tensor(self):
        kernel = kiln.Kernel.from_ir(SCALE_KERNEL)
        with self.assertRaisesRegex(TypeError, r"^kiln: argument 0 is a list, which has no __dlpack__$"):
            kernel.launch([1.0, 2.0], numpy.empty(2, dtype=numpy.float32), 2.0, 2, grid=1)

    def test_read_only_argument_of_a_launch(self):
        kernel = kiln.Kernel.from_ir(SCALE_KERNEL)
        x = numpy.ones(64, dtype=numpy.float32)
        x.flags.writeable = False
        with self.assertRaisesRegex(TypeError, r"^kiln: argument 0 is a read-only NumPy array"):
            kernel.launch(x, numpy.empty(64, dtype=numpy.float32), 2.0, 64, grid=1)

    def test_ir_that_does_not_parse(self):
        with self.assertRaises(kiln.KilnError) as raised:
            kiln.Kernel.from_ir("kernel @broken(%0: ptr<f32>) {\n  %1 = frobnicate %0 : f32\n}\n")
        self.assertEqual(raised.exception.status, "KILN_ERROR_COMPILE")
        self.assertRegex(str(raised.exception), r"^kiln_kernel_from_ir: ir text:2:.*frobnicate")


if __name__ == "__main__":
    unittest.main()
