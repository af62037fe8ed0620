//go:build !unix

package cli_test

import "testing"

// makeFIFO returns "": no named pipes here.
func makeFIFO(t *testing.T, path string) string { return "" }
