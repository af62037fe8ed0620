// Package diag holds the pipeline's one diagnostic type, Warning: an
// oddity that does not stop an analysis, reported by every stage (nsys,
// phases, stats, the analysis) with its scope. It is a leaf: every stage
// imports it and it imports nothing of the pipeline, so the statistics do
// not pull in the SQLite reader to speak.
package diag

import "fmt"

// Warning is one diagnostic that does not stop an analysis: an oddity of an
// input (nsys), of its segmentation (phases) or of the statistics (stats),
// with its scope. Every stage reports this one type, so a JSON consumer
// filters by Code and scope whatever stage spoke.
//
// Message is the whole sentence a person reads, naming the file when there
// is one; the other fields repeat its scope for programs.
type Warning struct {
	Code    string             `json:"code"` // a warning code, listed in docs/schema.md
	File    string             `json:"file,omitempty"`
	Phase   string             `json:"phase,omitempty"`
	Arm     string             `json:"arm,omitempty"`
	Metric  string             `json:"metric,omitempty"`
	Message string             `json:"message"`
	Values  map[string]float64 `json:"values,omitempty"` // the numbers behind the message, when useful
}

func (w Warning) Error() string  { return w.Message }
func (w Warning) String() string { return w.Message }

// Messages returns the messages of ws, in order.
func Messages(ws []Warning) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.Message
	}
	return out
}

// FileWarning is a warning about file: its message starts with the file's
// name, as every input diagnostic does.
func FileWarning(code, file, format string, args ...any) Warning {
	return Warning{Code: code, File: file, Message: file + ": " + fmt.Sprintf(format, args...)}
}
