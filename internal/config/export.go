package config

import (
	"time"

	"github.com/hashicorp/hcl/v2"
)

// Export is the daemon's automatic export of every medallion to
// DATA_DIR/exports, the copy `medalliond repair` comes back from.
type Export struct {
	// Every is how often the daemon exports; 0 turns it off.
	Every time.Duration
	// Keep is how many exports are kept, the newest.
	Keep int
}

// DefaultExport exports daily and keeps a week: medallions are small, and
// a week covers a damage noticed late.
var DefaultExport = Export{Every: 24 * time.Hour, Keep: 7}

// minExportEvery keeps a mistyped "1s" from exporting the store in a loop.
const minExportEvery = time.Minute

func (d *blockDecoder) export(content *hcl.BodyContent, e *Export) {
	if attr, found := content.Attributes["every"]; found {
		if v, diag := stringValue(attr); diag != nil {
			d.diags = append(d.diags, diag)
		} else if dur, err := parseDuration(v, minExportEvery); err != nil {
			d.invalid(attr, "export", err)
		} else {
			e.Every = dur
		}
	}
	if attr, found := content.Attributes["keep"]; found {
		if n, ok := d.count(attr, "export", 1, 1000); ok {
			e.Keep = n
		}
	}
}
