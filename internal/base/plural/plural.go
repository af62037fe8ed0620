// Package plural makes a sentence's words agree with a count: "1 step",
// "2 steps", "1 range is", "3 ranges are". Every stage that writes
// sentences (warnings, errors, reports) uses it.
package plural

// Of is one when n is 1, else many.
func Of[N ~int | ~int64 | ~uint32](n N, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
