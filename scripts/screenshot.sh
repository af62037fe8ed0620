#!/usr/bin/env bash
# Pictures of nsysphase's output as a person sees it, for docs/guide.md:
#
#   scripts/screenshot.sh                      # all three below
#   scripts/screenshot.sh terminal             # docs/img/terminal.png: default output in a 120×50 tmux pane
#   scripts/screenshot.sh markdown             # docs/img/markdown.png: --format md rendered like a PR comment, 900 px
#   scripts/screenshot.sh report               # docs/img/report.png: the HTML report
#   scripts/screenshot.sh report.html out.png  # screenshot an existing HTML page
#
# All from testdata/nsys-2025.3-h200/interleaved_graph.sqlite.xz. Needs tmux,
# aha and chromium (apt-get install -y tmux aha chromium); pngquant, when
# installed, shrinks the PNGs. Chromium runs headless with no network and no
# profile: each page renders from its file alone.
set -euo pipefail
cd "$(dirname "$0")/.."

fixture=testdata/nsys-2025.3-h200/interleaved_graph.sqlite.xz
tmp=$(mktemp -d)
trap 'tmux -L "nsysphase-shot-$$" kill-server 2>/dev/null || true; rm -rf "$tmp"' EXIT

need() { command -v "$1" >/dev/null || { echo "screenshot.sh: $1 not found (apt-get install -y $1)" >&2; exit 2; }; }

# shoot HTML PNG WIDTH HEIGHT: headless Chromium screenshot of a page.
shoot() {
	need chromium
	chromium --headless --no-sandbox --disable-gpu --disable-background-networking \
		--disable-component-update --disable-sync --hide-scrollbars \
		--user-data-dir="$tmp/profile" --window-size="$3,$4" \
		--screenshot="$tmp/shot.png" "file://$(realpath "$1")" 2>/dev/null
	mkdir -p "$(dirname "$2")"
	if command -v pngquant >/dev/null; then
		pngquant --force --quality=80-100 --strip --output "$2" "$tmp/shot.png"
	else
		cp "$tmp/shot.png" "$2"
	fi
	echo "$2: $(wc -c <"$2") bytes"
}

build() {
	[[ -x "$tmp/nsysphase" ]] || go build -o "$tmp/nsysphase" ./cmd/nsysphase
}

# terminal: run the default analyze in a real 120×50 terminal (tmux), keep its
# colours (capture-pane -e) and the rows scrolled off the top (-S -), turn
# them into HTML (aha) and picture that.
terminal() {
	need tmux
	need aha
	build
	local session="nsysphase-shot-$$"
	# A private tmux server, and scroll-on-clear off: tmux 3.3 otherwise
	# pushes each redraw of the progress bars (cursor up, erase below) into
	# the history that -S - captures, which no terminal shows.
	printf 'set -g scroll-on-clear off\nset -g history-limit 10000\n' >"$tmp/tmux.conf"
	local tm=(tmux -L "$session" -f "$tmp/tmux.conf")
	# The command runs under its display name, as a user would type it.
	mkdir -p "$tmp/bin" && ln -sf "$tmp/nsysphase" "$tmp/bin/nsysphase"
	"${tm[@]}" new-session -d -s "$session" -x 120 -y 50 \
		"echo \"\$ nsysphase analyze $fixture\"; PATH=$tmp/bin:\$PATH TERM=xterm-256color nsysphase analyze $fixture; tmux -L $session wait-for -S done; sleep 30"
	"${tm[@]}" wait-for done
	"${tm[@]}" capture-pane -p -e -S - -t "$session" >"$tmp/term.ansi"
	"${tm[@]}" kill-server
	# Drop the blank rows below the output.
	sed -e :a -e '/^\n*$/{$d;N;ba' -e '}' "$tmp/term.ansi" | sed '/./,$!d' >"$tmp/term.trim"
	local rows
	rows=$(wc -l <"$tmp/term.trim")
	{
		echo '<!doctype html><html><head><meta charset="utf-8"><style>'
		echo 'body{margin:0;background:#1e1e1e}pre{margin:0;padding:12px 14px;color:#d4d4d4;'
		echo 'font:14px/18px "DejaVu Sans Mono",monospace;white-space:pre}</style></head><body><pre>'
		aha --no-header <"$tmp/term.trim"
		echo '</pre></body></html>'
	} >"$tmp/term.html"
	# 120 columns of DejaVu Sans Mono 14px are 1012 px; 18 px a row.
	shoot "$tmp/term.html" docs/img/terminal.png 1040 $((rows * 18 + 24))
}

# markdown: the PR-comment output through a GitHub-flavoured renderer
# (goldmark, GFM) with GitHub-like CSS, 900 px wide as a comment column is;
# the <details> stay closed, as a reviewer first sees them.
markdown() {
	build
	"$tmp/nsysphase" analyze --format md "$fixture" >"$tmp/out.md"
	go run ./scripts/mdhtml <"$tmp/out.md" >"$tmp/md.html"
	shoot "$tmp/md.html" docs/img/markdown.png 900 "${MD_HEIGHT:-440}"
}

report() {
	build
	"$tmp/nsysphase" analyze --format html -o "$tmp/report.html" "$fixture"
	shoot "$tmp/report.html" docs/img/report.png "${WIDTH:-1400}" "${HEIGHT:-2400}"
}

case "${1:-all}" in
all) terminal; markdown; report ;;
terminal) terminal ;;
markdown) markdown ;;
report) report ;;
*.html) shoot "$1" "${2:-docs/img/report.png}" "${WIDTH:-1400}" "${HEIGHT:-2400}" ;;
*) echo "usage: scripts/screenshot.sh [all|terminal|markdown|report|PAGE.html [OUT.png]]" >&2; exit 2 ;;
esac
