//go:build !js

package main

import (
	"fmt"
	"os"

	"plumb/engines/protocol"
)

// main serves renders over stdin and stdout (plumb-kustomize: see the protocol package) until
// stdin closes. plumb on Node starts it once per process.
func main() {
	if err := protocol.Serve("kustomize", warmUp, Handle, os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// warmUp builds a one-object kustomization, so that what krusty initializes on first use (its
// built-in OpenAPI schema among others) counts against the engine's start-up, not against the
// first render's time limit.
func warmUp() {
	_, _ = Build(Request{
		Path: "app",
		Files: []File{
			{Path: "app/kustomization.yaml", Data: []byte("namePrefix: w-\nresources:\n  - cm.yaml\npatches:\n  - patch: '[{\"op\": \"add\", \"path\": \"/data/b\", \"value\": \"2\"}]'\n    target: {kind: ConfigMap}\n")},
			{Path: "app/cm.yaml", Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  a: '1'\n")},
		},
	})
}
