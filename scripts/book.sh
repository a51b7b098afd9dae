#!/usr/bin/env bash
# Renders the book (book/*.md) to HTML with pandoc: build/book/index.html
# from book/README.md, and one page per chapter with its table of contents
# and links to the previous and next chapters in the order of the contents;
# the pictures of book/images are copied to build/book/images.
# Usage: scripts/book.sh [output folder]        (default: build/book)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${1:-$root/build/book}"
command -v pandoc > /dev/null || {
  echo "scripts/book.sh: pandoc is not installed (apt install pandoc, or scripts/dev.sh setup)" >&2
  exit 1
}
mkdir -p "$out/images"
cp "$root/scripts/book.css" "$out/book.css"
# The pictures the chapters show (book/images), beside the pages that link them.
cp "$root/book/images/"* "$out/images/"

# The chapters in the order book/README.md lists them.
mapfile -t chapters < <(grep -o '([0-9][0-9]-[^)#]*\.md)' "$root/book/README.md" | tr -d '()')

title_of() { sed -n '1s/^# //p' "$root/book/$1"; }

# Renders book/$1 to $out/$2 with the navigation line $3 above and below it.
render() {
  local source="$1" page="$2" navigation="$3" toc="$4"
  local nav_file
  nav_file="$(mktemp)"
  printf '<nav class="chapters">%s</nav>\n' "$navigation" > "$nav_file"
  pandoc "$root/book/$source" --from gfm --to html5 --standalone $toc \
    --lua-filter "$root/scripts/book_html.lua" --css book.css \
    --metadata pagetitle="$(title_of "$source" | sed 's/`//g')" \
    --include-before-body "$nav_file" --include-after-body "$nav_file" \
    --output "$out/$page"
  rm -f "$nav_file"
}

render README.md index.html '<a href="index.html">Contents</a>' ""
for i in "${!chapters[@]}"; do
  chapter="${chapters[$i]}"
  navigation='<a href="index.html">Contents</a>'
  if ((i > 0)); then
    previous="${chapters[$((i - 1))]}"
    navigation="<a rel=\"prev\" href=\"${previous%.md}.html\">← $(title_of "$previous" | sed 's/`//g')</a> · $navigation"
  fi
  if ((i + 1 < ${#chapters[@]})); then
    next="${chapters[$((i + 1))]}"
    navigation="$navigation · <a rel=\"next\" href=\"${next%.md}.html\">$(title_of "$next" | sed 's/`//g') →</a>"
  fi
  render "$chapter" "${chapter%.md}.html" "$navigation" "--toc --toc-depth=2"
done
echo "scripts/book.sh: $((${#chapters[@]} + 1)) pages in $out"
