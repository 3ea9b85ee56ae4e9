package store

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/medallionhq/medallion/internal/medallion"
)

// TestSalvageDamagedMemtableLog: after a crash, a memtable log damaged in
// the middle keeps Badger from opening the store read-only; Salvage reads
// a scratch copy instead, hands out what precedes the damage, and leaves
// the damaged directory exactly as it was.
func TestSalvageDamagedMemtableLog(t *testing.T) {
	dir := uncleanStore(t)
	path := filepath.Join(dir, "00001.mem")
	res, err := checkLog(path)
	if err != nil {
		t.Fatal(err)
	}
	writeAt(t, path, logHeaderSize+(res.stop-logHeaderSize)*2/3, garbage(32))
	before := snapshot(t, dir)

	var ids []string
	got, err := Salvage(dir, filepath.Join(t.TempDir(), "scratch"), nil, func(m *medallion.Medallion) error {
		ids = append(ids, m.Meta.MedallionID)
		return nil
	})
	if err != nil {
		t.Fatalf("salvage: %v", err)
	}
	t.Logf("salvaged %v from a damaged memtable log: %+v", ids, got)
	if !got.Copied || got.Versions != len(ids) || len(ids) == 0 || len(ids) > 3 {
		t.Errorf("salvage: %+v, ids %v", got, ids)
	}
	after := snapshot(t, dir)
	for name, b := range before {
		if !bytes.Equal(after[name], b) {
			t.Errorf("salvage changed %s", name)
		}
	}
}
