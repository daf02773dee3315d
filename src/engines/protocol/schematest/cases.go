package schematest

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// Case is one file of ../testdata/<engine>/: a request as the host sends it and the response
// the engine must give. The TypeScript tests (src/engines/wire.test.ts) read the same files.
type Case struct {
	Name     string
	Request  json.RawMessage `json:"request"`
	Response json.RawMessage `json:"response"`
}

// Cases reads every *.json file of dir, in name order.
func Cases(t *testing.T, dir string) []Case {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no wire cases in %s (%v)", dir, err)
	}
	sort.Strings(files)
	var out []Case
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var c Case
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&c); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		c.Name = strings.TrimSuffix(filepath.Base(f), ".json")
		out = append(out, c)
	}
	return out
}

// Strict decodes data into v and fails on any field v does not have: a case's request must
// be one the engine reads entirely.
func Strict(t *testing.T, name string, data []byte, v any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Errorf("%s: the engine does not read the whole request: %v", name, err)
	}
}

// SameJSON fails t unless got and want are the same JSON value.
func SameJSON(t *testing.T, name string, got, want []byte) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("%s: the engine's response is not JSON: %v", name, err)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatalf("%s: the case's response is not JSON: %v", name, err)
	}
	gb, _ := json.MarshalIndent(g, "", "  ")
	wb, _ := json.MarshalIndent(w, "", "  ")
	if !bytes.Equal(gb, wb) {
		t.Errorf("%s: response differs\ngot:  %s\nwant: %s", name, gb, wb)
	}
}

// Update rewrites a case file with the engine's response (for a deliberate change of output).
func Update(t *testing.T, file string, c Case, response []byte) {
	t.Helper()
	var req, res any
	_ = json.Unmarshal(c.Request, &req)
	_ = json.Unmarshal(response, &res)
	data, _ := json.MarshalIndent(map[string]any{"request": req, "response": res}, "", "  ")
	if err := os.WriteFile(file, append(data, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}
