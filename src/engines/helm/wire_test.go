package main

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"plumb/engines/protocol/schematest"
)

func TestTypesMatchTheWireSchema(t *testing.T) {
	s := schematest.Load(t, "../wire.schema.json")
	s.Check(t, "HelmRequest", reflect.TypeOf(Request{}), schematest.Reads)
	s.Check(t, "HelmResponse", reflect.TypeOf(Response{}), schematest.Writes)
}

// Each case of ../testdata/helm: the engine reads the whole request and answers exactly
// the recorded response. PLUMB_UPDATE_WIRE_CASES=1 rewrites the responses (review the diff).
func TestWireCases(t *testing.T) {
	for _, c := range schematest.Cases(t, "../testdata/helm") {
		t.Run(c.Name, func(t *testing.T) {
			schematest.Strict(t, c.Name, c.Request, &Request{})
			got := Handle(c.Request)
			if os.Getenv("PLUMB_UPDATE_WIRE_CASES") == "1" {
				schematest.Update(t, filepath.Join("../testdata/helm", c.Name+".json"), c, got)
				return
			}
			schematest.SameJSON(t, c.Name, got, c.Response)
		})
	}
}
