//go:build !js

package main

import (
	"io"
	"os"
)

// main reads one JSON request on stdin and writes the JSON response on stdout (for
// debugging the engine outside JavaScript; plumb runs the js/wasm build).
func main() {
	in, err := io.ReadAll(os.Stdin)
	if err != nil {
		os.Exit(1)
	}
	_, _ = os.Stdout.Write(Handle(in))
}
