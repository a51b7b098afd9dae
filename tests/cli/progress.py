#!/usr/bin/env python3
"""The kiln tool's progress line (label `cli`): shown on a terminal, updated
in place with '\\r' and cleared at the end; nothing at all on a pipe or with
--json.

  progress.py KILN    exit 1 with a line per failure
"""
import fcntl
import os
import pty
import re
import struct
import subprocess
import sys
import termios

failures = []
RUN = ["run", "softmax", "--rows", "3000", "--device", "emu:1"]
BENCH = ["bench", "--suite", "fusion", "--device", "cpu"]


def check(condition, message):
    if not condition:
        failures.append(message)


def on_terminal(kiln, arguments, columns=200):
    """Runs kiln with stderr on a pseudo-terminal of `columns` columns and
    stdout on a pipe; returns (stdout, what the terminal received)."""
    controller, terminal = pty.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    process = subprocess.Popen([kiln, *arguments], stdout=subprocess.PIPE, stderr=terminal, stdin=subprocess.DEVNULL)
    os.close(terminal)
    received = b""
    while True:
        try:
            chunk = os.read(controller, 4096)
        except OSError:  # the terminal's last holder closed it
            break
        if not chunk:
            break
        received += chunk
    stdout = process.stdout.read()
    check(process.wait(timeout=600) == 0, f"`kiln {' '.join(arguments)}` on a terminal failed: {received!r}")
    os.close(controller)
    return stdout.decode(), received.decode()


def cleared(received, name):
    """The last thing on the terminal is the line erased: '\\r', spaces, '\\r'."""
    check(re.search(r"\r +\r$", received) is not None, f"{name}: the line is not cleared at the end: {received[-120:]!r}")


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    kiln = sys.argv[1]

    # On a pipe: stderr stays empty.
    for arguments in (RUN, BENCH):
        done = subprocess.run([kiln, *arguments], capture_output=True, text=True, timeout=600)
        check(done.returncode == 0 and done.stderr == "",
              f"`kiln {' '.join(arguments)}` with stderr on a pipe: exit {done.returncode}, stderr {done.stderr!r}")

    # kiln run on a terminal: the run, then the launch's programs counted.
    stdout, received = on_terminal(kiln, RUN)
    check(received.startswith("\rrun softmax"), f"run: the line does not start with the run: {received[:80]!r}")
    counts = re.findall(r"\rrun softmax: softmax (\d+)/3000 programs \((\d+)%\)", received)
    check(len(counts) >= 1, f"run: no count of programs: {received[:200]!r}")
    check(all(int(done) * 100 // 3000 == int(percent) for done, percent in counts), f"run: wrong percentages {counts}")
    check([int(d) for d, _ in counts] == sorted(int(d) for d, _ in counts), f"run: counts go backwards: {counts}")
    check("\n" not in received, f"run: the progress line holds a newline: {received[:200]!r}")
    cleared(received, "run")
    check(stdout.startswith("softmax rows=3000 cols=1000 f32 on emu:1\n"), f"run: stdout {stdout!r}")

    # kiln bench on a terminal: each kernel and its unfused sequence out of the suite.
    stdout, received = on_terminal(kiln, BENCH)
    for stage in ("bench 0/2 kernels: matmul", "bench 0/2 kernels: matmul_unfused", "bench 1/2 kernels: conv2d_bn_silu",
                  "bench 1/2 kernels: conv2d_bn_silu_unfused"):
        check("\r" + stage in received, f"bench: no '{stage}' on the terminal: {received[:300]!r}")
    cleared(received, "bench")
    check(stdout.count("speed-up") == 2, f"bench: stdout {stdout!r}")

    # A narrow terminal: every line drawn fits it with a column to spare.
    _, received = on_terminal(kiln, BENCH, columns=30)
    drawn = [part.rstrip(" ") for part in received.split("\r") if part.strip()]
    check(drawn and all(len(part) <= 29 for part in drawn), f"bench on 30 columns: lines {drawn}")

    # --json on a terminal: nothing on it.
    stdout, received = on_terminal(kiln, [*RUN, "--json"])
    check(received == "", f"run --json: the terminal received {received[:200]!r}")
    check(stdout.startswith("{"), f"run --json: stdout {stdout[:80]!r}")

    for failure in failures:
        print(f"progress.py: {failure}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
