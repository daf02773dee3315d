package main

import (
	"fmt"
	"net"
	"os"
	"strconv"
)

// runFreePort prints N distinct currently-free TCP ports on 127.0.0.1.
func runFreePort(args []string) int {
	n := 1
	if len(args) > 0 {
		v, err := strconv.Atoi(args[0])
		if err != nil || v < 1 || v > 64 {
			fmt.Fprintln(os.Stderr, "freeport: usage: freeport [N]")
			return 2
		}
		n = v
	}
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			fmt.Fprintln(os.Stderr, "freeport:", err)
			return 1
		}
		ls = append(ls, l)
		fmt.Println(l.Addr().(*net.TCPAddr).Port)
	}
	return 0
}
