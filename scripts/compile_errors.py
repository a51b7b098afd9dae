#!/usr/bin/env python3
"""Prints the C++ compiler's verdict on the compile-fail tests that chapter 26
of the book shows, one case after another, from a fresh build of each.

Each case of tests/compile_fail is a kernel with one mistake. This script
builds the case's object library in the build folder, exactly as its
compile_fail test does, and prints three or four lines: the line of the
case that the compiler's first error leads back to (file, number and text),
the kiln check whose instantiation failed (one of the `*_check` structs, or
the function template and its arguments), the message of that first error,
and how many errors the build reported when it is more than one. Paths and the headers' line numbers are
left out, so that the output changes only when a case or a message does.
The text is GCC's (LC_ALL=C, for plain quotes), the compiler kiln is built
and tested with.

Usage: compile_errors.py   builds in $KILN_BUILD_DIR, else build/, with
                           $KILN_CMAKE, else cmake; exit 1 if a case compiles
                           or its error cannot be read. With
                           $KILN_COMPILE_FAIL_LOGS it reads each case's build
                           output from that folder instead, where the
                           compile_fail tests leave it (the book test runs
                           after them).
"""
import os
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
CASES = [
    "broadcast_mismatch",
    "store_shape_mismatch",
    "dot_inner_mismatch",
    "reshape_count",
    "permute_bad_order",
    "reduce_axis_out_of_range",
    "tile_not_power_of_two",
    "mask_not_boolean",
    "pointer_float_offsets",
    "bitwise_on_floats",
    "exp_of_integer",
    "var_changes_shape",
    "launch_wrong_count",
    "launch_wrong_type",
    "launch_wrong_scalar",
]
ERROR = re.compile(r": error: (?:static assertion failed: )?(.*)$")
INSTANTIATION = re.compile(r": In instantiation of '(.*)':$")
CHECK = re.compile(r"^struct (kiln::[\w:]*_check<.*)$")
FUNCTION = re.compile(r"(kiln::[\w:]+)\(.*(\[with .*\])$")


def build(folder, name):
    """The build's output for the case, or an exception when the case compiled."""
    if logs := os.environ.get("KILN_COMPILE_FAIL_LOGS"):
        log = pathlib.Path(logs) / f"kiln_compile_fail_{name}.log"
        if not log.is_file():
            raise RuntimeError(f"{log} does not exist: run the test compile_fail.{name} first")
        return log.read_text().split("\n")
    result = subprocess.run([os.environ.get("KILN_CMAKE", "cmake"), "--build", str(folder), "--target", f"kiln_compile_fail_{name}"],
                            capture_output=True, text=True, env={**os.environ, "LC_ALL": "C"}, timeout=600)
    output = re.sub(r"\x1b\[[0-9;]*[mK]", "", result.stdout + result.stderr)
    if result.returncode == 0:
        raise RuntimeError(f"{name}.cpp compiled, but must be rejected")
    return output.split("\n")


def verdict(name, lines):
    """The lines this script prints for the case."""
    source = ROOT / "tests" / "compile_fail" / f"{name}.cpp"
    first = next((i for i, l in enumerate(lines) if ERROR.search(l)), None)
    if first is None:
        raise RuntimeError(f"the build of {name}.cpp failed without a compiler error:\n" + "\n".join(lines))
    # The error's context starts at the last "In file included from" or "In instantiation" line before it.
    start = max((i for i in range(first) if ": In " in lines[i] or "In file included from" in lines[i]), default=0)
    place = re.compile(re.escape(f"compile_fail/{name}.cpp:") + r"(\d+):")
    number = next((int(m.group(1)) for l in lines[start:first + 1] if (m := place.search(l))), None)
    if number is None:
        raise RuntimeError(f"the first error of {name}.cpp names no line of it:\n" + "\n".join(lines[start:first + 1]))
    text = source.read_text().split("\n")[number - 1].strip()
    out = [f"{name}.cpp:{number}   {text}"]
    instantiated = next((m.group(1) for l in lines[start:first] if (m := INSTANTIATION.search(l))), "")
    if check := CHECK.match(instantiated):
        out.append(f"    {check.group(1)}")
    elif function := FUNCTION.search(instantiated):
        out.append(f"    in {function.group(1)} {function.group(2)}")
    out.append(f"    {ERROR.search(lines[first]).group(1)}")
    errors = sum(1 for l in lines if ERROR.search(l))
    if errors > 1:
        out.append(f"    ({errors} errors in all)")
    return out


def main():
    folder = pathlib.Path(os.environ.get("KILN_BUILD_DIR", ROOT / "build"))
    try:
        for i, name in enumerate(CASES):
            print(("\n" if i else "") + "\n".join(verdict(name, build(folder, name))), flush=True)
    except (RuntimeError, subprocess.TimeoutExpired) as error:
        print(f"compile_errors: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
