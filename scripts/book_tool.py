#!/usr/bin/env python3
"""Prints what the kiln tool prints for the commands a chapter of the book shows.

Each command is printed as `$ kiln ARGS`, followed by the tool's standard
output, so that an output block of the book (checked by
`book_snippets.py output NAME book_tool.py KILN -- ARGS -- ARGS ...`) shows
the command next to what it printed. Before a command's arguments,
`--filter REGEX` keeps only the lines of its output that match REGEX, and
`--head N` only its first N lines, followed by a line saying how many were
left out (for a long dump, the lines a chapter reads).

Usage: book_tool.py KILN [--filter REGEX] [--head N] ARGS [-- ...]
       exit 1 if a command fails
"""
import re
import subprocess
import sys


def commands(argv):
    current = []
    for arg in argv:
        if arg == "--":
            if current:
                yield current
            current = []
        else:
            current.append(arg)
    if current:
        yield current


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    kiln = argv[0]
    for args in commands(argv[1:]):
        keep, head = None, None
        while args and args[0] in ("--filter", "--head"):
            if args[0] == "--filter":
                keep = re.compile(args[1])
            else:
                head = int(args[1])
            args = args[2:]
        result = subprocess.run([kiln, *args], capture_output=True, text=True, timeout=600)
        if result.returncode != 0:
            print(f"book_tool: `kiln {' '.join(args)}` exited with {result.returncode}:\n{result.stdout}{result.stderr}",
                  file=sys.stderr)
            return 1
        print("$ kiln " + " ".join(args))
        lines = [l for l in result.stdout.rstrip("\n").split("\n") if keep is None or keep.search(l)]
        for line in lines[:head]:
            print(line)
        if head is not None and len(lines) > head:
            print(f"... ({len(lines) - head} more lines)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
