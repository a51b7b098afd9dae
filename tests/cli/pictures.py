#!/usr/bin/env python3
"""The kiln tool's SVG pictures (label `cli`): each is well-formed XML, draws
what it must, and renders to PNG with rsvg-convert (Debian: librsvg2-bin).

  pictures.py bench KILN OUT_DIR    kiln bench --suite all --svg: one bar per
                                    kernel and unfused sequence, times and
                                    ratios as the JSON lines of the same run say;
                                    with --compare, a second chart of a
                                    bench/compare GPU-half results file
  pictures.py layout KILN OUT_DIR   kiln dump --stage layout --svg: one cell per
                                    element, holders as the blocked layout
                                    rules place them
Writes the SVG and PNG files into OUT_DIR; exit 1 with a line per failure.
"""
import json
import pathlib
import re
import shutil
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET

SVG = "{http://www.w3.org/2000/svg}"
failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
    return condition


def run(command):
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        sys.exit(f"pictures.py: `{' '.join(map(str, command))}` exit {done.returncode}: {done.stderr.strip()}")
    return done.stdout


def titled_groups(root):
    """(title text, group element) of every <g> with a <title>."""
    for group in root.iter(SVG + "g"):
        title = group.find(SVG + "title")
        if title is not None:
            yield title.text, group


def texts(element):
    return [t.text for t in element.iter(SVG + "text")]


def render(svg_path):
    """Renders the SVG to PNG beside it; checks the PNG's signature and size."""
    converter = shutil.which("rsvg-convert")
    if not check(converter is not None, "rsvg-convert is not installed (Debian package librsvg2-bin)"):
        return
    png = svg_path.with_suffix(".png")
    run([converter, svg_path, "-o", png])
    data = png.read_bytes()
    if check(data[:8] == b"\x89PNG\r\n\x1a\n", f"{png} is not a PNG"):
        width, height = struct.unpack(">II", data[16:24])
        root = ET.parse(svg_path).getroot()
        check((width, height) == (int(root.get("width")), int(root.get("height"))),
              f"{png} is {width}x{height}, the SVG says {root.get('width')}x{root.get('height')}")


def bench(kiln, out):
    svg = out / "bench.svg"
    lines = [json.loads(line) for line in run([kiln, "bench", "--suite", "all", "--device", "cpu", "--json",
                                               "--svg", svg]).splitlines()]
    expected = []  # (bar name, seconds, fused kernel and ratio or None)
    for line in lines:
        expected.append((line["kernel"], line["time_s"], None))
        if "unfused" in line:
            expected.append((line["unfused"]["kernel"], line["unfused"]["time_s"], (line["kernel"], line["speedup"])))
    root = ET.parse(svg).getroot()
    bar = re.compile(r"^(\S+): ([0-9.]+) (s|ms|us) per launch$")
    bars = [(bar.match(title), group) for title, group in titled_groups(root) if bar.match(title or "")]
    check(len(bars) == len(expected), f"{len(bars)} bars for {len(expected)} kernels and unfused sequences")
    scale = {"s": 1, "ms": 1e-3, "us": 1e-6}
    for (match, group), (name, seconds, ratio) in zip(bars, expected):
        check(match.group(1) == name, f"bar '{match.group(1)}' where kernel {name} was timed")
        drawn = float(match.group(2)) * scale[match.group(3)]
        check(abs(drawn - seconds) <= 0.006 * seconds, f"bar {name}: {drawn} s drawn, {seconds} s timed")
        check(len(group.findall(SVG + "rect")) == 1, f"bar {name}: not one rectangle")
        if ratio:
            note = f"({ratio[1]:.2f}x the time of {ratio[0]})"
            check(any(note in t for t in texts(group)), f"bar {name}: no ratio note '{note}'")
    labels = " ".join(texts(root))
    check("time per launch (" in labels, "the time axis has no label with its unit")
    check("kiln kernel" in labels and "its unfused sequence" in labels, "the legend names no series")
    for line in lines:
        check(f"{line['kernel']} {line['dtype']}" in labels, f"no label for kernel {line['kernel']}")
    render(svg)
    compare(kiln, out)


def compare(kiln, out):
    """--compare: a file in the format bench/compare/gpu_half.py writes (its
    times made up here to check the drawing; they are no measurement), one
    case without a kiln time."""
    results = {"device": "Test GPU", "skipped": [], "results": [
        {"case": "softmax.8192x4096.bf16", "kernel": "softmax", "kiln": {"ms": 0.25},
         "triton": {"ms": 0.2, "back_to_back_ms": 0.19}, "torch": {"ms": 0.5, "back_to_back_ms": 0.45}},
        {"case": "matmul.4096.bf16", "kernel": "matmul", "kiln": {"error": "exit 1"},
         "triton": {"ms": 1.0}, "torch": {"ms": 1.1}},
        {"case": "attention.d64", "kernel": "attention", "kiln": {"ms": 3.0},
         "triton": {"ms": 2.0}, "torch": {"ms": 6.0}}]}
    results_file = out / "compare.json"
    results_file.write_text(json.dumps(results))
    svg = out / "bench_compare.svg"
    run([kiln, "bench", "--suite", "fusion", "--device", "cpu", "--svg", svg, "--compare", results_file])
    root = ET.parse(svg).getroot()
    labels = " ".join(texts(root))
    check("bench/compare on Test GPU: kiln, Triton and torch" in labels, "compare: no chart title naming the GPU")
    check("1 case without a kiln time left out" in labels, "compare: the case without a kiln time is not named")
    check("matmul.4096.bf16" not in labels, "compare: the case without a kiln time is drawn")
    bar = re.compile(r"^(kiln|Triton|torch): ([0-9.]+) (ms|us) per launch$")
    bars = [(m.group(1), float(m.group(2)), group) for title, group in titled_groups(root)
            for m in [bar.match(title or "")] if m]
    check([b[:2] for b in bars] == [("kiln", 0.25), ("Triton", 0.2), ("torch", 0.5), ("kiln", 3.0), ("Triton", 2.0),
                                    ("torch", 6.0)], f"compare: bars {[b[:2] for b in bars]}")
    for name, note in (("Triton", "(0.80x the time of kiln)"), ("torch", "(2.00x the time of kiln)")):
        check(any(note in t for n, _, g in bars[:3] if n == name for t in texts(g)), f"compare: no note '{note}'")
    check("attention.d64" in labels and "softmax.8192x4096.bf16" in labels, "compare: a case label is missing")
    render(svg)


