"""PTX to cubin to SASS with the ptxas and cuobjdump Triton's wheel carries:
registers, spills and shared memory from `ptxas -v`, instruction counts by
class from `cuobjdump -sass`, for the whole kernel and for its hot loop.

Both compilers' PTX goes through the same ptxas with the same flags
(`-v --gpu-name=ARCH`, ptxas's default -O3), so the differences are theirs.
"""

import os
import re
import subprocess
import tempfile
import time
from collections import namedtuple

CLASSES = ("MMA", "LDSM", "LDS/STS", "LDG/LDGSTS", "BAR", "FFMA", "LDL/STL", "other")

_OPCODE_CLASS = {
    "HMMA": "MMA", "HGMMA": "MMA",
    "LDSM": "LDSM",
    "LDS": "LDS/STS", "STS": "LDS/STS",
    "LDG": "LDG/LDGSTS", "LDGSTS": "LDG/LDGSTS", "UTMALDG": "LDG/LDGSTS",
    "BAR": "BAR",
    "FFMA": "FFMA",
    "LDL": "LDL/STL", "STL": "LDL/STL",
}

# "        /*0940*/              @!P1 BRA 0x180 ;     /* 0xfffffff8000c9947 */"
_INSTRUCTION = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)\s*([^;]*);")
_REGISTERS = re.compile(r"Used (\d+) registers")
_SPILLS = re.compile(r"(\d+) bytes spill stores, (\d+) bytes spill loads")
_STATIC_SMEM = re.compile(r"(\d+) bytes smem")
_ENTRY = re.compile(r"Compiling entry function '([^']+)'")


def tool_dir():
    """The folder of the NVIDIA tools inside the installed triton package."""
    import triton  # the pinned wheel carries ptxas, cuobjdump and nvdisasm
    folder = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin")
    for tool in ("ptxas", "cuobjdump"):
        if not os.access(os.path.join(folder, tool), os.X_OK):
            raise SystemExit(f"compare.py: triton {triton.__version__} at {folder} has no executable {tool}")
    return folder


def assemble(ptx, arch, work_dir, stem):
    """Runs `ptxas -v` on the PTX: returns the cubin's path, the wall seconds
    ptxas took and its resource report for the (single) entry."""
    ptx_path = os.path.join(work_dir, stem + ".ptx")
    cubin_path = os.path.join(work_dir, stem + ".cubin")
    with open(ptx_path, "w") as f:
        f.write(ptx)
    command = [os.path.join(tool_dir(), "ptxas"), "-v", f"--gpu-name={arch}", ptx_path, "-o", cubin_path]
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"compare.py: ptxas failed on {ptx_path} (exit {done.returncode}): "
                         + " ".join(done.stderr.split())[:400])
    return cubin_path, seconds, parse_resources(done.stderr, ptx_path)


def parse_resources(log, where):
    """Registers, spill bytes and static shared memory from ptxas -v's log."""
    entries = _ENTRY.findall(log)
    if len(entries) != 1:
        raise SystemExit(f"compare.py: expected one entry in {where}, ptxas reports {entries}")
    registers = _REGISTERS.search(log)
    spills = _SPILLS.search(log)
    static_smem = _STATIC_SMEM.search(log)
    if not registers or not spills:
        raise SystemExit(f"compare.py: cannot read registers and spills of {where} from ptxas -v: {log!r}")
    return {
        "entry": entries[0],
        "registers": int(registers.group(1)),
        "spill_store_bytes": int(spills.group(1)),
        "spill_load_bytes": int(spills.group(2)),
        "static_shared_bytes": int(static_smem.group(1)) if static_smem else 0,
    }


# One SASS instruction; predicate is "" when it always runs.
Instruction = namedtuple("Instruction", "address opcode operands predicate")


def parse_sass(listing):
    """The instructions of cuobjdump -sass's listing, NOPs left out."""
    instructions = []
    for line in listing.splitlines():
        match = _INSTRUCTION.match(line)
        if match and match.group(3) != "NOP":
            instructions.append(Instruction(int(match.group(1), 16), match.group(3), match.group(4).strip(),
                                            (match.group(2) or "").strip()))
    return instructions


def disassemble(cubin_path):
    """The cubin's instructions, NOPs left out."""
    done = subprocess.run([os.path.join(tool_dir(), "cuobjdump"), "-sass", cubin_path], capture_output=True,
                          text=True)
    if done.returncode != 0:
        raise SystemExit(f"compare.py: cuobjdump -sass {cubin_path} failed: {' '.join(done.stderr.split())[:300]}")
    instructions = parse_sass(done.stdout)
    if not instructions:
        raise SystemExit(f"compare.py: no SASS instructions in {cubin_path}")
    return instructions


def instruction_class(opcode):
    return _OPCODE_CLASS.get(opcode.split(".")[0], "other")


def class_counts(instructions):
    counts = {name: 0 for name in CLASSES}
    for instruction in instructions:
        counts[instruction_class(instruction.opcode)] += 1
    counts["total"] = len(instructions)
    return counts


def loops(instructions):
    """Each backward branch's (first, last) instruction index: a loop body.
    A backward branch over an unpredicated EXIT is not one: it returns from
    code laid out after the exit (a divergent shuffle's fallback, a cold
    branch) to the main path."""
    index_of = {instruction.address: i for i, instruction in enumerate(instructions)}
    found = []
    for i, instruction in enumerate(instructions):
        if instruction.opcode.split(".")[0] != "BRA":
            continue
        target = re.match(r"(?:`\()?(0x[0-9a-f]+)", instruction.operands)
        if not target:
            continue
        first = index_of.get(int(target.group(1), 16))
        # A branch to itself is the padding loop after EXIT, not a loop body.
        if first is not None and first < i and not any(
                inside.opcode == "EXIT" and not inside.predicate for inside in instructions[first:i]):
            found.append((first, i))
    return found


def spin_wait(body):
    """A loop around a compare-and-swap waits for a lock; it computes nothing."""
    return any(i.opcode.startswith(("ATOMG", "ATOM.", "ATOMS")) and ".CAS" in i.opcode for i in body)


def hot_loop(instructions):
    """The hot loop: among the innermost loops (holding no other loop) that
    are not spin waits, the one with the most tensor-core instructions, the
    first in address order on a tie. Returns its instructions, or None when
    the kernel has no such loop."""
    spans = [s for s in loops(instructions) if not spin_wait(instructions[s[0]:s[1] + 1])]
    innermost = [s for s in spans if not any(o != s and s[0] <= o[0] and o[1] <= s[1] for o in spans)]
    if not innermost:
        return None
    def mma_count(span):
        return sum(instruction_class(i.opcode) == "MMA" for i in instructions[span[0]:span[1] + 1])
    best = max(sorted(innermost), key=mma_count)
    return instructions[best[0]:best[1] + 1]


def analyse(ptx, arch, stem, work_dir=None):
    """ptxas resources, ptxas seconds and SASS counts (kernel and hot loop) of one PTX entry."""
    with tempfile.TemporaryDirectory(prefix="kiln-compare-") as scratch:
        cubin, seconds, resources = assemble(ptx, arch, work_dir or scratch, stem)
        instructions = disassemble(cubin)
    loop = hot_loop(instructions)
    return {
        "ptxas_seconds": seconds,
        **resources,
        "sass": class_counts(instructions),
        "sass_hot_loop": class_counts(loop) if loop else None,
    }
