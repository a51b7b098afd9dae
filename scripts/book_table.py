#!/usr/bin/env python3
"""Keeps the book's translation tables equal to the code they show.

A table in book/*.md announced by a comment naming a source file,

    <!-- table: examples/book/triton_to_kiln.cpp -->
    | Triton | kiln | notes |
    |---|---|---|
    | `tl.program_id(0)` | `kl::program_id(0)` <!-- row: index --> | ... |

has a column headed `kiln`. A row whose kiln cell names a row (`<!-- row:
NAME -->`) shows code of the file's region `row_NAME`, the lines between
`// [book:row_NAME]` and `// [/book:row_NAME]`: every code span of the cell
must occur in that region, read as one line (its lines stripped and joined
by spaces; `\\|` in a cell is `|`). A row that names none is about something
kiln does not have, and its kiln cell may hold no code. Every `row_` region
of an announced file must be named by some row, so that code and table
cannot drift apart in either direction. The program holding the regions is
compiled and run by its own test.

Usage: book_table.py    prints one line per problem; exit 1 if there is any
"""
import pathlib
import re
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from book_snippets import BOOK, ROOT, BookError, region  # noqa: E402

ANNOUNCE = re.compile(r"^<!-- table: (\S+) -->$")
ROW_NAME = re.compile(r"<!-- row: (\w+) -->")
CODE = re.compile(r"`([^`]+)`")
REGION = re.compile(r"^\s*// \[book:row_(\w+)\]$", re.MULTILINE)


def cells(line):
    """The cells of a table line, `\\|` read as `|`."""
    parts = re.split(r"(?<!\\)\|", line.strip())
    if len(parts) < 3 or parts[0] or parts[-1]:
        raise BookError(f"`{line}` is not a table row (| cell | cell |)")
    return [p.strip().replace("\\|", "|") for p in parts[1:-1]]


def tables(path):
    """(source file, line number, kiln cell) of each body row of each table announced in `path`."""
    lines = path.read_text().split("\n")
    for i, line in enumerate(lines):
        match = ANNOUNCE.match(line)
        if not match:
            continue
        if i + 2 >= len(lines) or not re.match(r"^\|[\s:|-]+\|$", lines[i + 2]):
            raise BookError(f"{path.relative_to(ROOT)}:{i + 1}: `{line}` must be followed by a table")
        header = cells(lines[i + 1])
        if "kiln" not in header:
            raise BookError(f"{path.relative_to(ROOT)}:{i + 2}: the table has no column headed `kiln`")
        column = header.index("kiln")
        j = i + 3
        while j < len(lines) and lines[j].startswith("|"):
            row = cells(lines[j])
            if len(row) != len(header):
                raise BookError(f"{path.relative_to(ROOT)}:{j + 1}: {len(row)} cells, the header has {len(header)}")
            yield match.group(1), j + 1, row[column]
            j += 1


def check_row(source, cell, where, problems):
    """The names of the regions the row uses; its problems appended to `problems`."""
    names = ROW_NAME.findall(cell)
    spans = CODE.findall(ROW_NAME.sub("", cell))
    if not names:
        if spans:
            problems.append(f"{where}: code `{spans[0]}` in a kiln cell that names no row (`<!-- row: NAME -->`)")
        return []
    if len(names) > 1 or not spans:
        problems.append(f"{where}: a kiln cell names one row and shows its code in `code spans`")
        return names
    try:
        text = " ".join(l.strip() for l in region(source, "row_" + names[0]) if l.strip())
    except BookError as error:
        problems.append(f"{where}: {error}")
        return names
    for span in spans:
        if span not in text:
            problems.append(f"{where}: `{span}` is not in region row_{names[0]} of {source}, which reads: {text}")
    return names


def main():
    problems = []
    used = {}  # source file -> names of the regions rows use
    try:
        for chapter in sorted(BOOK.glob("*.md")):
            for source, number, cell in tables(chapter):
                where = f"{chapter.relative_to(ROOT)}:{number}"
                used.setdefault(source, set()).update(check_row(source, cell, where, problems))
    except BookError as error:
        problems.append(str(error))
    for source, names in sorted(used.items()):
        path = ROOT / source
        if not path.is_file():
            continue  # reported with each row
        for name in REGION.findall(path.read_text()):
            if name not in names:
                problems.append(f"{source}: region row_{name} is in no table row")
    for problem in problems:
        print(f"book: {problem}", file=sys.stderr)
    rows = sum(1 for c in sorted(BOOK.glob("*.md")) for _ in tables(c)) if not problems else 0
    print(f"book: {len(problems)} problem(s)" if problems else f"book: {rows} table row(s) match their sources")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
