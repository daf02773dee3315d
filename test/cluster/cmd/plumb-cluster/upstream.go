package main

import (
	"github.com/spf13/cobra"
	"k8s.io/component-base/cli"
	kubectlcmd "k8s.io/kubectl/pkg/cmd"
	kubectlutil "k8s.io/kubectl/pkg/cmd/util"
	apiserver "k8s.io/kubernetes/cmd/kube-apiserver/app"
	controllermanager "k8s.io/kubernetes/cmd/kube-controller-manager/app"
)

func runUpstream(cmd *cobra.Command, args []string) int {
	cmd.SetArgs(args)
	return cli.Run(cmd)
}

func runAPIServer(args []string) int {
	return runUpstream(apiserver.NewAPIServerCommand(), args)
}

func runControllerManager(args []string) int {
	return runUpstream(controllermanager.NewControllerManagerCommand(), args)
}

func runKubectl(args []string) int {
	cmd := kubectlcmd.NewDefaultKubectlCommand()
	cmd.SetArgs(args)
	if err := cli.RunNoErrOutput(cmd); err != nil {
		kubectlutil.CheckErr(err) // prints and exits non-zero
	}
	return 0
}
