package medallion

import (
	"encoding/json"
	"reflect"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
)

var (
	schemaOnce sync.Once
	schemaJSON []byte
	schemaErr  error
)

// JSONSchema returns the JSON Schema (draft 2020-12) of Medallion, derived by
// reflection from the Go types above and their enum constants. Optional
// fields (knowledge_*, evidence and its text) are the only ones left out of
// "required".
func JSONSchema() ([]byte, error) {
	schemaOnce.Do(func() {
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
	})
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
