//go:build !js

package main

import (
	"fmt"
	"os"

	"plumb/engines/protocol"
)

// main serves renders over stdin and stdout (plumb-helm: see the protocol package) until stdin
// closes. plumb on Node starts it once per process. PLUMB_ENGINE_MAX_HEAP_MB (default 1024)
// bounds the heap: past it the current render fails and the process exits.
func main() {
	if err := protocol.Serve("helm", nil, Handle, os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
