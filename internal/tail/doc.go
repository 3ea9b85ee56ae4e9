// Package tail reads the complete new lines of a growing file exactly once.
//
// A transcript file is identified by its (device, inode) and a fingerprint
// of its first bytes, never by its path: the caller keeps a Position per
// file and hands it back to Read, which delivers the lines written since and
// returns the new Position. The caller stores that Position in the same
// transaction as whatever it made of the lines, so a crash at any moment
// neither loses nor repeats a line.
//
// Rules Read follows:
//
//   - Only complete lines are consumed: Offset always sits just past a '\n'
//     (or at 0). A last line still being written is left for a later Read.
//   - A file replaced at the same path (new device or inode), truncated
//     below Offset, or rewritten in place (its first bytes changed) is read
//     again from offset 0, and Result.Restart says why.
//   - Lines longer than Options.MaxLine are skipped without holding them in
//     memory and counted; so are lines holding NUL bytes (JSON text never
//     does). Blank lines are skipped silently. Trailing "\r"s are dropped.
//   - A file that no longer exists gives an error wrapping os.ErrNotExist,
//     so the caller can drop it.
//
// The package knows nothing of transcript formats or storage.
package tail
