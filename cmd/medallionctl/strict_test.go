package main

import (
	"errors"
	"strings"
	"testing"

	"github.com/medallionhq/medallion/internal/medallion"
)

func TestDecodeMedallionShape(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		// want lists every expected problem as "field: message"; nil means
		// the document decodes.
		want []string
	}{
		{"minimal", `{"meta": {"medallion_id": "x"}}`, nil},
		{"nulls are accepted like encoding/json does", `{"meta": null, "decisions": null, "scope": {"tags": null}}`, nil},
		{"every problem, sorted by key", `{
			"meta": {"version": 1.5, "Status": "active", "medallion_id": 7},
			"scope": {"graph_nodes": "repo:x", "tagz": []},
			"decisions": [{"confidence": "high"}, {"id": true, "extra": 1}],
			"open_questions": {},
			"affordances": {"invariants": [1, "ok"]}
		}`, []string{
			`affordances.invariants[0]: must be a string, not a number`,
			`decisions[0].confidence: must be a number, not a string`,
			`decisions[1].extra: unknown field`,
			`decisions[1].id: must be a string, not a boolean`,
			`meta.Status: unknown field (did you mean "status"?)`,
			`meta.medallion_id: must be a string, not a number`,
			`meta.version: must be an integer (got 1.5)`,
			`open_questions: must be an array, not an object`,
			`scope.graph_nodes: must be an array, not a string`,
			`scope.tagz: unknown field (did you mean "tags"?)`,
		}},
		{"far-off names get no suggestion", `{"colour": "blue"}`, []string{"colour: unknown field"}},
		{"number out of range", `{"decisions": [{"confidence": 1e999}]}`, []string{"decisions[0].confidence: must be a number in range (got 1e999)"}},
		{"not an object", `"medallion"`, []string{"(document): must be an object, not a string"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := decodeMedallion("m.json", []byte(tt.doc))
			if tt.want == nil {
				if err != nil || m == nil {
					t.Fatalf("decodeMedallion = %v, %v; want a medallion", m, err)
				}
				return
			}
			var de *decodeError
			if !errors.As(err, &de) {
				t.Fatalf("error %v (%T) is not a *decodeError", err, err)
			}
			var got []string
			for _, p := range de.problems {
				got = append(got, p.String())
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestDecodeMedallionKeepsValues(t *testing.T) {
	m, err := decodeMedallion("m.json", []byte(museJSON))
	if err != nil {
		t.Fatal(err)
	}
	if m.Meta.MedallionID != "muse-project-state" || m.Decisions[1].Confidence != 0.55 ||
		m.OpenQuestions[0].BlockedOn[1] != "spec" || m.OpenQuestions[1].Priority != medallion.PriorityLow {
		t.Errorf("decoded %+v", m)
	}
}

func TestPosition(t *testing.T) {
	data := []byte("ab\ncd\n\nef")
	tests := []struct {
		offset    int64
		line, col int
	}{
		{0, 1, 1}, {1, 1, 1}, {2, 1, 2}, {4, 2, 1}, {5, 2, 2}, {7, 4, 1}, {9, 4, 2}, {99, 4, 2},
	}
	for _, tt := range tests {
		if line, col := position(data, tt.offset); line != tt.line || col != tt.col {
			t.Errorf("position(%d) = %d:%d, want %d:%d", tt.offset, line, col, tt.line, tt.col)
		}
	}
}

func TestHumanBytes(t *testing.T) {
	tests := []struct {
		n    int64
		want string
	}{
		{0, "0 B"}, {1023, "1023 B"}, {1024, "1.0 KiB"}, {1536, "1.5 KiB"}, {3 << 20, "3.0 MiB"}, {5 << 30, "5.0 GiB"},
	}
	for _, tt := range tests {
		if got := humanBytes(tt.n); got != tt.want {
			t.Errorf("humanBytes(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
}
