package main

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// runCheckReady probes a started cluster once: apiserver /readyz, the
// default ServiceAccount and root CA ConfigMap (controller-manager is
// working), and the simulated node is Ready without not-ready taints.
// Exit 0 when everything is ready, 1 (with the reason on stdout) otherwise.
func runCheckReady(args []string) int {
	fs := flag.NewFlagSet("check-ready", flag.ExitOnError)
	kubeconfig := fs.String("kubeconfig", "", "admin kubeconfig")
	nodeName := fs.String("node-name", "plumb-node", "node that must be Ready (empty: skip)")
	timeout := fs.Duration("timeout", 3*time.Second, "overall timeout of this probe")
	_ = fs.Parse(args)

	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		fmt.Println("kubeconfig:", err)
		return 2
	}
	cfg.Timeout = *timeout
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		fmt.Println("client:", err)
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()

	body, err := client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
	if err != nil || strings.TrimSpace(string(body)) != "ok" {
		fmt.Printf("apiserver /readyz not ok: %v %s\n", err, firstLine(string(body)))
		return 1
	}
	if _, err := client.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{}); err != nil {
		fmt.Println("serviceaccount default/default:", err)
		return 1
	}
	if _, err := client.CoreV1().ConfigMaps("default").Get(ctx, "kube-root-ca.crt", metav1.GetOptions{}); err != nil {
		fmt.Println("configmap default/kube-root-ca.crt:", err)
		return 1
	}
	if *nodeName != "" {
		node, err := client.CoreV1().Nodes().Get(ctx, *nodeName, metav1.GetOptions{})
		if err != nil {
			fmt.Printf("node %s: %v\n", *nodeName, err)
			return 1
		}
		ready := false
		for _, c := range node.Status.Conditions {
			if c.Type == v1.NodeReady && c.Status == v1.ConditionTrue {
				ready = true
			}
		}
		if !ready {
			fmt.Printf("node %s: not Ready\n", *nodeName)
			return 1
		}
		for _, t := range node.Spec.Taints {
			if strings.HasPrefix(t.Key, "node.kubernetes.io/") {
				fmt.Printf("node %s: tainted %s:%s\n", *nodeName, t.Key, t.Effect)
				return 1
			}
		}
	}
	fmt.Println("ready")
	return 0
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
