"""The half of the comparison that needs no GPU: kiln and Triton compile the
same kernels for one architecture; compile latency (cold and warm, in process),
ptxas resources and SASS instruction counts side by side."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import sass

ARCH_CAPABILITY = {"sm_90a": 90, "sm_80": 80}


def triton_source(launch):
    """The ASTSource a launch with these arguments compiles: pointers and
    integers divisible by 16 carry tt.divisibility, integers equal to 1 become
    constants, as Triton's launcher specialises them."""
    from triton.compiler import ASTSource
    signature, constexprs, attrs = {}, dict(launch.constexprs), {}
    for index, (name, kind, value) in enumerate(launch.args):
        if kind == "i32" and value == 1:
            constexprs[name] = 1
            signature[name] = "constexpr"
            continue
        signature[name] = kind
        if kind.startswith("*") or (kind == "i32" and value % 16 == 0):
            attrs[(index, )] = [["tt.divisibility", 16]]
    for name in launch.constexprs:
        signature[name] = "constexpr"
    ordered = {name: signature[name] for name in launch.fn.arg_names}
    return ASTSource(launch.fn, ordered, constexprs, attrs)


def compile_triton(launch, arch):
    """Compiles once into a fresh cache (cold), then again from it (warm)."""
    import triton
    from triton.backends.compiler import GPUTarget
    target = GPUTarget("cuda", ARCH_CAPABILITY[arch], 32)
    options = {"num_warps": launch.num_warps, "num_stages": launch.num_stages}
    cache = tempfile.mkdtemp(prefix="kiln-compare-triton-cache-")
    previous = os.environ.get("TRITON_CACHE_DIR")
    os.environ["TRITON_CACHE_DIR"] = cache
    try:
        start = time.perf_counter()
        compiled = triton.compile(triton_source(launch), target=target, options=options)
        cold = time.perf_counter() - start
        start = time.perf_counter()
        triton.compile(triton_source(launch), target=target, options=options)
        warm = time.perf_counter() - start
    finally:
        if previous is None:
            del os.environ["TRITON_CACHE_DIR"]
        else:
            os.environ["TRITON_CACHE_DIR"] = previous
        shutil.rmtree(cache, ignore_errors=True)
    return {"cold_ms": cold * 1e3, "warm_ms": warm * 1e3, "ptx": compiled.asm["ptx"],
            "entry": compiled.metadata.name, "num_warps": compiled.metadata.num_warps,
            "shared_bytes": compiled.metadata.shared}


def warm_up_triton(arch):
    """One throwaway compile, so that loading Triton's libraries and asking
    ptxas its version are not charged to the first kernel."""
    import cases
    compile_triton(cases.vector_add(n=1000).triton[0], arch)


def kiln_dump(kiln, case, arch):
    command = [kiln, "dump", case.kiln_kernel, "--stage", "ptx", "--json", "--arch", arch, "--dtype", case.dtype,
               *case.kiln_flags]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"compare.py: `{' '.join(command)}` failed (exit {done.returncode}): "
                         f"{done.stderr.strip()[:400]}")
    return json.loads(done.stdout)


def kiln_compile_ms(report):
    """Cold: tracing, specialisation, the IR passes and lowering to PTX. Warm:
    tracing, specialisation and a read of kiln's on-disk compile cache, whose
    key is the traced IR (kiln traces in every process; a cache hit skips the
    passes, lowering and ptxas)."""
    traced = sum(t["trace_ms"] for t in report["traced"])
    specialize = sum(l["specialize_ms"] for l in report["launches"])
    passes = sum(l["ir_passes_ms"] for l in report["launches"])
    lower = sum(l["lower_to_ptx_ms"] for l in report["launches"])
    cache = sum(l["warm_cache_ms"] for l in report["launches"])
    return traced + specialize + passes + lower, traced + specialize + cache


