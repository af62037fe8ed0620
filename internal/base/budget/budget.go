// Package budget declares, in one place, how much of an untrusted input
// nsysphase keeps: the bytes of one name, of all long names of an export,
// of a name on screen, the arms of an analysis, and the output of a
// subprocess (nsys export). Every stage that bounds one of these reads its
// limit here, so the limits agree and docs/robustness.md can state them once.
package budget

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"unicode/utf8"
)

const (
	// NameBytes is the longest name (NVTX text, kernel, thread, process)
	// kept exact in every machine format (JSON, CSV, Parquet, Arrow): far
	// above any real one (cuDNN/CUTLASS template names reach 9 KB), so
	// that `info` equals `nsys stats`. A longer name keeps its first
	// NameBytes and a suffix with its length and hash (Shorten).
	NameBytes = 1 << 20

	// LongNamesBytes bounds, per export and table, the bytes of names
	// longer than DisplayNameBytes kept at up to NameBytes: past it, a long
	// name keeps DisplayNameBytes. A million distinct 1 MiB names would
	// otherwise cost a terabyte.
	LongNamesBytes = 64 << 20

	// DisplayNameBytes is the most of a name that text and Markdown show
	// in a table cell: longer names are shortened for display only, with
	// their length and hash, so that two long names still read as two.
	DisplayNameBytes = 4096

	// OSNameBytes is the longest thread or process name kept, in every
	// format: Linux thread names are at most 15 bytes and process names are
	// paths (PATH_MAX is 4096), so no real one is cut. Every thread of an
	// export is listed with its name (info): a 1 MiB name given to each of
	// hundreds of threads would otherwise repeat into hundreds of MB of
	// output, which the per-name budget above cannot see.
	OSNameBytes = 4096

	// Arms bounds the arms of an analysis: each costs a summary and a
	// comparison per phase. Beyond it, the arms that start first (and the
	// baseline) are kept and the rest become one arm, with a warning.
	Arms = 64

	// SubprocessOutputBytes is how much of a subprocess's output (nsys
	// export) is kept: its last bytes, for the error message.
	SubprocessOutputBytes = 16 << 10
)

// Shorten returns s when it has at most max bytes; else its first bytes
// (whole runes) and "…[N bytes, sha256 H]", H the first 12 hex digits of
// the hash of all of s.
func Shorten(s string, max int) string {
	if len(s) <= max {
		return s
	}
	i := max
	for i > 0 && i > max-utf8.UTFMax && !utf8.RuneStart(s[i]) { // a rune cut in half
		i--
	}
	return s[:i] + Suffix(s)
}

// Suffix is what Shorten appends: the length and hash of the whole name.
func Suffix(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "…[" + strconv.Itoa(len(s)) + " bytes, sha256 " + hex.EncodeToString(sum[:6]) + "]"
}
