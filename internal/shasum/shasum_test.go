package shasum

import (
	"crypto/sha256"
	"encoding/hex"
	"math/rand/v2"
	"strconv"
	"testing"
)

// TestKnownDigests checks the FIPS 180-4 examples and the empty message.
func TestKnownDigests(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
		{"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
		{"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
	} {
		sum := plainSum256([]byte(c.in))
		if got := hex.EncodeToString(sum[:]); got != c.want {
			t.Errorf("plainSum256(%q) = %s, want %s", c.in, got, c.want)
		}
	}
}

// TestSameAsCrypto compares plainSum256 with crypto/sha256 on every
// length up to five blocks, where the padding takes one block or two, and
// on some longer messages.
func TestSameAsCrypto(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	data := make([]byte, 5000)
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	for n := 0; n <= 5*blockSize; n++ {
		same(t, data[:n])
	}
	for _, n := range []int{1000, 4095, 4096, 4097, len(data)} {
		same(t, data[:n])
	}
}

func FuzzSameAsCrypto(f *testing.F) {
	f.Add([]byte(""))
	f.Add([]byte("cc:msg:abc:\x00text\x00"))
	f.Add(make([]byte, blockSize-8))
	f.Fuzz(func(t *testing.T, data []byte) { same(t, data) })
}

// same fails t unless plainSum256 and crypto/sha256 agree on data.
func same(t *testing.T, data []byte) {
	t.Helper()
	if got, want := plainSum256(data), sha256.Sum256(data); got != want {
		t.Fatalf("plainSum256 of %d bytes = %x, crypto/sha256 says %x", len(data), got, want)
	}
}

// BenchmarkSum256 compares plainSum256 with crypto/sha256 (which uses the
// CPU's SHA instructions where it has them) on the sizes it is given: ids
// and fingerprints of a few dozen bytes.
func BenchmarkSum256(b *testing.B) {
	for _, n := range []int{32, 128, 1024} {
		data := make([]byte, n)
		b.Run("plain/"+strconv.Itoa(n), func(b *testing.B) {
			b.SetBytes(int64(n))
			for b.Loop() {
				plainSum256(data)
			}
		})
		b.Run("crypto/"+strconv.Itoa(n), func(b *testing.B) {
			b.SetBytes(int64(n))
			for b.Loop() {
				sha256.Sum256(data)
			}
		})
	}
}
