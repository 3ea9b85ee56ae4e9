package medallion

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

func resolvedSchema(t *testing.T) *jsonschema.Resolved {
	t.Helper()
	b, err := JSONSchema()
	if err != nil {
		t.Fatalf("JSONSchema: %v", err)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("JSONSchema is not a schema: %v\n%s", err, b)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		t.Fatalf("resolve schema: %v", err)
	}
	return rs
}

// instance turns m into the generic JSON value a schema validator sees.
func instance(t *testing.T, m any) map[string]any {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestJSONSchemaShape(t *testing.T) {
	b, err := JSONSchema()
	if err != nil {
		t.Fatal(err)
	}
	if !json.Valid(b) {
		t.Fatalf("JSONSchema is not valid JSON:\n%s", b)
	}
	again, _ := JSONSchema()
	if string(again) != string(b) {
		t.Error("JSONSchema is not stable between calls")
	}

	var s jsonschema.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	if s.Schema != "https://json-schema.org/draft/2020-12/schema" || s.Title != SchemaVersion {
		t.Errorf("$schema = %q, title = %q", s.Schema, s.Title)
	}
	required := func(path string, sc *jsonschema.Schema, want []string) {
		t.Helper()
		if sc == nil {
			t.Fatalf("%s: missing from the schema", path)
		}
		got := slices.Clone(sc.Required)
		slices.Sort(got)
		want = slices.Clone(want)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s required = %q, want %q", path, got, want)
		}
	}
	required("(root)", &s, []string{"meta", "scope", "summary", "decisions", "open_questions", "affordances"})
	meta := s.Properties["meta"]
	// The knowledge bounds are the only optional fields.
	required("meta", meta, []string{"medallion_id", "schema_version", "model", "created_at", "updated_at", "status", "version"})
	required("scope", s.Properties["scope"], []string{"graph_nodes", "tags"})
	required("decisions[]", s.Properties["decisions"].Items, []string{"id", "statement", "rationale", "confidence"})
	required("open_questions[]", s.Properties["open_questions"].Items, []string{"id", "question", "blocked_on", "priority"})
	required("summary.subsystems[]", s.Properties["summary"].Properties["subsystems"].Items, []string{"name", "status", "notes"})
	required("affordances", s.Properties["affordances"], []string{"recommended_entry_points", "avoid_repeating", "invariants"})
	for _, opt := range []string{"knowledge_min_ts", "knowledge_max_ts"} {
		if meta.Properties[opt] == nil {
			t.Errorf("meta.%s missing from the schema's properties", opt)
		}
	}

	enums := []struct {
		path string
		sc   *jsonschema.Schema
		want []string
	}{
		{"meta.status", meta.Properties["status"], enumStrings(Statuses)},
		{"summary.subsystems[].status", s.Properties["summary"].Properties["subsystems"].Items.Properties["status"], enumStrings(SubsystemStatuses)},
		{"open_questions[].priority", s.Properties["open_questions"].Items.Properties["priority"], enumStrings(Priorities)},
	}
	for _, e := range enums {
		if e.sc == nil {
			t.Errorf("%s: missing from the schema", e.path)
			continue
		}
		var got []string
		for _, v := range e.sc.Enum {
			str, ok := v.(string)
			if !ok {
				t.Errorf("%s enum holds %T %v, want strings", e.path, v, v)
			}
			got = append(got, str)
		}
		if !slices.Equal(got, e.want) {
			t.Errorf("%s enum = %q, want the Go constants %q", e.path, got, e.want)
		}
	}

	conf := s.Properties["decisions"].Items.Properties["confidence"]
	if conf.Minimum == nil || *conf.Minimum != 0 || conf.Maximum == nil || *conf.Maximum != 1 {
		t.Errorf("decisions[].confidence bounds = %v..%v, want 0..1", conf.Minimum, conf.Maximum)
	}
}

func TestJSONSchemaValidates(t *testing.T) {
	rs := resolvedSchema(t)

	normalized := full()
	normalized.Normalize()
	valid := []struct {
		name string
		m    *Medallion
	}{
		{"full", full()},
		{"full normalized", normalized},
	}
	for _, tt := range valid {
		if err := rs.Validate(instance(t, tt.m)); err != nil {
			t.Errorf("%s: a valid medallion fails the schema: %v", tt.name, err)
		}
	}

	invalid := []struct {
		name   string
		mutate func(map[string]any)
	}{
		{"unknown status", func(v map[string]any) { v["meta"].(map[string]any)["status"] = "archived" }},
		{"unknown priority", func(v map[string]any) {
			v["open_questions"].([]any)[0].(map[string]any)["priority"] = "urgent"
		}},
		{"unknown subsystem status", func(v map[string]any) {
			v["summary"].(map[string]any)["subsystems"].([]any)[0].(map[string]any)["status"] = "fine"
		}},
		{"confidence above 1", func(v map[string]any) { v["decisions"].([]any)[0].(map[string]any)["confidence"] = 1.5 }},
		{"wrong schema version", func(v map[string]any) { v["meta"].(map[string]any)["schema_version"] = "medallion.v2" }},
		{"id with a slash", func(v map[string]any) { v["meta"].(map[string]any)["medallion_id"] = "a/b" }},
		{"missing meta", func(v map[string]any) { delete(v, "meta") }},
		{"missing required field", func(v map[string]any) { delete(v["meta"].(map[string]any), "version") }},
		{"unknown field", func(v map[string]any) { v["meta"].(map[string]any)["colour"] = "blue" }},
		{"string confidence", func(v map[string]any) { v["decisions"].([]any)[0].(map[string]any)["confidence"] = "high" }},
	}
	for _, tt := range invalid {
		t.Run(tt.name, func(t *testing.T) {
			v := instance(t, full())
			tt.mutate(v)
			if err := rs.Validate(v); err == nil {
				t.Errorf("the schema accepts an invalid medallion")
			}
		})
	}
}
