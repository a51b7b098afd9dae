// The public entry point: the kiln language, its standard library and the
// runtime API. Kernels write `namespace kl = kiln;` and use kl::….
#pragma once

#include "kiln/dsl/argument_struct.hpp"
#include "kiln/dsl/arith.hpp"
#include "kiln/dsl/autotune.hpp"
#include "kiln/dsl/block_pointer.hpp"
#include "kiln/dsl/control.hpp"
#include "kiln/dsl/creation.hpp"
#include "kiln/dsl/debug.hpp"
#include "kiln/dsl/dot.hpp"
#include "kiln/dsl/hints.hpp"
#include "kiln/dsl/inline_asm.hpp"
#include "kiln/dsl/kernel.hpp"
#include "kiln/dsl/math.hpp"
#include "kiln/dsl/memory.hpp"
#include "kiln/dsl/reduce.hpp"
#include "kiln/dsl/shape_ops.hpp"
#include "kiln/runtime/bench.hpp"
#include "kiln/runtime/buffer.hpp"
#include "kiln/runtime/device.hpp"
#include "kiln/stdlib/stdlib.hpp"