def run_case(kiln, case, arch, keep_dir):
    report = kiln_dump(kiln, case, arch)
    kiln_launches = report["launches"]
    if len(kiln_launches) != len(case.triton):
        raise SystemExit(f"compare.py: {case.name}: kiln launches {len(kiln_launches)} kernels, the Triton side "
                         f"{len(case.triton)}; the cases in cases.py must pair them")
    triton_launches = [compile_triton(launch, arch) for launch in case.triton]
    kiln_to_ptx_ms, kiln_warm_ms = kiln_compile_ms(report)
    pairs = []
    for index, (k, t) in enumerate(zip(kiln_launches, triton_launches)):
        if case.at_kiln_config and k["num_warps"] != t["num_warps"]:
            raise SystemExit(f"compare.py: {case.name}: kiln launches {k['num_warps']} warps on {arch}, the Triton "
                             f"side {t['num_warps']}; keep KILN_MATMUL_TILES in cases.py in step with matmul.hpp")
        stem = f"{case.name}.{index}"
        kiln_code = sass.analyse(k["ptx"], arch, "kiln." + stem, keep_dir)
        triton_code = sass.analyse(t["ptx"], arch, "triton." + stem, keep_dir)
        pairs.append({
            "kiln": {"name": k["name"], "num_warps": k["num_warps"], "grid": k["grid"],
                     "shared_bytes": k["shared_bytes"], "argument_facts": k["argument_facts"], **kiln_code},
            "triton": {"name": t["entry"], "num_warps": t["num_warps"], "shared_bytes": t["shared_bytes"],
                       **triton_code},
        })
    kiln_ptxas_ms = sum(p["kiln"]["ptxas_seconds"] for p in pairs) * 1e3
    triton_ptxas_ms = sum(p["triton"]["ptxas_seconds"] for p in pairs) * 1e3
    return {
        "case": case.name, "kiln_kernel": case.kiln_kernel, "kiln_flags": case.kiln_flags, "dtype": case.dtype,
        "arch": arch, "triton_config": case.config, "notes": case.notes,
        "compile_ms": {
            "kiln_to_ptx": kiln_to_ptx_ms, "kiln_ptxas": kiln_ptxas_ms, "kiln_cold": kiln_to_ptx_ms + kiln_ptxas_ms,
            "kiln_warm": kiln_warm_ms,
            "triton_cold": sum(t["cold_ms"] for t in triton_launches),
            "triton_ptxas": triton_ptxas_ms,
            "triton_warm": sum(t["warm_ms"] for t in triton_launches),
        },
        "launches": pairs,
    }


def side_by_side(k, t):
    return f"{k}/{t}"


def print_tables(results, out=sys.stdout):
    print("compile (ms, in process; cold = to cubin with ptxas, warm = from each one's on-disk cache); "
          "ratios kiln/Triton", file=out)
    print(f"{'case':<22} {'kiln cold':>10} {'triton cold':>12} {'ratio':>6} {'kiln warm':>10} {'triton warm':>12} "
          f"{'ratio':>6} {'ptxas k/t':>12}", file=out)
    for r in results:
        c = r["compile_ms"]
        print(f"{r['case']:<22} {c['kiln_cold']:>10.1f} {c['triton_cold']:>12.1f} "
              f"{c['kiln_cold'] / c['triton_cold']:>6.2f} {c['kiln_warm']:>10.2f} {c['triton_warm']:>12.2f} "
              f"{c['kiln_warm'] / c['triton_warm']:>6.2f} "
              f"{side_by_side(round(c['kiln_ptxas']), round(c['triton_ptxas'])):>12}", file=out)
    print(file=out)
    print("resources and SASS, kiln/Triton (shared: dynamic bytes per program; spills: store+load bytes)", file=out)
    columns = ("total",) + sass.CLASSES
    header = f"{'launch':<24} {'warps':>5} {'regs':>8} {'spills':>7} {'shared':>12} " + " ".join(
        f"{c:>11}" for c in columns)
    for scope, key in (("whole kernel", "sass"), ("hot loop", "sass_hot_loop")):
        print(f"-- {scope}", file=out)
        print(header, file=out)
        for r in results:
            for index, pair in enumerate(r["launches"]):
                k, t = pair["kiln"], pair["triton"]
                label = r["case"] + (f"[{index}]" if len(r["launches"]) > 1 else "")
                counts = [side_by_side(*(x[key][c] if x[key] else "-" for x in (k, t))) for c in columns]
                spills = side_by_side(*(x["spill_store_bytes"] + x["spill_load_bytes"] for x in (k, t)))
                print(f"{label:<24} {side_by_side(k['num_warps'], t['num_warps']):>5} "
                      f"{side_by_side(k['registers'], t['registers']):>8} {spills:>7} "
                      f"{side_by_side(k['shared_bytes'], t['shared_bytes']):>12} "
                      + " ".join(f"{c:>11}" for c in counts), file=out)
    print(file=out)
    print("Triton configurations:", file=out)
    for r in results:
        print(f"  {r['case']}: {r['triton_config']}" + "".join(f"; {n}" for n in r["notes"]), file=out)


def run(kiln, arch, cases, json_path, keep_dir=None):
    if not (os.path.isfile(kiln) and os.access(kiln, os.X_OK)):
        raise SystemExit(f"compare.py: no kiln tool at {kiln} (build the kiln_tool target or pass --kiln)")
    warm_up_triton(arch)
    results = []
    for case in cases:
        print(f"compare.py: {case.name} ({arch})", file=sys.stderr, flush=True)
        results.append(run_case(kiln, case, arch, keep_dir))
    print_tables(results)
    if json_path:
        with open(json_path, "w") as f:
            json.dump({"arch": arch, "results": results}, f, indent=1)
    return results
