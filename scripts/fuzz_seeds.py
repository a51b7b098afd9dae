#!/usr/bin/env python3
"""Seeds and dictionary for the fuzz targets (scripts/fuzz.sh).

Writes every complete kernel text the tests hold as a raw string literal
(R"(kernel @... }" with no {PLACEHOLDER} left to fill) to OUT/seeds/, one file
per kernel named by its content hash, and a libFuzzer dictionary OUT/ir.dict
of the text form's words: op names and attribute keys (ir/include/kiln/ir/ops.def),
attribute symbols (attribute_enums.hpp), dtypes and punctuation.
"""
import hashlib
import pathlib
import re
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


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: scripts/fuzz_seeds.py OUT_DIR")
    root = pathlib.Path(__file__).resolve().parent.parent
    out = pathlib.Path(sys.argv[1])
    seeds = out / "seeds"
    seeds.mkdir(parents=True, exist_ok=True)
    texts = set(complete_kernels(root))
    for text in texts:
        (seeds / hashlib.sha1(text.encode()).hexdigest()).write_text(text, encoding="utf-8")
    escape = lambda w: w.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\x0A")
    lines = [f'"{escape(w)}"' for w in dictionary_words(root)]
    (out / "ir.dict").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"fuzz_seeds: {len(texts)} distinct kernels from the tests in {seeds}, {len(lines)} words in {out / 'ir.dict'}")


if __name__ == "__main__":
    main()
