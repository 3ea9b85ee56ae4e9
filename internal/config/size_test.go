package config

import "testing"

func TestParseSize(t *testing.T) {
	tests := []struct {
		in      string
		want    int64
		wantErr bool
	}{
		{"0", 0, false},
		{"1024", 1024, false},
		{"1B", 1, false},
		{"2KB", 2000, false},
		{"2KiB", 2048, false},
		{"3MB", 3e6, false},
		{"96MiB", 96 << 20, false},
		{"96mib", 96 << 20, false},
		{"1GB", 1e9, false},
		{"1.5GiB", 3 << 29, false},
		{"2TiB", 2 << 40, false},
		{" 7 MiB ", 7 << 20, false},
		{"", 0, true},
		{"MiB", 0, true},
		{"lots", 0, true},
		{"1.2.3MB", 0, true},
		{"-5MB", 0, true},
		{"5PB", 0, true},
		{"99999999999TiB", 0, true},
	}
	for _, tt := range tests {
		got, err := ParseSize(tt.in)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestFormatSize(t *testing.T) {
	tests := []struct {
		in   int64
		want string
	}{
		{0, "off"},
		{96 << 20, "96MiB"},
		{1 << 30, "1GiB"},
		{3 << 29, "1536MiB"},
		{100e6, "100000000"},
		{2048, "2KiB"},
		{5 << 40, "5TiB"},
	}
	for _, tt := range tests {
		got := FormatSize(tt.in)
		if got != tt.want {
			t.Errorf("FormatSize(%d) = %q, want %q", tt.in, got, tt.want)
		}
		if tt.in != 0 {
			back, err := ParseSize(got)
			if err != nil || back != tt.in {
				t.Errorf("ParseSize(FormatSize(%d)) = %d, %v", tt.in, back, err)
			}
		}
	}
}
