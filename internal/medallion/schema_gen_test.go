package medallion

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// TestSchemaFile checks that schema.json, which JSONSchema serves, is what
// the Go types give today; -update rewrites it.
func TestSchemaFile(t *testing.T) {
	want, err := generateSchema()
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile("schema.json", want, 0o644); err != nil {
			t.Fatal(err)
		}
		return // the embedded copy is the one this test binary was built with
	}
	got, _ := JSONSchema()
	if !bytes.Equal(got, want) {
		t.Error("schema.json is not the schema of the Go types: run go test ./internal/medallion -run TestSchemaFile -update")
	}
}

// generateSchema derives the JSON Schema (draft 2020-12) of Medallion by
// reflection from the Go types and their enum constants: what schema.json
// must hold. Optional fields (knowledge_*, evidence and its text) are the
// only ones left out of "required".
func generateSchema() ([]byte, error) {
	var schemaJSON []byte
	var schemaErr error
	func() {
		enum := func(values []string, desc string) *jsonschema.Schema {
			s := &jsonschema.Schema{Type: "string", Description: desc}
			for _, v := range values {
				s.Enum = append(s.Enum, v)
			}
			return s
		}
		s, err := jsonschema.For[Medallion](&jsonschema.ForOptions{
			TypeSchemas: map[reflect.Type]*jsonschema.Schema{
				reflect.TypeFor[Status]():          enum(enumStrings(Statuses), "lifecycle state"),
				reflect.TypeFor[SubsystemStatus](): enum(enumStrings(SubsystemStatuses), "subsystem state"),
				reflect.TypeFor[Priority]():        enum(enumStrings(Priorities), "how urgent"),
				reflect.TypeFor[ReviewState]():     enum(enumStrings(ReviewStates), "review state"),
			},
		})
		if err != nil {
			schemaErr = err
			return
		}
		s.Schema = "https://json-schema.org/draft/2020-12/schema"
		s.ID = "https://medallion.dev/schema/" + SchemaVersion + ".json"
		s.Title = SchemaVersion
		s.Description = "A medallion: the structured, versioned save file of one scope."
		tightenNumbers(s)
		schemaJSON, schemaErr = json.MarshalIndent(s, "", "  ")
	}()
	return schemaJSON, schemaErr
}

// tightenNumbers adds the bounds that reflection cannot see.
func tightenNumbers(s *jsonschema.Schema) {
	zero, one := 0.0, 1.0
	if d := s.Properties["decisions"]; d != nil && d.Items != nil {
		if c := d.Items.Properties["confidence"]; c != nil {
			c.Minimum, c.Maximum = &zero, &one
		}
	}
	if e := s.Properties["evidence"]; e != nil {
		e.MaxItems = jsonschema.Ptr(MaxEvidence)
	}
	if r := s.Properties["review"]; r != nil {
		r.MaxItems = jsonschema.Ptr(MaxReview)
	}
	if m := s.Properties["meta"]; m != nil {
		if v := m.Properties["version"]; v != nil {
			v.Minimum = &zero
		}
		if id := m.Properties["medallion_id"]; id != nil {
			id.Pattern = `^[A-Za-z0-9._:-]{1,128}$`
		}
		if sv := m.Properties["schema_version"]; sv != nil {
			sv.Const = jsonschema.Ptr[any](SchemaVersion)
		}
	}
}
