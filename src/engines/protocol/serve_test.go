package protocol

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"plumb/engines/protocol/schematest"
)

func TestEnvelopesMatchTheWireSchema(t *testing.T) {
	s := schematest.Load(t, "../wire.schema.json")
	s.Check(t, "HostMessage", reflect.TypeOf(Request{}), schematest.Reads)
	s.Check(t, "HelperMessage", reflect.TypeOf(Message{}), schematest.Writes)
	s.Check(t, "EngineFailure", reflect.TypeOf(Failure{}), schematest.Writes)
}

// The ready line first, then one response per request in order, each with its request's id;
// a line that is not JSON gets a failure, and serving goes on.
func TestServeAnswersEachRequestByID(t *testing.T) {
	warmed := false
	in := strings.NewReader(`{"id":1,"request":{"n":1}}` + "\n" + "not json\n" + `{"id":2,"request":{"n":2},"later":"ignored"}` + "\n")
	var out bytes.Buffer
	err := Serve("echo", func() { warmed = true }, func(req []byte) []byte {
		return []byte(`{"ok":true,"got":` + string(req) + `}`)
	}, in, &out)
	if err != nil {
		t.Fatal(err)
	}
	if !warmed {
		t.Error("warmUp did not run")
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	want := []string{
		`{"ready":{"engine":"echo","protocol":1}}`,
		`{"id":1,"response":{"ok":true,"got":{"n":1}}}`,
		`{"response":{"ok":false,"error":"bad message: invalid character 'o' in literal null (expecting 'u')"}}`,
		`{"id":2,"response":{"ok":true,"got":{"n":2}}}`,
	}
	if !reflect.DeepEqual(lines, want) {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	for _, l := range lines {
		if !json.Valid([]byte(l)) {
			t.Errorf("not JSON: %s", l)
		}
	}
}
