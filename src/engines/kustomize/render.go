// Package main builds a Kustomize overlay with krusty (sigs.k8s.io/kustomize/api) over an
// in-memory copy of a repository: plumb's Kustomize engine.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path"
	"regexp"
	"strconv"
	"strings"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/resmap"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// repoRoot is where the repository is mounted in the in-memory file system.
const repoRoot = "/repo"

// Request is one render: the repository's files, the kustomization directory and the App's
// spec.source.kustomize overrides.
type Request struct {
	Files []File `json:"files"`
	// Path of the kustomization directory, relative to the repository root.
	Path    string        `json:"path"`
	Images  []types.Image `json:"images,omitempty"`
	Patches []types.Patch `json:"patches,omitempty"`
	// MaxOutputBytes caps the rendered YAML (0: no cap).
	MaxOutputBytes int `json:"maxOutputBytes,omitempty"`
}

// File is one repository file; Data is base64 in JSON.
type File struct {
	Path string `json:"path"`
	Data []byte `json:"data"`
}

// Response is what the build produced, or an error.
type Response struct {
	OK bool `json:"ok"`
	// Objects are the resources of the output stream, in its order.
	Objects []Object `json:"objects,omitempty"`
	Error   string   `json:"error,omitempty"`
}

// Object is one resource of the output: its document as JSON, decoded from the YAML that
// `kustomize build` prints the way kubectl and Flux decode it (sigs.k8s.io/yaml), and the line
// of the stream its document starts on (for messages).
type Object struct {
	Line   int             `json:"line"`
	Object json.RawMessage `json:"object"`
}

// refusingTransport answers every HTTP request with an error: krusty fetches http(s)
// resources with net/http, which in js/wasm is the runtime's fetch. A render never uses the
// network.
type refusingTransport struct{}

func (refusingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	return nil, fmt.Errorf("%s: network access is disabled during a render", r.URL.Redacted())
}

func init() {
	http.DefaultTransport = refusingTransport{}
	http.DefaultClient = &http.Client{Transport: refusingTransport{}}
}

// Handle decodes a JSON request and returns a JSON response; it never panics.
func Handle(in []byte) (out []byte) {
	defer func() {
		if r := recover(); r != nil {
			out, _ = json.Marshal(Response{Error: fmt.Sprintf("kustomize engine panic: %v", r)})
		}
	}()
	var req Request
	if err := json.Unmarshal(in, &req); err != nil {
		out, _ = json.Marshal(Response{Error: "bad request: " + err.Error()})
		return out
	}
	objects, err := Build(req)
	if err != nil {
		out, _ = json.Marshal(Response{Error: err.Error()})
		return out
	}
	out, _ = json.Marshal(Response{OK: true, Objects: objects})
	return out
}

// Build runs krusty on req.Path with load restrictions off but a file system that refuses
// every path outside the repository (Flux's secure file system does the same), after
// refusing remote bases, Helm charts and plugin functions (see checkKustomizations). The
// output is capped at req.MaxOutputBytes of YAML, as `kustomize build` would print it.
func Build(req Request) ([]Object, error) {
	mem := filesys.MakeFsInMemory()
	for _, f := range req.Files {
		clean := path.Clean("/" + f.Path)
		if clean == "/" || strings.Contains(f.Path, "\\") {
			return nil, fmt.Errorf("bad file path %q", f.Path)
		}
		if err := mem.WriteFile(repoRoot+clean, f.Data); err != nil {
			return nil, fmt.Errorf("%s: %v", f.Path, err)
		}
	}
	fs := &repoFS{inner: mem}
	dir := path.Clean("/" + req.Path)
	target := repoRoot + dir
	if dir == "/" {
		target = repoRoot
	}
	if err := fs.MkdirAll(repoRoot); err != nil {
		return nil, err
	}
	if err := checkKustomizations(fs, target); err != nil {
		return nil, err
	}
	if len(req.Images) > 0 || len(req.Patches) > 0 {
		if err := applyOverrides(fs, target, req.Images, req.Patches); err != nil {
			return nil, err
		}
	}
	opts := krusty.MakeDefaultOptions()
	opts.LoadRestrictions = types.LoadRestrictionsNone
	opts.PluginConfig = types.DisabledPluginConfig()
	m, err := krusty.MakeKustomizer(opts).Run(fs, target)
	if err != nil {
		if fs.violation != "" {
			return nil, fmt.Errorf("%s (%s)", fs.violation, relMessage(err.Error()))
		}
		return nil, errors.New(relMessage(err.Error()))
	}
	return objects(m, req.MaxOutputBytes)
}

