// Package main builds a Kustomize overlay with krusty (sigs.k8s.io/kustomize/api) over an
// in-memory copy of a repository: plumb's Kustomize engine.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path"
	"regexp"
	"strings"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
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

// Response is the rendered YAML stream or an error.
type Response struct {
	OK    bool   `json:"ok"`
	YAML  string `json:"yaml,omitempty"`
	Error string `json:"error,omitempty"`
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
	y, err := Build(req)
	if err != nil {
		out, _ = json.Marshal(Response{Error: err.Error()})
		return out
	}
	out, _ = json.Marshal(Response{OK: true, YAML: y})
	return out
}

// Build runs krusty on req.Path with load restrictions off but a file system that refuses
// every path outside the repository (Flux's secure file system does the same), after
// refusing remote bases, Helm charts and plugin functions (see checkKustomizations).
func Build(req Request) (string, error) {
	mem := filesys.MakeFsInMemory()
	for _, f := range req.Files {
		clean := path.Clean("/" + f.Path)
		if clean == "/" || strings.Contains(f.Path, "\\") {
			return "", fmt.Errorf("bad file path %q", f.Path)
		}
		if err := mem.WriteFile(repoRoot+clean, f.Data); err != nil {
			return "", fmt.Errorf("%s: %v", f.Path, err)
		}
	}
	fs := &repoFS{inner: mem}
	dir := path.Clean("/" + req.Path)
	target := repoRoot + dir
	if dir == "/" {
		target = repoRoot
	}
	if err := fs.MkdirAll(repoRoot); err != nil {
		return "", err
	}
	if err := checkKustomizations(fs, target); err != nil {
		return "", err
	}
	if len(req.Images) > 0 || len(req.Patches) > 0 {
		if err := applyOverrides(fs, target, req.Images, req.Patches); err != nil {
			return "", err
		}
	}
	opts := krusty.MakeDefaultOptions()
	opts.LoadRestrictions = types.LoadRestrictionsNone
	opts.PluginConfig = types.DisabledPluginConfig()
	m, err := krusty.MakeKustomizer(opts).Run(fs, target)
	if err != nil {
		if fs.violation != "" {
			return "", fmt.Errorf("%s (%s)", fs.violation, relMessage(err.Error()))
		}
		return "", errors.New(relMessage(err.Error()))
	}
	y, err := m.AsYaml()
	if err != nil {
		return "", errors.New(relMessage(err.Error()))
	}
	if req.MaxOutputBytes > 0 && len(y) > req.MaxOutputBytes {
		return "", fmt.Errorf("kustomize output is %d bytes, more than the limit of %d", len(y), req.MaxOutputBytes)
	}
	return string(y), nil
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
