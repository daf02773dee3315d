// Package main renders a Helm chart as `helm template` does, with Helm v3's chart loader,
// chartutil and template engine (helm.sh/helm/v3): plumb's Helm engine.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
	"time"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/ignore"
	"sigs.k8s.io/yaml"
)

// Request is one render. The chart comes as files (a chart directory from Git, paths
// relative to the chart root, .helmignore not yet applied) or as a packaged .tgz (Archive).
type Request struct {
	Files   []File `json:"files,omitempty"`
	Archive []byte `json:"archive,omitempty"`
	// ValuesFiles are YAML documents merged over the chart's values.yaml, in order, then
	// Values (spec.source.helm.valuesFiles, then spec.source.helm.values).
	ValuesFiles []File `json:"valuesFiles,omitempty"`
	// ChartValuesFiles name values files inside the chart (a packaged chart), merged in order.
	ChartValuesFiles []string       `json:"chartValuesFiles,omitempty"`
	Values           map[string]any `json:"values,omitempty"`
	// ValuesFrom are merged over the values files, in order, before Values (Flux's
	// HelmRelease valuesFrom).
	ValuesFrom  []ValuesRef `json:"valuesFrom,omitempty"`
	ReleaseName string      `json:"releaseName"`
	Namespace   string      `json:"namespace"`
	// KubeVersion ("v1.35.4") and APIVersions ("apps/v1", "apps/v1/Deployment", ...) come from
	// the destination's discovery; empty means Helm's defaults.
	KubeVersion    string   `json:"kubeVersion,omitempty"`
	APIVersions    []string `json:"apiVersions,omitempty"`
	MaxOutputBytes int      `json:"maxOutputBytes,omitempty"`
	// Lookup turns `lookup` on: it is answered from Lookups, and a call they do not answer
	// returns nothing and is listed in Response.Lookups. Off, lookup returns nothing (helm
	// template).
	Lookup  bool           `json:"lookup,omitempty"`
	Lookups []LookupAnswer `json:"lookups,omitempty"`
}

// File is a named blob; Data is base64 in JSON.
type File struct {
	Path string `json:"path"`
	Data []byte `json:"data"`
}

// Manifest is one rendered template (or a file of the chart's crds/ folder).
type Manifest struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

// Response is what the render produced, or an error.
type Response struct {
	OK        bool       `json:"ok"`
	Chart     string     `json:"chart,omitempty"`
	Version   string     `json:"version,omitempty"`
	Manifests []Manifest `json:"manifests,omitempty"`
	// Lookups are the calls the request did not answer, in the order made: the host answers
	// them and renders again (the manifests are then those of a render that lacked them).
	Lookups []LookupKey `json:"lookups,omitempty"`
	Error   string      `json:"error,omitempty"`
}

// Handle decodes a JSON request and returns a JSON response; it never panics.
func Handle(in []byte) (out []byte) {
	defer func() {
		if r := recover(); r != nil {
			out, _ = json.Marshal(Response{Error: fmt.Sprintf("helm engine panic: %v", r)})
		}
	}()
	var req Request
	if err := json.Unmarshal(in, &req); err != nil {
		out, _ = json.Marshal(Response{Error: "bad request: " + err.Error()})
		return out
	}
	res, err := Render(req)
	if err != nil {
		out, _ = json.Marshal(Response{Error: err.Error()})
		return out
	}
	out, _ = json.Marshal(res)
	return out
}

