// Command plumb-node is the real node of plumb's test cluster, a multi-call
// binary built from the same Kubernetes modules as plumb-cluster:
//
//	plumb-node kubelet ...         upstream kubelet (talks CRI to containerd)
//	plumb-node kube-scheduler ...  upstream kube-scheduler (binds Pods to the node)
//	plumb-node oci-image ...       writes an OCI image archive of a local root filesystem
//
// It is a second binary so that the default, simulated node (plumb-cluster
// kubelet-sim) never pays for compiling and linking the kubelet.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

var subcommands = map[string]func(args []string) int{
	"kubelet":        runKubelet,
	"kube-scheduler": runScheduler,
	"oci-image":      runOCIImage,
}

func usage() {
	names := make([]string, 0, len(subcommands))
	for n := range subcommands {
		names = append(names, n)
	}
	sort.Strings(names)
	fmt.Fprintf(os.Stderr, "usage: plumb-node <%s> [args...]\n", strings.Join(names, "|"))
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
		fmt.Fprintf(os.Stderr, "plumb-node: unknown subcommand %q\n", name)
		usage()
		os.Exit(2)
	}
	// Upstream commands read os.Args (cobra): make it look as if the
	// subcommand were its own binary.
	os.Args = append([]string{name}, args...)
	os.Exit(run(args))
}
