package nsys

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxNameBytes bounds a name read from an export (NVTX text, StringIds,
// process and GPU names): a longer one keeps its first bytes and a suffix
// with its length and hash, so that two long names stay two names while a
// 100 MB name costs 4 KiB in every output (the longest name in the bundled
// exports is 1397 bytes).
const MaxNameBytes = 4096

// CleanName makes a string from an export safe to print and keeps distinct
// strings distinct: invalid UTF-8 bytes become \xNN (two different invalid
// bytes used to read as one U+FFFD), control characters (ESC, BEL, CR, LF,
// C1) and bidirectional overrides become \xNN or \uNNNN escapes, and a name
// longer than MaxNameBytes is cut with its length and hash appended. Clean
// names (every real one) are returned as they are, without a copy.
//
// A literal backslash is kept as it is, so a name that spells an escape
// ("a\x1bb" typed out) reads like the escaped control character.
func CleanName(s string) string {
	if isCleanName(s) {
		return s
	}
	var b strings.Builder
	rest := s
	for len(rest) > 0 {
		if b.Len() >= MaxNameBytes {
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
	if len(rest) == 0 && b.Len() <= MaxNameBytes {
		return b.String()
	}
	sum := sha256.Sum256([]byte(s))
	head := b.String()
	if len(head) > MaxNameBytes {
		head = head[:MaxNameBytes]
	}
	for !utf8.ValidString(head) { // an escape or rune cut in half
		head = head[:len(head)-1]
	}
	return head + "…[" + strconv.Itoa(len(s)) + " bytes, sha256 " + hex.EncodeToString(sum[:6]) + "]"
}

func isCleanName(s string) bool {
	if len(s) > MaxNameBytes {
		return false
	}
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