// Render loads the chart, merges values, checks dependencies and kubeVersion, and renders
// the templates like `helm template --include-crds` with the given release name, namespace
// and capabilities. `lookup` returns nothing unless req.Lookup (then see Request.Lookups); DNS
// lookups are off.
// NOTES.txt, partials (_*.tpl) and empty output are dropped; hooks are kept (the caller
// decides what to do with them).
func Render(req Request) (*Response, error) {
	ch, err := loadChart(req)
	if err != nil {
		return nil, err
	}
	if err := checkDependencies(ch, ch.Name()); err != nil {
		return nil, err
	}
	caps := chartutil.DefaultCapabilities.Copy()
	if req.KubeVersion != "" {
		kv, err := chartutil.ParseKubeVersion(req.KubeVersion)
		if err != nil {
			return nil, fmt.Errorf("kube version %q: %v", req.KubeVersion, err)
		}
		caps.KubeVersion = *kv
	}
	if len(req.APIVersions) > 0 {
		caps.APIVersions = chartutil.VersionSet(req.APIVersions)
	}
	if ch.Metadata.KubeVersion != "" && !chartutil.IsCompatibleRange(ch.Metadata.KubeVersion, caps.KubeVersion.String()) {
		return nil, fmt.Errorf("chart requires kubeVersion: %s which is incompatible with Kubernetes %s",
			ch.Metadata.KubeVersion, caps.KubeVersion.String())
	}

	user := map[string]any{}
	for _, name := range req.ChartValuesFiles {
		f := File{Path: name}
		for _, raw := range ch.Raw {
			if raw.Name == path.Clean(name) {
				f.Data = raw.Data
			}
		}
		if f.Data == nil {
			return nil, fmt.Errorf("values file %q (spec.source.helm.valuesFiles) not found in chart %s", name, ch.Name())
		}
		req.ValuesFiles = append(req.ValuesFiles, f)
	}
	for _, f := range req.ValuesFiles {
		m := map[string]any{}
		if err := yaml.Unmarshal(f.Data, &m); err != nil {
			return nil, fmt.Errorf("values file %s: %v", f.Path, err)
		}
		user = mergeMaps(user, m)
	}
	top, err := valuesFromRefs(req.ValuesFrom, req.Values)
	if err != nil {
		return nil, err
	}
	user = mergeMaps(user, top)
	if err := chartutil.ProcessDependenciesWithMerge(ch, user); err != nil {
		return nil, err
	}
	vals, err := chartutil.ToRenderValues(ch, user, chartutil.ReleaseOptions{
		Name:      req.ReleaseName,
		Namespace: req.Namespace,
		Revision:  1,
		IsInstall: true,
	}, caps)
	if err != nil {
		return nil, err
	}
	var rendered map[string]string
	var lk *lookups
	if req.Lookup {
		lk = newLookups(req.Lookups)
		rendered, err = engine.RenderWithClientProvider(ch, vals, lk)
		if err != nil && len(lk.missing) > 0 {
			// The error may come from a lookup that returned nothing: the host answers first.
			return &Response{OK: true, Chart: ch.Name(), Version: ch.Metadata.Version, Lookups: lk.missing}, nil
		}
	} else {
		rendered, err = engine.Engine{}.Render(ch, vals)
	}
	if err != nil {
		return nil, err
	}

	res := &Response{OK: true, Chart: ch.Name(), Version: ch.Metadata.Version}
	if lk != nil {
		res.Lookups = lk.missing
	}
	total := 0
	for _, crd := range ch.CRDObjects() {
		res.Manifests = append(res.Manifests, Manifest{Path: crd.Filename, Content: string(crd.File.Data)})
		total += len(crd.File.Data)
	}
	names := make([]string, 0, len(rendered))
	for name := range rendered {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		content := rendered[name]
		base := path.Base(name)
		if base == "NOTES.txt" || strings.HasPrefix(base, "_") || strings.TrimSpace(content) == "" {
			continue
		}
		total += len(content)
		if req.MaxOutputBytes > 0 && total > req.MaxOutputBytes {
			return nil, fmt.Errorf("rendered templates exceed %d bytes (at %s)", req.MaxOutputBytes, name)
		}
		res.Manifests = append(res.Manifests, Manifest{Path: name, Content: content})
	}
	return res, nil
}

func loadChart(req Request) (*chart.Chart, error) {
	if len(req.Archive) > 0 {
		return loader.LoadArchive(bytes.NewReader(req.Archive))
	}
	files, err := helmignored(req.Files)
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no chart files")
	}
	return loader.LoadFiles(files)
}