// maxExact is the largest integer a JavaScript number holds exactly (2^53).
const maxExact = 1 << 53

// objects converts each resource the way kubectl reads `kustomize build` output: its YAML
// document (resmap's AsYaml joins them with "---") through sigs.k8s.io/yaml's YAMLToJSON. An
// integer beyond 2^53 is refused (plumb could not send it back exactly), as plumb's own
// manifest parser refuses it.
func objects(m resmap.ResMap, maxBytes int) ([]Object, error) {
	out := make([]Object, 0, m.Size())
	line, total := 1, 0
	for i, r := range m.Resources() {
		y, err := r.AsYAML()
		if err != nil {
			return nil, errors.New(relMessage(err.Error()))
		}
		if i > 0 {
			total += len("---\n")
			line++
		}
		total += len(y)
		if maxBytes > 0 && total > maxBytes {
			return nil, fmt.Errorf("kustomize output is more than the limit of %d bytes (at %s %s)", maxBytes, r.GetKind(), r.GetName())
		}
		j, err := yaml.YAMLToJSON(y)
		if err != nil {
			return nil, fmt.Errorf("kustomize build:%d: %s %s: %v", line, r.GetKind(), r.GetName(), err)
		}
		if n := inexactInteger(j); n != "" {
			return nil, fmt.Errorf("kustomize build:%d: %s %s: integer %s is beyond 2^53: plumb cannot send it exactly (quote it if it is a string)",
				line, r.GetKind(), r.GetName(), n)
		}
		out = append(out, Object{Line: line, Object: j})
		line += bytes.Count(y, []byte("\n"))
	}
	return out, nil
}

// inexactInteger returns the first integer in the JSON document that a float64 cannot hold
// exactly (beyond ±2^53), or "".
func inexactInteger(doc []byte) string {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if err != nil {
			return ""
		}
		n, ok := tok.(json.Number)
		if !ok || strings.ContainsAny(string(n), ".eE") {
			continue
		}
		if i, err := strconv.ParseInt(string(n), 10, 64); err != nil || i > maxExact || i < -maxExact {
			return string(n)
		}
	}
}

var (
	rootDirInMessage = regexp.MustCompile(`(^|[^\w.\-/])` + regexp.QuoteMeta(repoRoot) + `/`)
	rootInMessage    = regexp.MustCompile(`(^|[^\w.\-/])` + regexp.QuoteMeta(repoRoot) + `\b`)
)

// relMessage rewrites absolute in-memory paths in krusty's messages as repository paths.
func relMessage(msg string) string {
	msg = rootDirInMessage.ReplaceAllString(msg, "${1}")
	return rootInMessage.ReplaceAllString(msg, "${1}.")
}

// rel turns an in-memory absolute path into a repository path ("." for the root).
func rel(p string) string {
	if p == repoRoot {
		return "."
	}
	return strings.TrimPrefix(p, repoRoot+"/")
}

// kustomizationFile returns the kustomization file in dir (absolute, in fs), or "".
func kustomizationFile(fs filesys.FileSystem, dir string) string {
	for _, name := range []string{"kustomization.yaml", "kustomization.yml", "Kustomization"} {
		p := path.Join(dir, name)
		if fs.Exists(p) && !fs.IsDir(p) {
			return p
		}
	}
	return ""
}

func readKustomization(fs filesys.FileSystem, file string) (*types.Kustomization, error) {
	data, err := fs.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", rel(file), err)
	}
	var k types.Kustomization
	if err := k.Unmarshal(data); err != nil {
		return nil, fmt.Errorf("%s: %s", rel(file), relMessage(err.Error()))
	}
	k.FixKustomization()
	return &k, nil
}
