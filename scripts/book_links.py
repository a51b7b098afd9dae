#!/usr/bin/env python3
"""Checks the book's links: every relative link in book/*.md names a file
that exists and, after '#', a heading of that file (GitHub's anchors:
lower case, punctuation dropped, spaces to '-'); every image it shows
exists; book/README.md links every chapter file, and every chapter it
links exists.

With --html DIR it checks the pages scripts/book.sh rendered into DIR
instead: every href to a page of DIR names a page there and an id in it,
and every other relative href or src names a file there.

Usage: book_links.py [--html DIR]   prints one line per broken link, exit 1 if any
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
BOOK = ROOT / "book"
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
IMAGE = re.compile(r"!\[[^\]]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
FENCE = re.compile(r"^```")
CHAPTER = re.compile(r"^\d\d-.*\.md$")


def prose_lines(path):
    """(line number, text) of the lines outside code fences."""
    inside = False
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if FENCE.match(line):
            inside = not inside
            continue
        if not inside:
            yield number, line


def slug(title):
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", title).lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path):
    seen = {}
    out = set()
    for _, line in prose_lines(path):
        m = HEADING.match(line)
        if not m:
            continue
        base = slug(m.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        out.add(base if count == 0 else f"{base}-{count}")
    return out


def check_links(path, problems):
    for number, line in prose_lines(path):
        line = re.sub(r"`[^`]*`", "", line)
        for target in LINK.findall(line):
            if re.match(r"[a-z]+:", target):
                continue
            file_part, _, anchor = target.partition("#")
            linked = (path.parent / file_part).resolve() if file_part else path
            where = f"{path.relative_to(ROOT)}:{number}: link to '{target}'"
            if not linked.exists():
                problems.append(f"{where}: no file {file_part}")
            elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
                problems.append(f"{where}: no heading '{anchor}' in {linked.relative_to(ROOT)}")
        for target in IMAGE.findall(line):
            if not re.match(r"[a-z]+:", target) and not (path.parent / target).exists():
                problems.append(f"{path.relative_to(ROOT)}:{number}: image '{target}': no such file")


def check_contents(problems):
    readme = BOOK / "README.md"
    linked = {t.partition("#")[0] for _, line in prose_lines(readme) for t in LINK.findall(line)}
    for chapter in sorted(BOOK.glob("*.md")):
        if CHAPTER.match(chapter.name) and chapter.name not in linked:
            problems.append(f"book/README.md: chapter {chapter.name} is not in the contents")


HREF = re.compile(r'href="([^"]*)"')
SRC = re.compile(r'src="([^"]*)"')
ID = re.compile(r'id="([^"]*)"')


def check_html(folder, problems):
    pages = sorted(folder.glob("*.html"))
    ids = {page.name: set(ID.findall(page.read_text())) for page in pages}
    for page in pages:
        for target in HREF.findall(page.read_text()) + SRC.findall(page.read_text()):
            file_part, _, anchor = target.partition("#")
            if re.match(r"[a-z]+:", target):
                continue
            if file_part and not file_part.endswith(".html"):
                if not file_part.startswith("../") and not (folder / file_part).exists():
                    problems.append(f"{page.name}: link to '{target}': no file {file_part} beside the pages")
                continue
            name = file_part or page.name
            if name not in ids:
                problems.append(f"{page.name}: link to '{target}': no page {name}")
            elif anchor and anchor not in ids[name]:
                problems.append(f"{page.name}: link to '{target}': no id '{anchor}' in {name}")
    return len(pages)


def main():
    problems = []
    if len(sys.argv) == 3 and sys.argv[1] == "--html":
        pages = check_html(pathlib.Path(sys.argv[2]), problems)
        if pages == 0:
            problems.append(f"no HTML pages in {sys.argv[2]}")
    else:
        for path in sorted(BOOK.glob("*.md")):
            check_links(path, problems)
        check_contents(problems)
        pages = len(list(BOOK.glob("*.md")))
    for p in problems:
        print(f"book: {p}")
    print(f"book: {pages} pages, {len(problems)} broken link(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
