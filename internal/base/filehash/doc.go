// Package filehash computes the SHA-256 of input files, and remembers each
// sum under the file's identity so that analysing an unchanged export again
// does not read it again.
//
// The identity is what git's index trusts: device, inode, size, and the
// modification and change times in nanoseconds. Any write to the file
// changes its change time (which no user call can set back), and a copy is
// a new inode, so a remembered sum is never served for other contents. A
// sum is remembered only when the file did not change while it was read,
// and only once its last change is two seconds old: a write within the
// same timestamp tick as the hashing could otherwise go unseen (git's
// "racy clean" problem). Sums live in os.UserCacheDir()/nsysphase/sha256,
// one small file each; without a usable cache directory every sum is
// computed.
package filehash
