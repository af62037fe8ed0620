package report

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestWriteIndentedMatchesEncoder: the streaming indenter writes exactly
// what json.Encoder with SetIndent("", "  ") writes, on documents with
// empty and nested containers and strings full of JSON punctuation,
// escapes, HTML and invalid UTF-8.
func TestWriteIndentedMatchesEncoder(t *testing.T) {
	for _, v := range []any{
		map[string]any{},
		[]any{},
		nil,
		"plain",
		3.25,
		map[string]any{"a": []any{}, "b": map[string]any{}, "c": []any{map[string]any{}, []any{[]any{}}, 1, "x"}},
		map[string]any{"s": "{[,:]}\"\\\\\\\"", "html": "<svg onload=x>&", "ctl": "\x1b]0;t\x07\n\t", "bad": "m\xffx", "uni": "ünï\u2028\u202e"},
		[]any{map[string]any{"k": []any{1, 2, 3}, "e": nil, "t": true, "f": false}, "\\", "\""},
	} {
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetIndent("", "  ")
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if err := writeIndented(&got, b); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Errorf("%#v:\ngot  %q\nwant %q", v, got.String(), want.String())
		}
	}
}
