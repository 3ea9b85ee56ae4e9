// Package shasum computes SHA-256 (FIPS 180-4) for what Medallion names
// by a hash: the ids of transcript events and the fingerprints of
// forgotten items. They are names, not secrets, and must stay the very
// SHA-256 digests they always were (stored ids and fingerprints are
// compared with new ones).
//
// It exists so that medallionctl, which links internal/transcript and
// internal/medallion for their types (and computes a fingerprint in diff),
// does not link crypto/sha256: that package brings Go's FIPS 140 module,
// two dozen packages whose initialisation and pages every process of
// medallionctl paid for, the SessionStart hook before every agent session
// included (issue 12). Its own code is plain Go, five to seven times as
// slow as crypto/sha256 where the CPU has SHA instructions; a binary that
// links crypto/sha256 anyway, as the daemon does, hands that one over
// (Use), so that parsing transcripts, which hashes every message's text,
// keeps its speed.
package shasum

import (
	"encoding/binary"
	"math/bits"
)

// Size is the length of a digest in bytes.
const Size = 32

// blockSize is the length of the blocks the message is processed in.
const blockSize = 64

// initial is the hash value before the first block (FIPS 180-4, 5.3.3).
var initial = [8]uint32{0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19}

// k are the round constants (FIPS 180-4, 4.2.2).
var k = [64]uint32{
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
	0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
	0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
	0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
	0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
}

// Sum256 returns the SHA-256 digest of data, as crypto/sha256.Sum256 does.
func Sum256(data []byte) [Size]byte { return sum256(data) }

// sum256 computes Sum256: plainSum256 unless Use was called.
var sum256 = plainSum256

// Use makes Sum256 compute with f, which must be SHA-256 itself
// (crypto/sha256.Sum256). Call it from an init function, before any
// goroutine hashes.
func Use(f func([]byte) [Size]byte) { sum256, handed = f, true }

// handed is whether Use was called.
var handed bool

// Handed reports whether Use handed Sum256 another function: a binary
// that hashes much (the daemon, through internal/ingest) checks in a test
// that it does not hash with the plain Go.
func Handed() bool { return handed }

// plainSum256 is SHA-256 in plain Go.
func plainSum256(data []byte) [Size]byte {
	h := initial
	whole := len(data) &^ (blockSize - 1)
	blocks(&h, data[:whole])
	// The padding (FIPS 180-4, 5.1.1): a 1 bit, zeros, and the message's
	// length in bits in the last 8 bytes, in one block or two.
	var last [2 * blockSize]byte
	n := copy(last[:], data[whole:])
	last[n] = 0x80
	end := blockSize
	if n >= blockSize-8 {
		end = 2 * blockSize
	}
	binary.BigEndian.PutUint64(last[end-8:end], uint64(len(data))<<3)
	blocks(&h, last[:end])
	var sum [Size]byte
	for i, v := range h {
		binary.BigEndian.PutUint32(sum[4*i:], v)
	}
	return sum
}

// blocks hashes p, a whole number of blocks, into h (FIPS 180-4, 6.2.2).
func blocks(h *[8]uint32, p []byte) {
	var w [64]uint32
	for ; len(p) >= blockSize; p = p[blockSize:] {
		for i := range 16 {
			w[i] = binary.BigEndian.Uint32(p[4*i:])
		}
		for i := 16; i < 64; i++ {
			v1, v2 := w[i-2], w[i-15]
			s1 := bits.RotateLeft32(v1, -17) ^ bits.RotateLeft32(v1, -19) ^ v1>>10
			s0 := bits.RotateLeft32(v2, -7) ^ bits.RotateLeft32(v2, -18) ^ v2>>3
			w[i] = s1 + w[i-7] + s0 + w[i-16]
		}
		a, b, c, d, e, f, g, hh := h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7]
		for i := range 64 {
			t1 := hh + (bits.RotateLeft32(e, -6) ^ bits.RotateLeft32(e, -11) ^ bits.RotateLeft32(e, -25)) +
				(e&f ^ ^e&g) + k[i] + w[i]
			t2 := (bits.RotateLeft32(a, -2) ^ bits.RotateLeft32(a, -13) ^ bits.RotateLeft32(a, -22)) +
				(a&b ^ a&c ^ b&c)
			hh, g, f, e, d, c, b, a = g, f, e, d+t1, c, b, a, t1+t2
		}
		h[0] += a
		h[1] += b
		h[2] += c
		h[3] += d
		h[4] += e
		h[5] += f
		h[6] += g
		h[7] += hh
	}
}
