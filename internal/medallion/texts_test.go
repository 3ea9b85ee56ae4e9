package medallion

import (
	"reflect"
	"strings"
	"testing"
)

// TestEachTextCoversEveryString: every string field of a medallion is
// either visited by EachText or one of the structural ones it leaves out
// on purpose, so a text field added later cannot escape redaction
// unnoticed.
func TestEachTextCoversEveryString(t *testing.T) {
	m := &Medallion{}
	fillAll(reflect.ValueOf(m).Elem(), "x")
	visited := map[*string]bool{}
	m.EachText(func(s *string) { visited[s] = true })
	structural := map[string]bool{
		"Meta.MedallionID": true, "Meta.SchemaVersion": true, "Meta.Model": true, "Meta.CreatedAt": true,
		"Meta.UpdatedAt": true, "Meta.KnowledgeMinTS": true, "Meta.KnowledgeMaxTS": true, "Meta.Status": true,
		"Scope.GraphNodes[]": true, "Scope.Tags[]": true, "Summary.Subsystems[].Status": true,
		"Decisions[].ID": true, "OpenQuestions[].ID": true, "OpenQuestions[].Priority": true,
		"Evidence[].Item": true, "Evidence[].SessionID": true, "Evidence[].EventIDs[]": true,
		"Review[].Item": true, "Review[].Source": true, "Review[].State": true,
		// A pin names its item by text as a review entry does (and is
		// redacted with it, see EachText); a forgotten item keeps no text.
		"Pinned[].Item": true, "Forgotten[].Kind": true, "Forgotten[].Fingerprint": true, "Forgotten[].EventIDs[]": true,
	}
	walkStrings(reflect.ValueOf(m).Elem(), "", func(path string, s *string) {
		if !visited[s] && !structural[path] {
			t.Errorf("%s is neither visited by EachText nor listed as structural", path)
		}
	})
}

// fillAll gives every slice one element and every string a value.
func fillAll(v reflect.Value, s string) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(s)
	case reflect.Struct:
		for i := range v.NumField() {
			fillAll(v.Field(i), s)
		}
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fillAll(v.Index(0), s)
	}
}

func walkStrings(v reflect.Value, path string, fn func(string, *string)) {
	switch v.Kind() {
	case reflect.String:
		fn(path, (*string)(v.Addr().UnsafePointer()))
	case reflect.Struct:
		for i := range v.NumField() {
			walkStrings(v.Field(i), strings.TrimPrefix(path+"."+v.Type().Field(i).Name, "."), fn)
		}
	case reflect.Slice:
		for i := range v.Len() {
			walkStrings(v.Index(i), path+"[]", fn)
		}
	}
}
