// Package protocol is the helper side of the engines' wire on Node: a native engine (plumb-
// kustomize, plumb-helm) runs as a child process of plumb and talks JSON lines over its stdin
// and stdout. The message shapes are defined once, in ../wire.schema.json (generated from
// ../wire.ts); the tests of this module and of each engine check the Go types against it.
//
//	helper → host, once, after the engine has loaded: {"ready":{"engine":"kustomize","protocol":1}}
//	host → helper, per render:                        {"id":7,"request":{...engine request...}}
//	helper → host, per render:                        {"id":7,"response":{"ok":true,...}}
//
// Requests are served one at a time, in order. Unknown fields are ignored on both sides, so a
// message can grow (a per-request limit, a callback from the helper to the host such as Helm's
// lookup) without breaking an older peer.
package protocol

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"sync"
	"time"
)

// Version is the protocol's version, sent in Ready; the host refuses a helper of another one.
const Version = 1

// Request is one message from the host.
type Request struct {
	ID      uint64          `json:"id"`
	Request json.RawMessage `json:"request"`
}

// Message is one message from the helper: Ready, or the response to the request with ID.
type Message struct {
	Ready    *Ready          `json:"ready,omitempty"`
	ID       uint64          `json:"id,omitempty"`
	Response json.RawMessage `json:"response,omitempty"`
}

// Ready says the engine has loaded and can serve renders.
type Ready struct {
	Engine   string `json:"engine"`
	Protocol int    `json:"protocol"`
}

// Failure is the response every engine gives when it could not render: {"ok":false,"error":...}.
type Failure struct {
	OK    bool   `json:"ok"`
	Error string `json:"error"`
}

// MaxHeapEnv names the variable that bounds the helper's Go heap in MiB (default 1024): past
// it, the render in progress fails with a message saying so and the helper exits (the host
// starts another for the next render).
const MaxHeapEnv = "PLUMB_ENGINE_MAX_HEAP_MB"

// Serve loads the engine (warmUp, which may be nil, runs once first, so that the host's
// render limit does not pay for what the engine initializes lazily), says Ready, and then
// answers each request line on in with handle's response on out, until in ends.
func Serve(engine string, warmUp func(), handle func(request []byte) []byte, in io.Reader, out io.Writer) error {
	limit := uint64(1024)
	if v, err := strconv.ParseUint(os.Getenv(MaxHeapEnv), 10, 32); err == nil && v > 0 {
		limit = v
	}
	// Few collections during a render: a typical one allocates tens of MiB and is followed by
	// runtime.GC() anyway, so collecting at Go's default pace is CPU spent for little (a no-op
	// CLI run pays it every time). The heap may grow to 9× what is live between collections,
	// but never past three quarters of its cap (the memory limit makes Go collect first).
	debug.SetGCPercent(800)
	debug.SetMemoryLimit(int64(limit<<20) / 4 * 3)
	if warmUp != nil {
		warmUp()
	}
	var mu sync.Mutex
	w := bufio.NewWriterSize(out, 1<<16)
	write := func(m Message) {
		b, _ := json.Marshal(m)
		_, _ = w.Write(b)
		_ = w.WriteByte('\n')
		_ = w.Flush()
	}
	var current uint64 // the request being rendered (under mu)
	go func() {
		var m runtime.MemStats
		for range time.Tick(50 * time.Millisecond) {
			runtime.ReadMemStats(&m)
			if m.HeapAlloc > limit<<20 {
				mu.Lock()
				res, _ := json.Marshal(Failure{Error: fmt.Sprintf("render used more than %d MiB of memory", limit)})
				write(Message{ID: current, Response: res})
				os.Exit(3)
			}
		}
	}()
	mu.Lock()
	write(Message{Ready: &Ready{Engine: engine, Protocol: Version}})
	mu.Unlock()
	r := bufio.NewReaderSize(in, 1<<20)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 1 {
			var req Request
			var res []byte
			if jerr := json.Unmarshal(line, &req); jerr != nil {
				res, _ = json.Marshal(Failure{Error: "bad message: " + jerr.Error()})
			} else {
				mu.Lock()
				current = req.ID
				mu.Unlock()
				res = handle(req.Request)
			}
			mu.Lock()
			write(Message{ID: req.ID, Response: res})
			current = 0
			mu.Unlock()
			runtime.GC()
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
