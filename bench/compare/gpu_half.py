"""The GPU half: kiln, Triton and torch timed on the same shapes, Triton's and
torch's outputs checked against each other (kiln's own --check runs in
scripts/device-check.sh), ratios kiln/Triton and kiln/torch.

Timing: Triton and torch as triton.testing.do_bench does (CUDA events, the
median, a 256 MB buffer cleared before each launch to flush L2), which is how
kiln's own timer (`kiln run --bench`) measures too, and also back to back
without the flush; the ratios use the flushed times, so that all three are
timed alike.
"""

import json
import statistics
import subprocess
import sys
import time

import gpu_shapes

KERNELS = {"vector_add", "dropout", "softmax", "layer_norm", "layer_norm_backward", "rms_norm", "matmul",
           "conv2d_bn_silu", "attention"}


def selected_cases(only):
    chosen = [c for c in gpu_shapes.all_cases() if not only or any(c.name.startswith(o) for o in only)]
    for case in chosen:
        if case.kernel not in KERNELS:
            raise SystemExit(f"compare.py: case {case.name} names kernel {case.kernel}, which has no runner")
    if not chosen:
        raise SystemExit(f"compare.py: no case starts with {only}")
    return chosen


def dry_run(kiln, cases):
    for case in cases:
        print(f"{case.name:<44} {case.dtype:<5} {case.bytes / 1e6:>10.1f} MB {case.flops / 1e9:>10.1f} GFLOP  "
              + " ".join(case.kiln_command(kiln)[1:]))
        for label, flags in case.kiln_alternatives:
            print(f"{'':<44} {label}: " + " ".join(case.kiln_command(kiln, flags)[1:]))
    print(f"compare.py gpu --dry-run: {len(cases)} cases")
    return 0


def median_ms(torch, fn, flush):
    """Median CUDA-event time of fn in ms over ~100 ms of launches (5 to 200)."""
    cache = torch.empty(256 * 1024 * 1024, dtype=torch.int8, device="cuda")
    fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(3):
        fn()
    end.record()
    torch.cuda.synchronize()
    reps = max(5, min(200, int(100.0 / max(start.elapsed_time(end) / 3, 1e-3))))
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(reps)]
    for begin, finish in events:
        if flush:
            cache.zero_()
        begin.record()
        fn()
        finish.record()
    torch.cuda.synchronize()
    return statistics.median(b.elapsed_time(f) for b, f in events)


def time_kiln(kiln, case, extra=()):
    command = case.kiln_command(kiln, extra)
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        return {"error": f"`{' '.join(command[1:])}` exit {done.returncode}: {done.stderr.strip()[:300]}"}
    report = json.loads(lines[-1])
    return {"ms": report["time_s"] * 1e3, "report": report}


def rate(case, ms):
    if ms is None:
        return {}
    out = {"gb_s": case.bytes / (ms * 1e-3) / 1e9}
    if case.flops:
        out["tflop_s"] = case.flops / (ms * 1e-3) / 1e12
    return out


def run_case(torch, runners, kiln, case, generator):
    run = runners.RUNNERS[case.kernel](case, generator)
    run.triton()
    run.torch()
    torch.cuda.synchronize()
    checks = runners.agreement(run.outputs(), case.dtype)
    result = {"case": case.name, "kernel": case.kernel, "dtype": case.dtype, "params": case.params,
              "bytes": case.bytes, "flops": case.flops, "checks": checks}
    for side, fn in (("triton", run.triton), ("torch", run.torch)):
        result[side] = {"ms": median_ms(torch, fn, flush=True), "back_to_back_ms": median_ms(torch, fn, flush=False)}
        result[side].update(rate(case, result[side]["ms"]))
    del run
    torch.cuda.empty_cache()
    result["kiln"] = time_kiln(kiln, case)
    kiln_ms = result["kiln"].get("ms")
    result["kiln"].update(rate(case, kiln_ms))
    for side in ("triton", "torch"):
        result[f"kiln_over_{side}"] = kiln_ms / result[side]["ms"] if kiln_ms else None
    result["kiln_alternatives"] = {}
    for label, flags in case.kiln_alternatives:
        alternative = time_kiln(kiln, case, flags)
        alternative.update(rate(case, alternative.get("ms")))
        result["kiln_alternatives"][label] = alternative
    return result


def fmt(value, digits=2):
    return "-" if value is None else f"{value:.{digits}f}"


def print_table(results):
    print("times in ms (Triton, torch: L2 flushed / back to back; kiln: its own timer, L2 flushed); ratios use "
          "the flushed times; rate: GB/s, or TFLOP/s where the kernel has flops")
    print(f"{'case':<44} {'kiln':>9} {'triton':>17} {'torch':>17} {'k/triton':>8} {'k/torch':>8} "
          f"{'rate k/t/torch':>22} check")
    for r in results:
        key = "tflop_s" if r["flops"] else "gb_s"
        rates = "/".join(fmt(r[s].get(key), 1) for s in ("kiln", "triton", "torch"))
        check = "ok" if all(c["ok"] for c in r["checks"]) else "MISMATCH " + ", ".join(
            f"{c['output']} {c['relative_error']:.2g}" for c in r["checks"] if not c["ok"])
        print(f"{r['case']:<44} {fmt(r['kiln'].get('ms'), 3):>9} "
              f"{fmt(r['triton']['ms'], 3) + '/' + fmt(r['triton']['back_to_back_ms'], 3):>17} "
              f"{fmt(r['torch']['ms'], 3) + '/' + fmt(r['torch']['back_to_back_ms'], 3):>17} "
              f"{fmt(r['kiln_over_triton']):>8} {fmt(r['kiln_over_torch']):>8} {rates:>22} {check}"
              + (f"  kiln: {r['kiln']['error']}" if "error" in r["kiln"] else ""))
        for label, alternative in r["kiln_alternatives"].items():
            print(f"{'  kiln in its ' + label:<44} {fmt(alternative.get('ms'), 3):>9}"
                  + (f"  {alternative['error']}" if "error" in alternative else ""))


def run(kiln, dry_run=False, json_path=None, budget_s=300.0, only=()):
    cases = selected_cases(only)
    if dry_run:
        return globals()["dry_run"](kiln, cases)
    try:
        import torch
    except ImportError:
        print("compare.py gpu: torch is not installed here; the GPU half needs torch, triton and a CUDA GPU",
              file=sys.stderr)
        return 1
    if not torch.cuda.is_available():
        print("compare.py gpu: no CUDA GPU is usable here (torch.cuda.is_available() is False)", file=sys.stderr)
        return 1
    import gpu_runners
    generator = torch.Generator(device="cuda")
    generator.manual_seed(0)
    start = time.monotonic()
    results, skipped, failed = [], [], False
    for case in cases:
        if time.monotonic() - start > budget_s:
            skipped.append(case.name)
            continue
        print(f"compare.py: {case.name}", file=sys.stderr, flush=True)
        result = run_case(torch, gpu_runners, kiln, case, generator)
        failed |= "error" in result["kiln"] or not all(c["ok"] for c in result["checks"])
        results.append(result)
    print(f"{torch.cuda.get_device_name(0)}, torch {torch.__version__}")
    print_table(results)
    if skipped:
        print(f"not run (past the {budget_s:.0f} s budget): {', '.join(skipped)}")
    if json_path:
        with open(json_path, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(0), "results": results, "skipped": skipped}, f, indent=1)
    return 1 if failed else 0
