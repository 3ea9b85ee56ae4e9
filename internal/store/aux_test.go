package store

import (
	"context"
	"strings"
	"sync"
	"testing"
)

func TestAux(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	b, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if v, err := b.GetAux(ctx, "tier1/s1"); err != nil || v != nil {
		t.Fatalf("absent record = %q, %v", v, err)
	}
	if err := b.PutAux(ctx, "tier1/s1", []byte("backlog")); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := b.AddAuxInt(ctx, "llm/tokens/2026-11-25", 10); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}

	// Both survive a restart; concurrent adds lost nothing.
	b, err = Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if v, _ := b.GetAux(ctx, "tier1/s1"); string(v) != "backlog" {
		t.Errorf("after reopen = %q", v)
	}
	if n, err := b.AuxInt(ctx, "llm/tokens/2026-11-25"); err != nil || n != 80 {
		t.Errorf("ledger = %d, %v; want 80", n, err)
	}
	if keys, err := b.AuxKeys(ctx, "tier1/"); err != nil || len(keys) != 1 || keys[0] != "tier1/s1" {
		t.Errorf("AuxKeys = %v, %v", keys, err)
	}
	if err := b.PutAux(ctx, "tier1/s1", nil); err != nil {
		t.Fatal(err)
	}
	if v, _ := b.GetAux(ctx, "tier1/s1"); v != nil {
		t.Errorf("deleted record = %q", v)
	}
	if err := b.PutAux(ctx, "big", make([]byte, maxAuxValue+1)); err == nil {
		t.Error("an oversized record was stored")
	}
	if n, err := b.AuxInt(ctx, "llm/tokens/absent"); err != nil || n != 0 {
		t.Errorf("absent integer = %d, %v; want 0", n, err)
	}
	if err := b.PutAux(ctx, "text", []byte("backlog")); err != nil {
		t.Fatal(err)
	}
	if _, err := b.AuxInt(ctx, "text"); err == nil || !strings.Contains(err.Error(), "read text: not a number") {
		t.Errorf("AuxInt of a text record: %v", err)
	}
	if _, err := b.AddAuxInt(ctx, "text", 1); err == nil || !strings.Contains(err.Error(), "add to text: not a number") {
		t.Errorf("AddAuxInt to a text record: %v", err)
	}
}
