#!/usr/bin/env bash
# Render the HTML report of a bundled export and screenshot it with headless
# Chromium, to look at the page as a person would (and refresh
# docs/img/report.png).
#
#   scripts/screenshot.sh                      # docs/img/report.png from interleaved_graph
#   scripts/screenshot.sh report.html out.png  # screenshot an existing report
#
# Needs chromium (apt-get install -y chromium); pngquant, when installed,
# shrinks the PNG. WIDTH and HEIGHT set the window (default 1400×2400).
set -euo pipefail
cd "$(dirname "$0")/.."

html=${1:-}
png=${2:-docs/img/report.png}
width=${WIDTH:-1400}
height=${HEIGHT:-2400}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [[ -z "$html" ]]; then
	html=$tmp/report.html
	go run ./cmd/nsysphase analyze --format html -o "$html" testdata/nsys-2025.3-h200/interleaved_graph.sqlite.xz
fi
command -v chromium >/dev/null || { echo "screenshot.sh: chromium not found (apt-get install -y chromium)" >&2; exit 2; }

# No network, no profile, no GPU: the page must render from the file alone.
chromium --headless --no-sandbox --disable-gpu --disable-background-networking \
	--disable-component-update --disable-sync --hide-scrollbars \
	--user-data-dir="$tmp/profile" --window-size="$width,$height" \
	--screenshot="$tmp/shot.png" "file://$(realpath "$html")" 2>/dev/null

mkdir -p "$(dirname "$png")"
if command -v pngquant >/dev/null; then
	pngquant --force --quality=90-100 --strip --output "$png" "$tmp/shot.png"
else
	cp "$tmp/shot.png" "$png"
fi
echo "$png: $(wc -c <"$png") bytes"
