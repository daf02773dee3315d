package main

import (
	"fmt"
	"path"
	"strings"

	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/kio"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// checkKustomizations walks the kustomization in dir and every local base and component it
// reaches, and refuses, naming the kustomization file and the entry: remote resources, bases
// and components (URLs, git repositories); entries pointing outside the repository; the
// helmCharts generator; exec and container KRM functions and other non-builtin plugins. Such
// entries would need the network or a process; a render has neither.
func checkKustomizations(fs *repoFS, dir string) error {
	seen := map[string]bool{}
	var walk func(dir string) error
	walk = func(dir string) error {
		if seen[dir] {
			return nil
		}
		seen[dir] = true
		file := kustomizationFile(fs, dir)
		if file == "" {
			return nil // krusty reports the missing kustomization
		}
		k, err := readKustomization(fs, file)
		if err != nil {
			return err
		}
		name := rel(file)
		if len(k.HelmCharts) > 0 || len(k.HelmChartInflationGenerator) > 0 || k.HelmGlobals != nil {
			entry := "helmCharts"
			if len(k.HelmCharts) > 0 {
				entry = fmt.Sprintf("helmCharts entry %q", k.HelmCharts[0].Name)
			}
			return fmt.Errorf("%s: %s: the helmCharts generator is not supported; "+
				"render the chart as its own App (spec.source.chart, or a path holding Chart.yaml)", name, entry)
		}
		fields := []struct {
			field   string
			entries []string
			plugins bool
		}{
			{"resources", k.Resources, false},
			{"components", k.Components, false},
			{"generators", k.Generators, true},
			{"transformers", k.Transformers, true},
			{"validators", k.Validators, true},
		}
		for _, f := range fields {
			for _, e := range f.entries {
				if f.plugins {
					if nodes, ok := inlineConfig(e); ok {
						if err := checkPluginConfigs(name, f.field, "inline", nodes); err != nil {
							return err
						}
						continue
					}
				}
				p := path.Join(dir, e)
				if strings.HasPrefix(e, "/") {
					return fmt.Errorf("%s: %s entry %q: absolute paths are not allowed", name, f.field, e)
				}
				if !inside(p) {
					return fmt.Errorf("%s: %s entry %q points outside the repository", name, f.field, e)
				}
				if !fs.Exists(p) && isRemote(e) {
					return fmt.Errorf("%s: %s entry %q is remote: remote bases and resources are not "+
						"supported (a render reads only the App's repository)", name, f.field, e)
				}
				if fs.IsDir(p) {
					if err := walk(p); err != nil {
						return err
					}
					continue
				}
				if f.plugins && fs.Exists(p) {
					data, err := fs.ReadFile(p)
					if err != nil {
						return fmt.Errorf("%s: %s entry %q: %v", name, f.field, e, err)
					}
					nodes, err := kio.FromBytes(data)
					if err != nil {
						continue // krusty reports the YAML error with its position
					}
					if err := checkPluginConfigs(name, f.field, e, nodes); err != nil {
						return err
					}
				}
			}
		}
		return nil
	}
	return walk(dir)
}

// isRemote tells a kustomize remote target (a URL or a git repository spec such as
// github.com/org/repo//path?ref=v1 or git@host:org/repo) from a local path that does not
// exist; kustomize's own rules are in api/internal/git/repospec.go.
func isRemote(e string) bool {
	if strings.Contains(e, "://") || strings.HasPrefix(e, "git@") || strings.HasPrefix(e, "git::") {
		return true
	}
	for _, q := range []string{"?ref=", "&ref=", "?version=", "?submodules=", "?timeout="} {
		if strings.Contains(e, q) {
			return true
		}
	}
	first, _, _ := strings.Cut(e, "/")
	return strings.Contains(first, ".") && !strings.HasPrefix(first, ".") && strings.Contains(e, "/")
}

// inlineConfig reports whether a generators/transformers/validators entry is inline YAML
// (kustomize accepts plugin configs written in place) and parses it.
func inlineConfig(e string) ([]*yaml.RNode, bool) {
	if !strings.Contains(e, ":") {
		return nil, false
	}
	nodes, err := kio.FromBytes([]byte(e))
	if err != nil || len(nodes) == 0 {
		return nil, false
	}
	for _, n := range nodes {
		if n.YNode().Kind != yaml.MappingNode || n.GetKind() == "" {
			return nil, false
		}
	}
	return nodes, true
}

// checkPluginConfigs refuses KRM functions (the config.kubernetes.io/function annotation:
// exec or container) and any plugin that is not one of kustomize's builtins.
func checkPluginConfigs(file, field, entry string, nodes []*yaml.RNode) error {
	for _, n := range nodes {
		ann := n.GetAnnotations()
		what := fmt.Sprintf("%s entry %q", field, entry)
		if entry == "inline" {
			what = fmt.Sprintf("inline %s entry %s %q", field, n.GetKind(), n.GetName())
		}
		for _, key := range []string{"config.kubernetes.io/function", "config.k8s.io/function"} {
			if _, ok := ann[key]; ok {
				return fmt.Errorf("%s: %s is a KRM function (%s): exec and container functions are not supported",
					file, what, key)
			}
		}
		if n.GetApiVersion() != "builtin" {
			return fmt.Errorf("%s: %s is the plugin %s/%s: only kustomize's builtin generators and "+
				"transformers (apiVersion: builtin) are supported", file, what, n.GetApiVersion(), n.GetKind())
		}
	}
	return nil
}

// applyOverrides edits the kustomization in dir as `kustomize edit set image` and
// `kustomize edit add patch` would (Argo CD and Flux apply spec overrides the same way): an
// image override replaces the entry with the same name or is appended; patches are appended.
func applyOverrides(fs *repoFS, dir string, images []types.Image, patches []types.Patch) error {
	file := kustomizationFile(fs, dir)
	if file == "" {
		return fmt.Errorf("%s: no kustomization.yaml, kustomization.yml or Kustomization", rel(dir))
	}
	k, err := readKustomization(fs, file)
	if err != nil {
		return err
	}
	for _, img := range images {
		replaced := false
		for i := range k.Images {
			if k.Images[i].Name == img.Name {
				k.Images[i] = img
				replaced = true
			}
		}
		if !replaced {
			k.Images = append(k.Images, img)
		}
	}
	k.Patches = append(k.Patches, patches...)
	out, err := yaml.Marshal(k)
	if err != nil {
		return err
	}
	return fs.WriteFile(file, out)
}
