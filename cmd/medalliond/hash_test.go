package main

import (
	"testing"

	"github.com/medallionhq/medallion/internal/shasum"
)

// TestHashesWithCryptoSHA256: the daemon hashes every message's text into
// its event's id, and internal/shasum's own SHA-256 (plain Go, for
// medallionctl's sake) is five to seven times as slow as crypto/sha256,
// which internal/ingest hands it at init. A daemon that stopped linking
// that init would parse transcripts a tenth slower and no other test would
// say so. This test binary links what the daemon links.
func TestHashesWithCryptoSHA256(t *testing.T) {
	if !shasum.Handed() {
		t.Fatal("medalliond hashes with internal/shasum's plain Go: nothing it links calls shasum.Use(crypto/sha256.Sum256) any more (internal/ingest did)")
	}
}
