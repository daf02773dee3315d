// Package schematest checks Go types against the engines' wire schema (../../wire.schema.json,
// a JSON Schema generated from src/engines/wire.ts), so that the Go and TypeScript sides of the
// wire cannot drift apart. Used by the engines' tests only.
package schematest

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// Direction says who writes a message.
type Direction int

const (
	// Reads: the host writes, Go reads. Every property the schema allows must be a field Go
	// decodes, with a compatible type (Go may know more fields than the host sends).
	Reads Direction = iota
	// Writes: Go writes, the host reads. Every field Go encodes must be in the schema, with a
	// compatible type; a field Go always writes (no omitempty) must be required there.
	Writes
)

// Schema is a parsed wire schema.
type Schema struct {
	defs map[string]map[string]any
}

// Load reads the schema file.
func Load(t *testing.T, file string) *Schema {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("read the wire schema: %v", err)
	}
	var doc struct {
		Defs map[string]map[string]any `json:"$defs"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("parse %s: %v", file, err)
	}
	if len(doc.Defs) == 0 {
		t.Fatalf("%s has no $defs", file)
	}
	return &Schema{defs: doc.Defs}
}

// Check fails t for every difference between the schema's definition def and Go's JSON
// encoding of typ, read or written as dir says.
func (s *Schema) Check(t *testing.T, def string, typ reflect.Type, dir Direction) {
	t.Helper()
	d, ok := s.defs[def]
	if !ok {
		t.Fatalf("the wire schema has no definition %q", def)
	}
	for _, problem := range s.compare(def, d, typ, dir, map[string]bool{}) {
		t.Error(problem)
	}
}

// resolve follows $ref and merges the branches of anyOf into one object schema.
func (s *Schema) resolve(node map[string]any) map[string]any {
	for {
		ref, ok := node["$ref"].(string)
		if !ok {
			break
		}
		node = s.defs[strings.TrimPrefix(ref, "#/$defs/")]
		if node == nil {
			return map[string]any{}
		}
	}
	branches, ok := node["anyOf"].([]any)
	if !ok {
		return node
	}
	merged := map[string]any{"properties": map[string]any{}, "anyOf": true}
	types := map[string]bool{}
	for _, b := range branches {
		bm := s.resolve(b.(map[string]any))
		if tp, ok := bm["type"].(string); ok {
			types[tp] = true
			merged["type"] = tp
		}
		if props, ok := bm["properties"].(map[string]any); ok {
			for k, v := range props {
				merged["properties"].(map[string]any)[k] = v
			}
		}
		if items, ok := bm["items"]; ok {
			merged["items"] = items
		}
	}
	if len(types) > 1 {
		merged["type"] = "any"
	}
	return merged
}

func (s *Schema) compare(where string, node map[string]any, typ reflect.Type, dir Direction, seen map[string]bool) []string {
	node = s.resolve(node)
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	if typ == reflect.TypeOf(json.RawMessage(nil)) || typ.Kind() == reflect.Interface {
		return nil // raw JSON: anything the schema allows
	}
	want, _ := node["type"].(string)
	bad := func() []string {
		return []string{fmt.Sprintf("%s: the schema says %q, Go has %s", where, want, typ)}
	}
	switch want {
	case "", "any":
		return nil
	case "string":
		if typ.Kind() == reflect.String || (typ.Kind() == reflect.Slice && typ.Elem().Kind() == reflect.Uint8) {
			return nil
		}
		return bad()
	case "integer":
		switch typ.Kind() {
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			return nil
		}
		return bad()
	case "number":
		if typ.Kind() == reflect.Float32 || typ.Kind() == reflect.Float64 {
			return nil
		}
		return bad()
	case "boolean":
		if typ.Kind() == reflect.Bool {
			return nil
		}
		return bad()
	case "array":
		if typ.Kind() != reflect.Slice || typ.Elem().Kind() == reflect.Uint8 {
			return bad()
		}
		items, _ := node["items"].(map[string]any)
		if items == nil {
			return nil
		}
		return s.compare(where+"[]", items, typ.Elem(), dir, seen)
	case "object":
		props, _ := node["properties"].(map[string]any)
		if typ.Kind() == reflect.Map {
			if typ.Key().Kind() != reflect.String || len(props) > 0 {
				return bad()
			}
			return nil
		}
		if typ.Kind() != reflect.Struct {
			return bad()
		}
		return s.compareStruct(where, node, props, typ, dir, seen)
	}
	return []string{fmt.Sprintf("%s: type %q is not understood by this check", where, want)}
}

func (s *Schema) compareStruct(where string, node, props map[string]any, typ reflect.Type, dir Direction, seen map[string]bool) []string {
	key := where + "|" + typ.String()
	if seen[key] {
		return nil
	}
	seen[key] = true
	fields := jsonFields(typ)
	required := map[string]bool{}
	if req, ok := node["required"].([]any); ok {
		for _, r := range req {
			required[r.(string)] = true
		}
	}
	_, union := node["anyOf"]
	var out []string
	names := make([]string, 0, len(props))
	for name := range props {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		f, ok := fields[name]
		if !ok {
			if dir == Reads {
				out = append(out, fmt.Sprintf("%s.%s: in the schema, but %s has no such JSON field (Go would drop it)", where, name, typ))
			}
			continue
		}
		out = append(out, s.compare(where+"."+name, props[name].(map[string]any), f.typ, dir, seen)...)
	}
	if dir == Writes {
		fieldNames := make([]string, 0, len(fields))
		for name := range fields {
			fieldNames = append(fieldNames, name)
		}
		sort.Strings(fieldNames)
		for _, name := range fieldNames {
			if _, ok := props[name]; !ok {
				out = append(out, fmt.Sprintf("%s.%s: %s writes it, but the schema does not have it", where, name, typ))
			} else if !fields[name].omitempty && !union && !required[name] {
				out = append(out, fmt.Sprintf("%s.%s: Go always writes it, but the schema does not require it", where, name))
			}
		}
	}
	return out
}

type field struct {
	typ       reflect.Type
	omitempty bool
}

// jsonFields lists a struct's fields as encoding/json sees them (embedded structs without a
// JSON name are flattened, "-" is skipped).
func jsonFields(typ reflect.Type) map[string]field {
	out := map[string]field{}
	for i := 0; i < typ.NumField(); i++ {
		f := typ.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				for k, v := range jsonFields(ft) {
					if _, dup := out[k]; !dup {
						out[k] = v
					}
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = field{typ: f.Type, omitempty: strings.Contains(","+opts+",", ",omitempty,")}
	}
	return out
}
