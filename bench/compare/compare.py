#!/usr/bin/env python3
"""kiln side by side with Triton (and PyTorch on a GPU). See README.md.

  compare.py cpu [--arch sm_90a|sm_80] [--subset ci|all] [--json FILE]
      no GPU needed: compile latency, ptxas resources and SASS counts of kiln's
      and Triton's code for the same kernels.
  compare.py gpu [--dry-run] [--json FILE] [--budget-s S] [--only NAME]
      on a GPU: kiln, Triton and torch timed on the same shapes, outputs
      checked; --dry-run prints the plan without a GPU.
"""

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
DEFAULT_KILN = os.path.join(HERE, "..", "..", "build", "examples", "kiln")


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="compare.py", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kiln", default=os.environ.get("KILN", DEFAULT_KILN),
                        help="the kiln tool (default: $KILN, else build/examples/kiln)")
    halves = parser.add_subparsers(dest="half", required=True)
    cpu = halves.add_parser("cpu", help="compile both sides for one architecture; no GPU needed")
    cpu.add_argument("--arch", choices=("sm_90a", "sm_80"), default="sm_90a")
    cpu.add_argument("--subset", choices=("ci", "all"), default="all",
                     help="ci: every kernel at one configuration; all: also more configurations")
    cpu.add_argument("--json", help="write the results here")
    cpu.add_argument("--keep", help="keep each side's PTX and cubin in this folder")
    gpu = halves.add_parser("gpu", help="time kiln, Triton and torch on a GPU")
    gpu.add_argument("--dry-run", action="store_true", help="print the cases and commands; needs no GPU")
    gpu.add_argument("--json", help="write the results here")
    gpu.add_argument("--budget-s", type=float, default=300.0,
                     help="start no case after this many seconds (default 300)")
    gpu.add_argument("--only", action="append", default=[],
                     help="run only cases whose name starts with this (repeatable)")
    return parser.parse_args(argv)


def main(argv):
    args = parse_args(argv)
    kiln = os.path.abspath(args.kiln)
    if args.half == "cpu":
        import cases
        import cpu_half
        selected = [c for c in cases.all_cases(args.arch) if args.subset == "all" or c.ci]
        if args.keep:
            os.makedirs(args.keep, exist_ok=True)
        cpu_half.run(kiln, args.arch, selected, args.json, args.keep)
        return 0
    import gpu_half
    return gpu_half.run(kiln, dry_run=args.dry_run, json_path=args.json, budget_s=args.budget_s, only=args.only)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
