package config

import (
	"strings"
	"testing"
	"time"
)

func TestExportBlock(t *testing.T) {
	c, err := loadString(t, "export {\n  every = \"6h\"\n  keep = 3\n}\n")
	if err != nil {
		t.Fatal(err)
	}
	if c.Export != (Export{Every: 6 * time.Hour, Keep: 3}) {
		t.Errorf("Export = %+v", c.Export)
	}
	if c, err := loadString(t, "export {\n  every = \"off\"\n}\n"); err != nil || c.Export.Every != 0 || c.Export.Keep != DefaultExport.Keep {
		t.Errorf("every = off: %+v, %v", c.Export, err)
	}
	if c, err := loadString(t, "log_level = \"info\"\n"); err != nil || c.Export != DefaultExport {
		t.Errorf("no block: %+v, %v; want the default (daily, keep 7)", c.Export, err)
	}
	for _, bad := range []string{"every = \"1s\"", "keep = 0"} {
		if _, err := loadString(t, "export {\n  "+bad+"\n}\n"); err == nil || !strings.Contains(err.Error(), "export.") {
			t.Errorf("%s: err = %v, want a diagnostic naming the key", bad, err)
		}
	}
}
