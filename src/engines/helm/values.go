package main

import (
	"fmt"
	"strings"

	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/strvals"
)

// ValuesRef is one entry of spec.source.helm.valuesFrom as the host read it: the content of
// the key of a ConfigMap or Secret in the App's namespace.
type ValuesRef struct {
	// Source names it in messages: "ConfigMap team/web key values.yaml".
	Source string `json:"source"`
	Data   []byte `json:"data"`
	// TargetPath: Data is one value set at this path (Helm's --set syntax), not a YAML map.
	TargetPath string `json:"targetPath,omitempty"`
	// Secret: messages never quote the content.
	Secret bool `json:"secret,omitempty"`
}

// valuesFromRefs merges refs in order, then inline over them, as Flux's helm-controller does
// (fluxcd/pkg chartutil/values.go ChartValuesFromReferences): a YAML map is merged; a value
// with a targetPath is set with Helm's strvals into what was merged so far (the inline values
// included, as there). Inline values win over every ref.
func valuesFromRefs(refs []ValuesRef, inline map[string]any) (map[string]any, error) {
	result := map[string]any{}
	for _, ref := range refs {
		if ref.TargetPath != "" {
			result = mergeMaps(result, inline)
			if err := replacePathValue(result, ref.TargetPath, string(ref.Data)); err != nil {
				return nil, fmt.Errorf("%s (spec.source.helm.valuesFrom, targetPath %s): %s", ref.Source, ref.TargetPath, quietly(ref, err))
			}
			continue
		}
		vals, err := chartutil.ReadValues(ref.Data)
		if err != nil {
			return nil, fmt.Errorf("%s (spec.source.helm.valuesFrom) is not a YAML map of values: %s", ref.Source, quietly(ref, err))
		}
		result = mergeMaps(result, vals)
	}
	return mergeMaps(result, inline), nil
}

// replacePathValue sets path to value with Helm's --set parser; a quoted value stays a string
// (fluxcd/pkg chartutil/values.go ReplacePathValue).
func replacePathValue(values map[string]any, path, value string) error {
	quoted := (strings.HasPrefix(value, "'") && strings.HasSuffix(value, "'")) ||
		(strings.HasPrefix(value, `"`) && strings.HasSuffix(value, `"`))
	if quoted {
		return strvals.ParseIntoString(path+"="+strings.Trim(value, `'"`), values)
	}
	return strvals.ParseInto(path+"="+value, values)
}

// quietly is err's message, unless the content is a Secret's (a parser may quote it).
func quietly(ref ValuesRef, err error) string {
	if ref.Secret {
		return "the parser's message is withheld, the content being a Secret's"
	}
	return err.Error()
}
