//go:build js && wasm

package main

import "syscall/js"

// main exposes globalThis.plumbHelm(request: string | Uint8Array): string (JSON, see Request
// and Response) and then waits for calls.
func main() {
	js.Global().Set("plumbHelm", js.FuncOf(func(_ js.Value, args []js.Value) any {
		if len(args) != 1 {
			return `{"ok":false,"error":"plumbHelm takes one argument"}`
		}
		var in []byte
		if args[0].Type() == js.TypeString {
			in = []byte(args[0].String())
		} else {
			in = make([]byte, args[0].Get("byteLength").Int())
			js.CopyBytesToGo(in, args[0])
		}
		return string(Handle(in))
	}))
	select {}
}