// helmignored applies the chart's .helmignore (and Helm's defaults) to the files as
// loader.LoadDir does for a chart directory: an ignored directory hides all it holds.
func helmignored(in []File) ([]*loader.BufferedFile, error) {
	rules := ignore.Empty()
	for _, f := range in {
		if f.Path == ignore.HelmIgnore {
			r, err := ignore.Parse(bytes.NewReader(f.Data))
			if err != nil {
				return nil, fmt.Errorf("%s: %v", ignore.HelmIgnore, err)
			}
			rules = r
		}
	}
	rules.AddDefaults()
	var out []*loader.BufferedFile
	ignoredDir := map[string]bool{}
	dirIgnored := func(p string) bool {
		parts := strings.Split(p, "/")
		for i := 1; i < len(parts); i++ {
			dir := strings.Join(parts[:i], "/")
			ig, ok := ignoredDir[dir]
			if !ok {
				ig = rules.Ignore(dir, fileInfo{name: parts[i-1], dir: true})
				ignoredDir[dir] = ig
			}
			if ig {
				return true
			}
		}
		return false
	}
	for _, f := range in {
		p := path.Clean(f.Path)
		if p == "." || strings.HasPrefix(p, "../") || strings.HasPrefix(p, "/") {
			return nil, fmt.Errorf("bad chart file path %q", f.Path)
		}
		if dirIgnored(p) || rules.Ignore(p, fileInfo{name: path.Base(p), size: int64(len(f.Data))}) {
			continue
		}
		if int64(len(f.Data)) > loader.MaxDecompressedFileSize {
			return nil, fmt.Errorf("chart file %q is larger than the maximum file size %d", p, loader.MaxDecompressedFileSize)
		}
		out = append(out, &loader.BufferedFile{Name: p, Data: bytes.TrimPrefix(f.Data, []byte{0xEF, 0xBB, 0xBF})})
	}
	return out, nil
}

// checkDependencies refuses dependencies listed in Chart.yaml that are not vendored in
// charts/ (helm's action.CheckDependencies), naming them; a render never downloads.
func checkDependencies(ch *chart.Chart, where string) error {
	var missing []string
	for _, dep := range ch.Metadata.Dependencies {
		found := false
		for _, sub := range ch.Dependencies() {
			if sub.Name() == dep.Name {
				found = true
				break
			}
		}
		if !found {
			missing = append(missing, fmt.Sprintf("%s %s (%s)", dep.Name, dep.Version, dep.Repository))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s: dependencies in Chart.yaml are not vendored in charts/: %s; "+
			"run `helm dependency build` and commit charts/ (a render downloads nothing)",
			where, strings.Join(missing, ", "))
	}
	for _, sub := range ch.Dependencies() {
		if err := checkDependencies(sub, where+"/charts/"+sub.Name()); err != nil {
			return err
		}
	}
	return nil
}

// mergeMaps merges b over a, recursing into maps (helm's pkg/cli/values mergeMaps, used for
// -f files and --set).
func mergeMaps(a, b map[string]any) map[string]any {
	out := make(map[string]any, len(a))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		if vm, ok := v.(map[string]any); ok {
			if bv, ok := out[k]; ok {
				if bm, ok := bv.(map[string]any); ok {
					out[k] = mergeMaps(bm, vm)
					continue
				}
			}
		}
		out[k] = v
	}
	return out
}

// fileInfo is the part of fs.FileInfo that .helmignore rules look at.
type fileInfo struct {
	name string
	size int64
	dir  bool
}

func (f fileInfo) Name() string { return f.name }
func (f fileInfo) Size() int64  { return f.size }
func (f fileInfo) Mode() fs.FileMode {
	if f.dir {
		return fs.ModeDir | 0o755
	}
	return 0o644
}
func (f fileInfo) ModTime() time.Time { return time.Time{} }
func (f fileInfo) IsDir() bool        { return f.dir }
func (f fileInfo) Sys() any           { return nil }
