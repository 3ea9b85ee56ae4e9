package store

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
)

// TestOrderSuffix checks that index suffixes sort newest first, ties by
// id, across the whole range RFC 3339 allows.
func TestOrderSuffix(t *testing.T) {
	at := func(s string) time.Time {
		tm, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	// In the order the index must yield them.
	entries := []struct {
		time, id string
	}{
		{"9999-12-31T23:59:59.999999999Z", "a"},
		{"2025-11-17T09:30:00.000000001Z", "a"},
		{"2025-11-17T10:30:00+01:00", "a"}, // same instant as the next: id decides
		{"2025-11-17T09:30:00Z", "b"},
		{"2025-11-17T09:30:00Z", "b-2"},
		{"2025-11-17T09:29:59.999999999Z", "a"},
		{"1970-01-01T00:00:00Z", "a"},
		{"1969-12-31T23:59:59.5Z", "a"},
		{"0001-01-01T00:00:00Z", "a"},
	}
	var keys [][]byte
	for _, e := range entries {
		keys = append(keys, orderSuffix(at(e.time), e.id))
	}
	sorted := slices.Clone(keys)
	slices.SortFunc(sorted, bytes.Compare)
	for i := range keys {
		if !bytes.Equal(keys[i], sorted[i]) {
			t.Errorf("position %d: got %s %s, want the entry for %s %s", i,
				entries[slices.IndexFunc(keys, func(k []byte) bool { return bytes.Equal(k, sorted[i]) })].time, idFromSuffix(sorted[i]),
				entries[i].time, entries[i].id)
		}
		if got := idFromSuffix(keys[i]); got != entries[i].id {
			t.Errorf("idFromSuffix = %q, want %q", got, entries[i].id)
		}
	}
}

func TestVersionKeysSortNumerically(t *testing.T) {
	var keys [][]byte
	for _, v := range []int{1, 2, 9, 10, 255, 256, 70000} {
		keys = append(keys, versionKey("x", v))
	}
	if !slices.IsSortedFunc(keys, bytes.Compare) {
		t.Error("version keys do not sort by version number")
	}
	if !bytes.HasPrefix(versionKey("ab", 1), versionPrefix("ab")) || bytes.HasPrefix(versionKey("ab", 1), versionPrefix("a")) {
		t.Error("version prefix of one id matches another id's keys")
	}
}

func TestQueryNames(t *testing.T) {
	tests := []struct {
		in          []string
		want        []string
		wantDropped bool
	}{
		{nil, nil, false},
		{[]string{"a", "b", "a"}, []string{"a", "b"}, false},
		{[]string{"a\x00b", "c"}, []string{"c"}, true},
	}
	for _, tt := range tests {
		got, dropped := queryNames(tt.in)
		if !slices.Equal(got, tt.want) || dropped != tt.wantDropped {
			t.Errorf("queryNames(%q) = %q, %v; want %q, %v", tt.in, got, dropped, tt.want, tt.wantDropped)
		}
	}
}

// TestBadgerLogger checks that Badger's warnings and errors reach hclog and
// its Info and Debug chatter does not.
func TestBadgerLogger(t *testing.T) {
	tests := []struct {
		name string
		log  func(l badgerLogger)
		want string // "" means nothing logged
	}{
		{"error", func(l badgerLogger) { l.Errorf("disk %s\n", "full") }, `[ERROR] badger error: detail="disk full"`},
		{"warning", func(l badgerLogger) { l.Warningf("slow %d", 3) }, `[WARN]  badger warning: detail="slow 3"`},
		{"info", func(l badgerLogger) { l.Infof("replaying %d", 1) }, ""},
		{"debug", func(l badgerLogger) { l.Debugf("flush") }, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf strings.Builder
			tt.log(badgerLogger{hclog.New(&hclog.LoggerOptions{Output: &buf, Level: hclog.Trace, DisableTime: true})})
			got := strings.TrimSpace(buf.String())
			if got != tt.want {
				t.Errorf("logged %q, want %q", got, tt.want)
			}
		})
	}
}

// TestAppendVersionKey: the scope query builds its version keys in a
// shared buffer; they must be versionKey's, and parse back.
func TestAppendVersionKey(t *testing.T) {
	var buf []byte
	for _, c := range []struct {
		id      string
		version int
	}{{"a", 1}, {"repo-muse:cli_v1.2", 300}, {strings.Repeat("x", 128), 1 << 40}} {
		start := len(buf)
		buf = appendVersionKey(buf, []byte(c.id), c.version)
		if got := buf[start:]; !bytes.Equal(got, versionKey(c.id, c.version)) {
			t.Errorf("appendVersionKey(%q, %d) = %q, want %q", c.id, c.version, got, versionKey(c.id, c.version))
		}
		if id, v := parseVersionKey(buf[start:]); id != c.id || v != c.version {
			t.Errorf("parseVersionKey = %q, %d, want %q, %d", id, v, c.id, c.version)
		}
	}
}
