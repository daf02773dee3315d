package main

import (
	"flag"
	"fmt"
	"net/url"
	"os"
	"os/signal"
	"syscall"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
)

// runEtcd runs a single-member etcd bound to loopback addresses only.
func runEtcd(args []string) int {
	fs := flag.NewFlagSet("etcd", flag.ExitOnError)
	dataDir := fs.String("data-dir", "", "data directory (required)")
	clientAddr := fs.String("listen-client", "127.0.0.1:2379", "client host:port (loopback)")
	peerAddr := fs.String("listen-peer", "127.0.0.1:2380", "peer host:port (loopback)")
	noFsync := fs.Bool("unsafe-no-fsync", true, "skip fsync: faster, only for throwaway test clusters")
	logLevel := fs.String("log-level", "warn", "debug|info|warn|error")
	_ = fs.Parse(args)
	if *dataDir == "" {
		fmt.Fprintln(os.Stderr, "etcd: --data-dir is required")
		return 2
	}
	cu, err := url.Parse("http://" + *clientAddr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "etcd:", err)
		return 2
	}
	pu, err := url.Parse("http://" + *peerAddr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "etcd:", err)
		return 2
	}

	cfg := embed.NewConfig()
	cfg.Name = "plumb"
	cfg.Dir = *dataDir
	cfg.ListenClientUrls = []url.URL{*cu}
	cfg.AdvertiseClientUrls = []url.URL{*cu}
	cfg.ListenPeerUrls = []url.URL{*pu}
	cfg.AdvertisePeerUrls = []url.URL{*pu}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.UnsafeNoFsync = *noFsync
	cfg.LogLevel = *logLevel
	// NewConfig leaves this 0, which logs every request at warn level.
	cfg.WarningUnaryRequestDuration = time.Second
	cfg.WarningApplyDuration = time.Second

	e, err := embed.StartEtcd(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "etcd: start:", err)
		return 1
	}
	defer e.Close()

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	select {
	case <-e.Server.ReadyNotify():
		fmt.Fprintf(os.Stderr, "etcd: ready, serving clients on %s\n", cu)
	case <-time.After(60 * time.Second):
		fmt.Fprintln(os.Stderr, "etcd: not ready after 60s")
		return 1
	case s := <-sig:
		fmt.Fprintln(os.Stderr, "etcd: signal", s)
		return 0
	}
	select {
	case err := <-e.Err():
		fmt.Fprintln(os.Stderr, "etcd: error:", err)
		return 1
	case s := <-sig:
		fmt.Fprintln(os.Stderr, "etcd: signal", s, "- stopping")
		return 0
	}
}
