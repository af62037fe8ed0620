// Package xzshare lets a test process share one decompressed copy of each
// fixture .sqlite.xz among all its nsys.Open calls. Decompressing in pure Go
// is most of the CPU time of the command tests, which open the same few
// bundled fixtures hundreds of times. The program never sets the hook: there
// every Open of an .xz decompresses into a private copy that Close removes.
package xzshare

// Decompressed, when set (by internal/fixture.ShareDecompressed, before any
// test runs), returns the path of a shared, already decompressed copy of the
// .xz file at path, or ok=false to decompress as usual.
var Decompressed func(path string) (disk string, ok bool)
