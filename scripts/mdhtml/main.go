// Command mdhtml renders Markdown on stdin as a GitHub-flavoured HTML page on
// stdout (goldmark with GFM, raw HTML such as <details> kept, CSS close to
// GitHub's), so scripts/screenshot.sh can picture a PR comment.
package main

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/renderer/html"
)

const css = `body{font-family:-apple-system,BlinkMacSystemFont,"Segoe UI","Noto Sans",Helvetica,Arial,sans-serif;
font-size:14px;line-height:1.5;color:#1f2328;background:#fff;margin:0;padding:16px 24px;}
h1,h2,h3{font-weight:600;margin:16px 0 8px;line-height:1.25}h2{font-size:1.5em;border-bottom:1px solid #d1d9e0;padding-bottom:.3em}
h3{font-size:1.25em}p,ul,ol,table,details{margin:0 0 12px}
code{font-family:ui-monospace,SFMono-Regular,"DejaVu Sans Mono",Menlo,monospace;font-size:85%;background:#eff1f3;border-radius:6px;padding:.2em .4em}
pre{background:#f6f8fa;border-radius:6px;padding:12px;overflow:auto}pre code{background:none;padding:0}
table{border-collapse:collapse;display:block;max-width:100%;overflow:auto}
th,td{border:1px solid #d1d9e0;padding:6px 13px}th{font-weight:600}tr:nth-child(2n){background:#f6f8fa}
summary{cursor:pointer;font-weight:500}`

func main() {
	src, err := io.ReadAll(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "mdhtml:", err)
		os.Exit(1)
	}
	md := goldmark.New(goldmark.WithExtensions(extension.GFM), goldmark.WithRendererOptions(html.WithUnsafe()))
	var body bytes.Buffer
	if err := md.Convert(src, &body); err != nil {
		fmt.Fprintln(os.Stderr, "mdhtml:", err)
		os.Exit(1)
	}
	fmt.Printf("<!doctype html><html><head><meta charset=\"utf-8\"><style>%s</style></head><body>\n%s</body></html>\n", css, body.Bytes())
}
