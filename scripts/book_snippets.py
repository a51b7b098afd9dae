#!/usr/bin/env python3
"""Keeps the book's code and output blocks equal to what they show.

A code block in book/*.md is announced by a comment naming a region of a
source file, and an output block by one naming a book example:

    <!-- snippet: examples/book/vector_add.cpp kernel -->
    ```cpp
    ...the lines between `// [book:kernel]` and `// [/book:kernel]`...
    ```

    <!-- output: vector_add -->
    ```text
    ...what examples/book/vector_add prints...
    ```

In a CMake or shell file a region is marked `# [book:name]` ... `# [/book:name]`.

Usage:
  book_snippets.py check                 every snippet equals its region
  book_snippets.py update                rewrites every snippet from its region
  book_snippets.py output NAME BINARY [ARG...]
                                         runs BINARY ARG...; its output equals the block of NAME
  book_snippets.py update-output NAME BINARY [ARG...]
"""
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
BOOK = ROOT / "book"
ANNOUNCE = re.compile(r"^<!-- (snippet|output): (\S+)(?: (\S+))? -->$")
FENCE = re.compile(r"^```(\w*)$")


class BookError(Exception):
    pass


def region(path, name):
    """The lines of `path` between its `[book:name]` and `[/book:name]` markers (`// …`, or `# …` in
    CMake and shell files), dedented."""
    source = ROOT / path
    if not source.is_file():
        raise BookError(f"{path}: no such file")
    lines = source.read_text().split("\n")
    begin = [i for i, l in enumerate(lines) if l.strip() in (f"// [book:{name}]", f"# [book:{name}]")]
    end = [i for i, l in enumerate(lines) if l.strip() in (f"// [/book:{name}]", f"# [/book:{name}]")]
    if len(begin) != 1 or len(end) != 1 or end[0] < begin[0]:
        raise BookError(f"{path}: region `{name}` needs one `// [book:{name}]` line and one `// [/book:{name}]` after it"
                        f" (`#` for `//` in CMake and shell files; found {len(begin)} and {len(end)})")
    body = [l for l in lines[begin[0] + 1:end[0]] if not re.match(r"^\s*(//|#) \[/?book:\w+\]$", l)]
    indent = min((len(l) - len(l.lstrip()) for l in body if l.strip()), default=0)
    return [l[indent:] for l in body]


def blocks(text):
    """(kind, target, name, first line, last line) of each announced block: the fenced lines first..last-1."""
    lines = text.split("\n")
    found = []
    for i, line in enumerate(lines):
        match = ANNOUNCE.match(line)
        if not match:
            continue
        if i + 1 >= len(lines) or not FENCE.match(lines[i + 1]):
            raise BookError(f"line {i + 1}: `{line}` must be followed by a fenced block")
        close = next((j for j in range(i + 2, len(lines)) if lines[j] == "```"), None)
        if close is None:
            raise BookError(f"line {i + 2}: the block after `{line}` is not closed")
        found.append((match.group(1), match.group(2), match.group(3), i + 2, close))
    return lines, found


def chapters():
    return sorted(BOOK.glob("*.md"))


def rewrite_or_check(kind, want_of, write):
    problems = []
    for chapter in chapters():
        try:
            lines, found = blocks(chapter.read_text())
        except BookError as error:
            problems.append(f"{chapter.relative_to(ROOT)}: {error}")
            continue
        for block_kind, target, name, first, last in reversed(found):
            if block_kind != kind:
                continue
            try:
                want = want_of(target, name)
            except BookError as error:
                problems.append(f"{chapter.relative_to(ROOT)}:{first - 1}: {error}")
                continue
            if want is None:
                continue
            have = lines[first:last]
            if have != want:
                if write:
                    lines[first:last] = want
                else:
                    where = next((k for k, (a, b) in enumerate(zip(have, want)) if a != b), min(len(have), len(want)))
                    problems.append(f"{chapter.relative_to(ROOT)}:{first + where + 1}: the {kind} block of `{target}"
                                    f"{' ' + name if name else ''}` differs from its source at its line {where + 1}:"
                                    f" book has `{have[where] if where < len(have) else '<end>'}`, source has"
                                    f" `{want[where] if where < len(want) else '<end>'}`")
        if write:
            chapter.write_text("\n".join(lines))
    return problems


def run_example(command):
    result = subprocess.run(command, capture_output=True, text=True, timeout=600)
    if result.returncode != 0:
        raise BookError(f"{' '.join(command)} exited with {result.returncode}:\n{result.stdout}{result.stderr}")
    return result.stdout.rstrip("\n").split("\n")


def main(argv):
    if argv[:1] in (["check"], ["update"]) and len(argv) == 1:
        problems = rewrite_or_check("snippet", region, argv[0] == "update")
        count = sum(1 for c in chapters() for b in blocks(c.read_text())[1] if b[0] == "snippet")
    elif argv[:1] in (["output"], ["update-output"]) and len(argv) >= 3:
        output = run_example(argv[2:])
        seen = []

        def want(target, _name):
            if target != argv[1]:
                return None
            seen.append(target)
            return output

        problems = rewrite_or_check("output", want, argv[0] == "update-output")
        if not seen and not problems:
            problems.append(f"no chapter shows the output of `{argv[1]}` (an `<!-- output: {argv[1]} -->` block)")
        count = len(seen)
    else:
        print(__doc__, file=sys.stderr)
        return 2
    for problem in problems:
        print(f"book: {problem}", file=sys.stderr)
    if problems:
        print(f"book: {len(problems)} block(s) differ; `scripts/book_snippets.py update` (or update-output) copies"
              " the sources into the book", file=sys.stderr)
        return 1
    kind = "snippet" if argv[0] in ("check", "update") else "output"
    print(f"book: {count} {kind} block(s) match their sources")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except BookError as error:
        print(f"book: {error}", file=sys.stderr)
        sys.exit(1)
