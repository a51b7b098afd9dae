#!/usr/bin/env python3
"""Counts the instructions of a PTX kernel by class, in its hot loop and in total.

The hot loop is the innermost loop whose body holds an instruction starting
with --hot (default `mma.sync`; `fma.rn.f32` for an FMA-unit dot): the text
from a label `$L__BBn_m:` to the last branch back to it. Shared-memory
accesses are split by width (scalar or .v2/.v4) and element type.

Usage:
  kiln dump matmul --stage ptx --dtype f16 --arch sm_90a > matmul.ptx
  scripts/ptx_loop_counts.py matmul.ptx [--hot mma.sync] [--json]
"""
import argparse
import json
import re
import sys

LABEL = re.compile(r"^(\$L__BB\d+_\d+):", re.MULTILINE)
CLASSES = [
    ("mma", re.compile(r"^mma\.sync")),
    ("wgmma", re.compile(r"^wgmma\.")),
    ("ldmatrix", re.compile(r"^ldmatrix")),
    ("cp.async", re.compile(r"^cp\.async")),
    ("bar.sync", re.compile(r"^(bar\.sync|barrier\.sync)")),
    ("ld.shared", re.compile(r"^ld\.shared")),
    ("st.shared", re.compile(r"^st\.shared")),
    ("ld.global", re.compile(r"^ld\.global")),
    ("st.global", re.compile(r"^st\.global")),
    ("fma", re.compile(r"^fma\.")),
]


def instructions(text):
    """The instruction lines of `text`: no labels, directives, braces or comments."""
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith(("//", ".", "{", "}", "$")):
            continue
        line = re.sub(r"^@!?%\w+\s+", "", line)  # drop a predicate guard
        yield line


def hot_loop(ptx, hot):
    """The body of the innermost loop holding an instruction starting with `hot`, or None."""
    best = None
    for match in LABEL.finditer(ptx):
        label = match.group(1)
        back = ptx.rfind(label + ";")
        if back <= match.end():
            continue
        body = ptx[match.end():back]
        if any(line.startswith(hot) for line in instructions(body)):
            if best is None or len(body) < len(best):
                best = body
    return best


def counts(text):
    """Instruction counts per class; shared accesses also per width and type."""
    result = {name: 0 for name, _ in CLASSES}
    result["total"] = 0
    for line in instructions(text):
        result["total"] += 1
        opcode = line.split()[0]
        for name, pattern in CLASSES:
            if pattern.match(opcode):
                result[name] += 1
                if name in ("ld.shared", "st.shared"):
                    result[opcode.rstrip(";")] = result.get(opcode.rstrip(";"), 0) + 1
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("ptx", help="PTX file, or - for standard input")
    parser.add_argument("--hot", default="mma.sync", help="an instruction prefix the hot loop holds")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args()
    ptx = sys.stdin.read() if args.ptx == "-" else open(args.ptx).read()
    loop = hot_loop(ptx, args.hot)
    report = {"kernel": counts(ptx), "hot_loop": counts(loop) if loop is not None else None}
    if args.json:
        json.dump(report, sys.stdout, indent=2, sort_keys=True)
        print()
        return
    names = sorted(set(report["kernel"]) | set(report["hot_loop"] or {}), key=lambda n: (n.count(".") > 1, n))
    print(f"{'class':24} {'hot loop':>9} {'kernel':>9}")
    for name in names:
        in_loop = "-" if loop is None else str(report["hot_loop"].get(name, 0))
        print(f"{name:24} {in_loop:>9} {report['kernel'].get(name, 0):>9}")


if __name__ == "__main__":
    main()
