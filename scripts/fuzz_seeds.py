#!/usr/bin/env python3
"""Seeds and dictionaries for the fuzz targets (scripts/fuzz.sh).

For the IR targets: every complete kernel text the tests hold as a raw string
literal (R"(kernel @... }" with no {PLACEHOLDER} left to fill) in OUT/seeds/ir/,
and a libFuzzer dictionary OUT/ir.dict of the text form's words: op names and
attribute keys (ir/include/kiln/ir/ops.def), attribute symbols
(attribute_enums.hpp), dtypes and punctuation.

For cli_args_fuzz: every kiln command line of the cli tests (tests/cli/cli.cmake)
and of the book, its words joined by NUL bytes, in OUT/seeds/cli/, and a
dictionary OUT/cli.dict of the short string literals of the command line's
sources (subcommands, options, kernel, dim and choice names, choice values,
dtypes, stages, archs, devices), each name also as --name.
Each seed file is named by its content hash.
"""
import hashlib
import pathlib
import re
import shlex
import sys

RAW_STRING = re.compile(r'R"\((.*?)\)"', re.S)
PLACEHOLDER = re.compile(r"\{[A-Z][A-Za-z0-9_]*\}")
OP_ROW = re.compile(r'^KILN_OP\(\s*\w+,\s*"(\w+)",[^"]*"([^"]*)"', re.M)
SYMBOLS = re.compile(r"symbols = \{([^}]*)\}")
KEYS = re.compile(r'key = "(\w+)"')
DTYPES = "i1 i8 i16 i32 i64 u8 u16 u32 u64 f16 bf16 f32 f64 f8e4m3 f8e5m2".split()
TEXT_WORDS = [
    "kernel @", "tile<", "ptr<", "loc(", "^(", "):", " = ", " : ", "x", "%", "{", "}", "[", "]", "\n",
    "divisibility", "equal_to", "inf", "-inf", "nan", "1.5e-07", "-1", "0x", "\\\"",
]


def complete_kernels(root):
    for path in sorted((root / "tests").rglob("*")):
        if path.suffix not in (".cpp", ".hpp", ".cmake"):
            continue
        for match in RAW_STRING.finditer(path.read_text(encoding="utf-8")):
            text = match.group(1)
            stripped = text.strip()
            if stripped.startswith("kernel @") and stripped.endswith("}") and not PLACEHOLDER.search(text):
                yield text


def dictionary_words(root):
    ops = (root / "ir/include/kiln/ir/ops.def").read_text(encoding="utf-8")
    enums = (root / "ir/include/kiln/ir/attribute_enums.hpp").read_text(encoding="utf-8")
    words = set(DTYPES) | set(TEXT_WORDS) | set(KEYS.findall(enums))
    for name, attributes in OP_ROW.findall(ops):
        words.add(name)
        words.update(attributes.split())
    for symbols in SYMBOLS.findall(enums):
        words.update(s.strip().strip('"') for s in symbols.split(","))
    return sorted(w for w in words if w)


CLI_SOURCES = ["examples/kiln/arguments.cpp", "kernels/src/kernel_catalog.cpp", "runtime/src/device.cpp"]
SHORT_LITERAL = re.compile(r'"([A-Za-z0-9_.:+-]{1,24})"')
NAME = re.compile(r"[a-z][a-z0-9_]*")
BOOK_COMMAND = re.compile(r"\bkiln\s+((?:run|dump|bench|list|info)\b[^`|>\n]*)")
CMAKE_TOKEN = re.compile(r'"((?:[^"\\]|\\.)*)"|([^\s()"]+)|(\))')


def cli_test_commands(root):
    """The arguments of each kiln_cli_test(NAME EXIT_CODE PATTERN ARGS...) call."""
    text = (root / "tests/cli/cli.cmake").read_text(encoding="utf-8")
    for call in re.finditer(r"^kiln_cli_test\(", text, re.M):
        tokens = []
        for token in CMAKE_TOKEN.finditer(text, call.end()):
            quoted, bare, close = token.groups()
            if close:
                break
            tokens.append(quoted if quoted is not None else bare)
        yield tokens[3:]


def book_commands(root):
    for path in sorted((root / "book").glob("*.md")):
        for match in BOOK_COMMAND.finditer(path.read_text(encoding="utf-8")):
            try:
                # "... --n 4096 2>&1 | grep": the match ends before ">".
                yield shlex.split(re.sub(r"\s2$", "", match.group(1).rstrip()))
            except ValueError:  # an unbalanced quote in prose
                continue


def cli_dictionary_words(root):
    words = {"\0", "--", "=", ":", "-h", "--help", "--version"}
    for source in CLI_SOURCES:
        for literal in SHORT_LITERAL.findall((root / source).read_text(encoding="utf-8")):
            words.add(literal)
            if NAME.fullmatch(literal):
                words.add("--" + literal)
    return sorted(words)


def write_seeds(directory, texts):
    directory.mkdir(parents=True, exist_ok=True)
    for text in texts:
        (directory / hashlib.sha1(text.encode()).hexdigest()).write_text(text, encoding="utf-8")


def write_dictionary(path, words):
    escape = lambda w: w.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\x0A").replace("\0", "\\x00")
    path.write_text("".join(f'"{escape(w)}"\n' for w in words), encoding="utf-8")
    return len(words)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: scripts/fuzz_seeds.py OUT_DIR")
    root = pathlib.Path(__file__).resolve().parent.parent
    out = pathlib.Path(sys.argv[1])
    kernels = set(complete_kernels(root))
    write_seeds(out / "seeds/ir", kernels)
    ir_words = write_dictionary(out / "ir.dict", dictionary_words(root))
    print(f"fuzz_seeds: {len(kernels)} distinct kernels from the tests in {out / 'seeds/ir'}, "
          f"{ir_words} words in {out / 'ir.dict'}")
    command_lines = {"\0".join(words) for words in [*cli_test_commands(root), *book_commands(root)]}
    write_seeds(out / "seeds/cli", command_lines)
    cli_words = write_dictionary(out / "cli.dict", cli_dictionary_words(root))
    print(f"fuzz_seeds: {len(command_lines)} distinct command lines from the cli tests and the book in "
          f"{out / 'seeds/cli'}, {cli_words} words in {out / 'cli.dict'}")


if __name__ == "__main__":
    main()