def cells(root):
    """{element coordinates: [(warp, lane, register), ...]} and each cell's two text lines."""
    element = re.compile(r"^element \(([0-9,]+)\):(.*)$")
    holder = re.compile(r" warp (\d+) lane (\d+) register (\d+);")
    found = {}
    for title, group in titled_groups(root):
        match = element.match(title or "")
        if match:
            coords = tuple(int(c) for c in match.group(1).split(","))
            check(coords not in found, f"element {coords} drawn twice")
            found[coords] = ([tuple(map(int, h)) for h in holder.findall(match.group(2))], texts(group))
    return found


def check_tile(kiln, out, name, command, expected_cells, holders_of):
    svg = out / f"{name}.svg"
    run([kiln, *command, "--stage", "layout", "--svg", svg])
    drawn = cells(ET.parse(svg).getroot())
    check(sorted(drawn) == sorted(expected_cells), f"{name}: {len(drawn)} cells drawn, {len(expected_cells)} expected")
    for coords in expected_cells:
        if coords not in drawn:
            continue
        holders, lines = drawn[coords]
        want = holders_of(*coords)
        check(sorted(holders) == sorted(want), f"{name}: element {coords} held by {holders}, the rules say {want}")
        w, l, r = min(want)
        copies = f" +{len(want) - 1}" if len(want) > 1 else ""
        check(lines == [f"w{w} l{l}", f"r{r}{copies}"], f"{name}: element {coords} reads {lines}")
    render(svg)
    return svg


def layout(kiln, out):
    # rms_norm's row tile for 3 columns: 256 elements, 1 warp, 1 element per
    # thread per repetition (3 floats allow no vector access): element e is
    # in lane e % 32, register e // 32.
    check_tile(kiln, out, "layout_rms_norm", ["dump", "rms_norm", "--m", "5", "--n", "3"],
               [(e,) for e in range(256)], lambda e: [(0, e % 32, e // 32)])
    # vector_add's tile (the first the dump lists, the arange): 1024 elements,
    # 4 warps, 4 consecutive elements per thread (16-byte accesses): lanes
    # then warps take the next 4, and the pattern of 512 repeats in registers 4-7.
    check_tile(kiln, out, "layout_vector_add", ["dump", "vector_add"], [(e,) for e in range(1024)],
               lambda e: [((e // 128) % 4, (e // 4) % 32, e % 4 + 4 * (e // 512))])
    # matmul's 64 x 32 tile of f32 (a bias slice) in sm_80's configuration:
    # the kernel's 2-D blocked layout is sized by its 64 x 64 tiles, 4 columns per thread, 16 lanes
    # along a row and 2 rows per warp, the 4 warps below each other and
    # registers repeating every 8 rows. Lanes l and l + 8 then hold the same
    # columns of a 32-wide tile: two holders per element. 32 x 32 cells drawn.
    dump = run([kiln, "dump", "matmul", "--stage", "layout", "--arch", "sm_80"])
    ids = re.findall(r"^%(\d+) : tile<64x32xf32>$", dump, re.M)
    if check(ids, "matmul has no tile<64x32xf32> in its layout dump"):
        def holders(row, col):
            lane = (row % 2) * 16 + (col % 32) // 4
            reg = col % 4 + 4 * (row // 8)
            return [((row // 2) % 4, lane, reg), ((row // 2) % 4, lane + 8, reg)]
        svg = check_tile(kiln, out, "layout_matmul", ["dump", "matmul", "--arch", "sm_80", "--value", f"%{ids[0]}"],
                         [(r, c) for r in range(32) for c in range(32)], holders)
        title = ET.parse(svg).getroot().find(SVG + "title").text
        check(title.startswith(f"%{ids[0]} : tile<64x32xf32> in matmul"), f"layout_matmul: title '{title}'")
        check("32 of 64 rows" in " ".join(texts(ET.parse(svg).getroot())), "layout_matmul: the cap is not named")


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in ("bench", "layout"):
        sys.exit(__doc__)
    out = pathlib.Path(sys.argv[3])
    out.mkdir(parents=True, exist_ok=True)
    {"bench": bench, "layout": layout}[sys.argv[1]](sys.argv[2], out)
    for failure in failures:
        print(f"pictures.py {sys.argv[1]}: {failure}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
