package watch

import (
	"fmt"
	"path"
	"strings"
)

// pattern is a glob over slash-separated relative paths: each segment is
// matched with path.Match, and a "**" segment matches zero or more whole
// segments, so "**/*.jsonl" matches "a.jsonl" and "x/y/a.jsonl", and
// "tmp/**" matches "tmp" itself and everything under it.
type pattern []string

func compile(p string) (pattern, error) {
	p = strings.Trim(p, "/")
	if p == "" {
		return nil, fmt.Errorf("empty pattern")
	}
	segs := strings.Split(p, "/")
	for _, s := range segs {
		if s == "" {
			return nil, fmt.Errorf("pattern %q: empty path segment", p)
		}
		if _, err := path.Match(s, ""); err != nil {
			return nil, fmt.Errorf("pattern %q: %w", p, err)
		}
	}
	return segs, nil
}

func (p pattern) match(segs []string) bool { return matchSegs(p, segs) }

func matchSegs(pat, name []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for len(pat) > 0 && pat[0] == "**" {
				pat = pat[1:]
			}
			if len(pat) == 0 {
				return true
			}
			for i := range len(name) + 1 {
				if matchSegs(pat, name[i:]) {
					return true
				}
			}
			return false
		}
		if len(name) == 0 {
			return false
		}
		if ok, _ := path.Match(pat[0], name[0]); !ok {
			return false
		}
		pat, name = pat[1:], name[1:]
	}
	return len(name) == 0
}

func matchAny(ps []pattern, segs []string) bool {
	for _, p := range ps {
		if p.match(segs) {
			return true
		}
	}
	return false
}
