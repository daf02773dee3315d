//go:build !js

package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"sync"
	"time"
)

// main serves renders over stdin/stdout, one JSON request per line and one JSON response
// per line, until stdin closes: plumb starts it once per process and kills it when a render
// passes its time limit. PLUMB_HELM_MAX_HEAP_MB (default 1024) bounds the heap: past it the
// current render fails and the process exits.
func main() {
	limit := uint64(1024)
	if v, err := strconv.ParseUint(os.Getenv("PLUMB_HELM_MAX_HEAP_MB"), 10, 32); err == nil && v > 0 {
		limit = v
	}
	var mu sync.Mutex
	out := bufio.NewWriter(os.Stdout)
	write := func(b []byte) {
		_, _ = out.Write(b)
		_ = out.WriteByte('\n')
		_ = out.Flush()
	}
	go func() {
		var m runtime.MemStats
		for range time.Tick(50 * time.Millisecond) {
			runtime.ReadMemStats(&m)
			if m.HeapAlloc > limit<<20 {
				mu.Lock()
				b, _ := json.Marshal(Response{Error: fmt.Sprintf("render used more than %d MiB of memory", limit)})
				write(b)
				os.Exit(3)
			}
		}
	}()
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	for {
		line, err := in.ReadBytes('\n')
		if len(line) > 1 {
			res := Handle(line)
			mu.Lock()
			write(res)
			mu.Unlock()
			runtime.GC()
		}
		if err == io.EOF {
			return
		}
		if err != nil {
			os.Exit(1)
		}
	}
}
