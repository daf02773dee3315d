// Command plumb-cluster is a multi-call binary that runs a small, real
// Kubernetes control plane for plumb's end-to-end tests:
//
//	plumb-cluster etcd ...                     embedded etcd (loopback only)
//	plumb-cluster kube-apiserver ...           upstream kube-apiserver
//	plumb-cluster kube-controller-manager ...  upstream kube-controller-manager
//	plumb-cluster kubelet-sim ...              fake node: binds pods, marks them Running/Ready
//	plumb-cluster kubectl ...                  upstream kubectl
//	plumb-cluster check-ready ...              one readiness probe of a started cluster
//	plumb-cluster freeport N                   print N free TCP ports on 127.0.0.1
//
// Only the chosen subcommand's command (and so its flags) is constructed.
// The binary may also be invoked through a symlink named after a subcommand.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

var subcommands = map[string]func(args []string) int{
	"etcd":                    runEtcd,
	"kube-apiserver":          runAPIServer,
	"kube-controller-manager": runControllerManager,
	"kubelet-sim":             runKubeletSim,
	"kubectl":                 runKubectl,
	"check-ready":             runCheckReady,
	"freeport":                runFreePort,
}

func usage() {
	names := make([]string, 0, len(subcommands))
	for n := range subcommands {
		names = append(names, n)
	}
	sort.Strings(names)
	fmt.Fprintf(os.Stderr, "usage: plumb-cluster <%s> [args...]\n", strings.Join(names, "|"))
}

func main() {
	name := filepath.Base(os.Args[0])
	args := os.Args[1:]
	if _, ok := subcommands[name]; !ok {
		if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
			usage()
			os.Exit(2)
		}
		name, args = args[0], args[1:]
	}
	run, ok := subcommands[name]
	if !ok {
		fmt.Fprintf(os.Stderr, "plumb-cluster: unknown subcommand %q\n", name)
		usage()
		os.Exit(2)
	}
	// Upstream commands read os.Args (cobra, kubectl's plugin handling):
	// make it look as if the subcommand were its own binary.
	os.Args = append([]string{name}, args...)
	os.Exit(run(args))
}
