package nsys

import (
	"crypto/sha256"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/nsysphase/nsysphase/internal/base/budget"
)

// MaxNameBytes is the longest name read from an export (NVTX text,
// StringIds, process and GPU names) that is kept exact: budget.NameBytes,
// 1 MiB, far above any real name (cuDNN/CUTLASS template names reach
// 9 KB, and `info` must equal `nsys stats` on them). A longer one keeps its
// first bytes and a suffix with its length and hash, so that two long names
// stay two names while a 100 MB name costs 1 MiB. Text and Markdown show at
// most budget.DisplayNameBytes of a name (export.Options).
const MaxNameBytes = budget.NameBytes

// CleanName makes a string from an export safe to print and keeps distinct
// strings distinct: invalid UTF-8 bytes become \xNN (two different invalid
// bytes used to read as one U+FFFD), control characters (ESC, BEL, CR, LF,
// C1) and bidirectional overrides become \xNN or \uNNNN escapes, and a name
// longer than MaxNameBytes is cut with its length and hash appended. Clean
// names (every real one) are returned as they are, without a copy.
//
// A literal backslash is kept as it is, so a name that spells an escape
// ("a\x1bb" typed out) reads like the escaped control character.
func CleanName(s string) string { return cleanName(s, MaxNameBytes) }

// cleanName is CleanName with the bound max.
func cleanName(s string, max int) string {
	if len(s) <= max && isCleanName(s) {
		return s
	}
	var b strings.Builder
	rest := s
	for len(rest) > 0 {
		if b.Len() >= max {
			break
		}
		r, size := utf8.DecodeRuneInString(rest)
		switch {
		case r == utf8.RuneError && size <= 1:
			b.WriteString(`\x`)
			b.WriteString(hex2(rest[0]))
		case r < 0x80 && (r < 0x20 || r == 0x7f):
			b.WriteString(`\x`)
			b.WriteString(hex2(byte(r)))
		case unicode.IsControl(r) || isBidiControl(r) || r == 0x2028 || r == 0x2029:
			b.WriteString(`\u`)
			h := strconv.FormatInt(int64(r), 16)
			b.WriteString(strings.Repeat("0", 4-len(h)) + h)
		default:
			b.WriteString(rest[:size])
		}
		rest = rest[size:]
	}
	if len(rest) == 0 && b.Len() <= max {
		return b.String()
	}
	head := b.String()
	if len(head) > max {
		head = head[:max]
	}
	for !utf8.ValidString(head) { // an escape or rune cut in half
		head = head[:len(head)-1]
	}
	return head + budget.Suffix(s)
}

// longNames is an export's budget of long names (budget.LongNamesBytes):
// the names longer than budget.DisplayNameBytes are kept at up to
// MaxNameBytes until the budget is spent, then at DisplayNameBytes. Each
// distinct name is cleaned once, so a name reads the same in every scan.
type longNames struct {
	mu   sync.Mutex
	used int
	seen map[[32]byte]string
}

// cleanName is CleanName within the export's budget of long names.
func (f *File) cleanName(s string) string {
	if len(s) <= budget.DisplayNameBytes {
		return CleanName(s)
	}
	key := sha256.Sum256([]byte(s))
	ln := &f.longNames
	ln.mu.Lock()
	defer ln.mu.Unlock()
	if v, ok := ln.seen[key]; ok {
		return v
	}
	limit := MaxNameBytes
	if ln.used >= budget.LongNamesBytes {
		limit = budget.DisplayNameBytes
	}
	v := cleanName(s, limit)
	ln.used += len(v)
	if ln.seen == nil {
		ln.seen = map[[32]byte]string{}
	}
	ln.seen[key] = v
	return v
}

func isCleanName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == 0x7f {
			return false
		}
		if c >= 0x80 {
			// Rare: check the rest rune by rune.
			for _, r := range s[i:] {
				if r == utf8.RuneError || unicode.IsControl(r) || isBidiControl(r) || r == 0x2028 || r == 0x2029 {
					// RuneError may be a real U+FFFD: CleanName keeps it.
					return false
				}
			}
			return true
		}
	}
	return true
}

// isBidiControl reports the invisible characters that reorder text on
// screen (the "Trojan Source" characters).
func isBidiControl(r rune) bool {
	return (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) || r == 0x200e || r == 0x200f || r == 0x061c
}

func hex2(c byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[c>>4], digits[c&15]})
}
