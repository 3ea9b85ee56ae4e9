package main

import (
	"testing"

	"github.com/medallionhq/medallion/internal/api"
)

func TestStatusDisk(t *testing.T) {
	tests := []struct {
		name, golden string
		disk         *api.DiskStatus
		damage       string
	}{
		{"room", "status_disk.txt", &api.DiskStatus{FreeBytes: 12 << 30, ReserveBytes: 64 << 20}, ""},
		{"full", "status_disk_full.txt", &api.DiskStatus{FreeBytes: 12 << 20, ReserveBytes: 64 << 20, Full: true, ReadOnly: true,
			Message: "disk full under /home/ada/.local/share/medallion: 12 MiB free; ingestion paused; the store is open read-only " +
				"(writing stops below 64 MiB free and resumes by itself once space is freed)"}, ""},
		{"damaged", "status_damaged.txt", &api.DiskStatus{FreeBytes: 12 << 30, ReserveBytes: 64 << 20},
			"the store under /home/ada/.local/share/medallion/store is damaged: values that cannot be read: 2 (…). To recover, …"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := startFake(t)
			f.configure(func(f *fakeDaemon) { f.disk, f.storeDamage = tt.disk, tt.damage })
			golden(t, tt.golden, ok(t, "--socket", f.sock, "status"))
		})
	}
}
