// What the `cuda` device compiles a program for, shared by everything that
// must compile it the same way: the device itself, KILN_CHECK_PTX, `kiln dump`
// and the ahead-of-time generator.
#pragma once

#include <string>

#include "kiln/lowering/compile.hpp"
#include "kiln/runtime/compile_cache.hpp"
#include "kiln/runtime/program.hpp"

namespace kiln::cuda {

/// The GPU code generator's target for a launch of `program` on `arch`: the
/// program's warps and register cap, and no promise that its pointer
/// arguments do not overlap (an in-place launch passes one buffer twice).
lowering::GpuTarget target_for(const runtime::Program& program, const std::string& arch);

/// The compile cache's key for `program` compiled for `target` into `image`
/// (e.g. "ptx sm_90a"): the IR as traced (and specialised), the IR passes it
/// goes through and the options of `target` that change the generated code.
/// The passes are a function of those and of the compiler sources' hash (in
/// every key, runtime::compiler_sources_hash), so a process that
/// finds the entry on disk runs no pass at all, as Triton's key is its
/// kernel's source, not the compiled IR.
runtime::CacheKey cache_key(const runtime::Program& program, const lowering::GpuTarget& target, std::string image);

}  // namespace kiln::cuda
