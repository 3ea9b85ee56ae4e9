package medallion

import (
	_ "embed"
	"slices"
)

// schemaJSON is the JSON Schema of Medallion, generated from the Go types
// by schema_gen_test.go (TestSchemaFile fails when it is stale; -update
// rewrites it). It is a file rather than derived at run time because
// deriving it takes github.com/google/jsonschema-go, whose package
// initialisation was the largest of every medallionctl run's, the
// SessionStart hook's included, for a schema only "medallionctl schema"
// prints.
//
//go:embed schema.json
var schemaJSON []byte

// JSONSchema returns the JSON Schema (draft 2020-12) of Medallion, derived by
// reflection from the Go types above and their enum constants. Optional
// fields (knowledge_*, evidence and its text) are the only ones left out of
// "required".
func JSONSchema() ([]byte, error) {
	return slices.Clone(schemaJSON), nil
}
