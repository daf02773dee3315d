package main

// kubelet-sim: a stand-in for kube-scheduler + kubelet, enough for e2e tests
// of controllers that create workloads. It registers one Node, keeps its
// Lease and Ready condition fresh, binds unscheduled Pods to it, and writes
// the Pod status a kubelet would write for containers that start at once.
//
// Conventions, for tests:
//   - an image containing "doesnotexist", or with the tag ":bad", never
//     "pulls": the container waits in ImagePullBackOff and the Pod stays
//     Pending and unready;
//   - Pods owned by a Job succeed after --job-duration; with an image tag
//     ":fail" they fail (exit code 1) instead;
//   - Pods whose nodeSelector / required node affinity does not match the
//     node stay Pending with PodScheduled=False (Unschedulable);
//   - deleted Pods (deletionTimestamp set) are removed at once (grace 0).

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
)

const simKubeletVersion = "v1.35.4"

type written struct {
	rv      string
	desired *v1.PodStatus
}

type kubeletSim struct {
	client   kubernetes.Interface
	nodeName string
	nodeIP   string
	jobDur   time.Duration
	cpu      string
	memory   string
	maxPods  string

	podLister corelisters.PodLister
	queue     workqueue.TypedRateLimitingInterface[string]

	mu      sync.Mutex
	node    *v1.Node
	ipBase  uint32
	ipNext  uint32
	ipLimit uint32
	ipByUID map[types.UID]string
	ipUsed  map[string]types.UID
	written map[types.UID]written
}

func runKubeletSim(args []string) int {
	fs := flag.NewFlagSet("kubelet-sim", flag.ExitOnError)
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig with rights to manage nodes, leases, pods and pods/binding")
	nodeName := fs.String("node-name", "plumb-node", "name of the simulated node")
	nodeIP := fs.String("node-ip", "127.0.0.1", "InternalIP of the node, used as hostIP of its pods")
	podCIDR := fs.String("pod-cidr", "10.244.0.0/16", "range pod IPs are handed out from (written into status only; nothing listens there)")
	jobDur := fs.Duration("job-duration", 2*time.Second, "how long a Job's pod runs before it succeeds")
	cpu := fs.String("cpu", "8", "node cpu capacity")
	memory := fs.String("memory", "32Gi", "node memory capacity")
	maxPods := fs.String("max-pods", "250", "node pod capacity")
	workers := fs.Int("workers", 4, "concurrent pod workers")
	_ = fs.Parse(args)

	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		fmt.Fprintln(os.Stderr, "kubelet-sim:", err)
		return 2
	}
	cfg.QPS, cfg.Burst = 100, 200
	cfg.UserAgent = "plumb-kubelet-sim"
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "kubelet-sim:", err)
		return 2
	}
	_, ipnet, err := net.ParseCIDR(*podCIDR)
	if err != nil || ipnet.IP.To4() == nil {
		fmt.Fprintln(os.Stderr, "kubelet-sim: --pod-cidr must be an IPv4 CIDR")
		return 2
	}
	ones, bits := ipnet.Mask.Size()

	s := &kubeletSim{
		client:   client,
		nodeName: *nodeName,
		nodeIP:   *nodeIP,
		jobDur:   *jobDur,
		cpu:      *cpu,
		memory:   *memory,
		maxPods:  *maxPods,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "pods"}),
		ipBase:  binary.BigEndian.Uint32(ipnet.IP.To4()),
		ipNext:  2,
		ipLimit: uint32(1) << uint(bits-ones),
		ipByUID: map[types.UID]string{},
		ipUsed:  map[string]types.UID{},
		written: map[types.UID]written{},
	}

	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer cancel()

	// Register the node before handling pods: binding needs it.
	if err := wait.PollUntilContextTimeout(ctx, time.Second, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := s.syncNode(ctx); err != nil {
			klog.Warningf("registering node %s: %v", s.nodeName, err)
			return false, nil
		}
		return true, nil
	}); err != nil {
		fmt.Fprintln(os.Stderr, "kubelet-sim: could not register node:", err)
		return 1
	}
	klog.Infof("node %s registered", s.nodeName)
	go s.heartbeat(ctx)

	factory := informers.NewSharedInformerFactory(client, 0)
	podInformer := factory.Core().V1().Pods()
	s.podLister = podInformer.Lister()
	enqueue := func(obj interface{}) {
		if key, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
			s.queue.Add(key)
		}
	}
	_, _ = podInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj interface{}) {
			if p, ok := obj.(*v1.Pod); ok && p.Status.PodIP != "" && p.Spec.NodeName == s.nodeName && !p.Spec.HostNetwork {
				s.recordIP(p.UID, p.Status.PodIP)
			}
			enqueue(obj)
		},
		UpdateFunc: func(_, obj interface{}) { enqueue(obj) },
		DeleteFunc: func(obj interface{}) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			if p, ok := obj.(*v1.Pod); ok {
				s.releasePod(p.UID)
			}
		},
	})
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), podInformer.Informer().HasSynced) {
		return 1
	}
	for i := 0; i < *workers; i++ {
		go s.worker(ctx)
	}
	klog.Infof("kubelet-sim running for node %s", s.nodeName)
	<-ctx.Done()
	s.queue.ShutDown()
	klog.Info("kubelet-sim stopping")
	return 0
}

// --- node, lease -----------------------------------------------------------

func (s *kubeletSim) heartbeat(ctx context.Context) {
	t := time.NewTicker(10 * time.Second)
	defer t.Stop()
	n := 0
	for {
		if err := s.renewLease(ctx); err != nil && ctx.Err() == nil {
			klog.Warningf("renewing lease: %v", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		n++
		if n%2 == 0 { // node status every 20s; the lease carries liveness in between
			if err := s.syncNode(ctx); err != nil && ctx.Err() == nil {
				klog.Warningf("updating node status: %v", err)
			}
		}
	}
}

func (s *kubeletSim) syncNode(ctx context.Context) error {
	nodes := s.client.CoreV1().Nodes()
	node, err := nodes.Get(ctx, s.nodeName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		node = &v1.Node{
			ObjectMeta: metav1.ObjectMeta{
				Name: s.nodeName,
				Labels: map[string]string{
					"kubernetes.io/hostname": s.nodeName,
					"kubernetes.io/os":       "linux",
					"kubernetes.io/arch":     runtime.GOARCH,
					"beta.kubernetes.io/os":  "linux",
					"plumb.dev/simulated":    "true",
				},
			},
			Spec: v1.NodeSpec{},
		}
		node, err = nodes.Create(ctx, node, metav1.CreateOptions{})
	}
	if err != nil {
		return err
	}
	now := metav1.Now()
	st := node.Status.DeepCopy()
	res := v1.ResourceList{
		v1.ResourceCPU:              resource.MustParse(s.cpu),
		v1.ResourceMemory:           resource.MustParse(s.memory),
		v1.ResourcePods:             resource.MustParse(s.maxPods),
		v1.ResourceEphemeralStorage: resource.MustParse("100Gi"),
	}
	st.Capacity = res
	st.Allocatable = res.DeepCopy()
	st.Phase = v1.NodeRunning
	st.Addresses = []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: s.nodeIP}, {Type: v1.NodeHostName, Address: s.nodeName}}
	st.DaemonEndpoints = v1.NodeDaemonEndpoints{KubeletEndpoint: v1.DaemonEndpoint{Port: 10250}}
	id := sha256.Sum256([]byte(s.nodeName))
	hexID := hex.EncodeToString(id[:16])
	st.NodeInfo = v1.NodeSystemInfo{
		MachineID:               hexID,
		SystemUUID:              hexID,
		BootID:                  hexID,
		KernelVersion:           "plumb-sim",
		OSImage:                 "plumb kubelet-sim",
		ContainerRuntimeVersion: "plumb-sim://" + simKubeletVersion,
		KubeletVersion:          simKubeletVersion,
		OperatingSystem:         "linux",
		Architecture:            runtime.GOARCH,
	}
	conds := []v1.NodeCondition{
		{Type: v1.NodeMemoryPressure, Status: v1.ConditionFalse, Reason: "KubeletHasSufficientMemory", Message: "kubelet has sufficient memory available"},
		{Type: v1.NodeDiskPressure, Status: v1.ConditionFalse, Reason: "KubeletHasNoDiskPressure", Message: "kubelet has no disk pressure"},
		{Type: v1.NodePIDPressure, Status: v1.ConditionFalse, Reason: "KubeletHasSufficientPID", Message: "kubelet has sufficient PID available"},
		{Type: v1.NodeReady, Status: v1.ConditionTrue, Reason: "KubeletReady", Message: "kubelet is posting ready status (plumb kubelet-sim)"},
	}
	for i := range conds {
		c := &conds[i]
		c.LastHeartbeatTime = now
		c.LastTransitionTime = now
		for _, old := range st.Conditions {
			if old.Type == c.Type && old.Status == c.Status {
				c.LastTransitionTime = old.LastTransitionTime
			}
		}
	}
	st.Conditions = conds
	node.Status = *st
	node, err = nodes.UpdateStatus(ctx, node, metav1.UpdateOptions{})
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.node = node
	s.mu.Unlock()
	return nil
}

func (s *kubeletSim) renewLease(ctx context.Context) error {
	leases := s.client.CoordinationV1().Leases(v1.NamespaceNodeLease)
	now := metav1.NewMicroTime(time.Now())
	lease, err := leases.Get(ctx, s.nodeName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		lease = &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: s.nodeName, Namespace: v1.NamespaceNodeLease},
			Spec: coordinationv1.LeaseSpec{
				HolderIdentity:       ptr.To(s.nodeName),
				LeaseDurationSeconds: ptr.To[int32](40),
				RenewTime:            &now,
			},
		}
		s.mu.Lock()
		if s.node != nil {
			lease.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: s.node.Name, UID: s.node.UID}}
		}
		s.mu.Unlock()
		_, err = leases.Create(ctx, lease, metav1.CreateOptions{})
		return err
	}
	if err != nil {
		return err
	}
	lease.Spec.HolderIdentity = ptr.To(s.nodeName)
	lease.Spec.RenewTime = &now
	_, err = leases.Update(ctx, lease, metav1.UpdateOptions{})
	return err
}

// --- pod IPs ---------------------------------------------------------------

func (s *kubeletSim) recordIP(uid types.UID, ip string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ipByUID[uid] = ip
	s.ipUsed[ip] = uid
}

func (s *kubeletSim) releasePod(uid types.UID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ip, ok := s.ipByUID[uid]; ok {
		delete(s.ipUsed, ip)
		delete(s.ipByUID, uid)
	}
	delete(s.written, uid)
}

func (s *kubeletSim) podIP(p *v1.Pod) string {
	if p.Spec.HostNetwork {
		return s.nodeIP
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if ip, ok := s.ipByUID[p.UID]; ok {
		return ip
	}
	if p.Status.PodIP != "" {
		s.ipByUID[p.UID] = p.Status.PodIP
		s.ipUsed[p.Status.PodIP] = p.UID
		return p.Status.PodIP
	}
	for tries := uint32(0); tries < s.ipLimit; tries++ {
		off := s.ipNext
		s.ipNext++
		if s.ipNext >= s.ipLimit-1 {
			s.ipNext = 2
		}
		var b [4]byte
		binary.BigEndian.PutUint32(b[:], s.ipBase+off)
		ip := net.IP(b[:]).String()
		if _, used := s.ipUsed[ip]; !used {
			s.ipUsed[ip] = p.UID
			s.ipByUID[p.UID] = ip
			return ip
		}
	}
	return ""
}

// --- pods ------------------------------------------------------------------

func (s *kubeletSim) worker(ctx context.Context) {
	for {
		key, quit := s.queue.Get()
		if quit {
			return
		}
		after, err := s.syncPod(ctx, key)
		switch {
		case err != nil:
			if !apierrors.IsConflict(err) {
				klog.V(1).Infof("pod %s: %v (will retry)", key, err)
			}
			s.queue.AddRateLimited(key)
		case after > 0:
			s.queue.Forget(key)
			s.queue.AddAfter(key, after)
		default:
			s.queue.Forget(key)
		}
		s.queue.Done(key)
	}
}

func (s *kubeletSim) syncPod(ctx context.Context, key string) (time.Duration, error) {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return 0, nil
	}
	pod, err := s.podLister.Pods(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	pods := s.client.CoreV1().Pods(ns)

	if pod.DeletionTimestamp != nil {
		if pod.Spec.NodeName != s.nodeName && pod.Spec.NodeName != "" {
			return 0, nil
		}
		if pod.DeletionGracePeriodSeconds != nil && *pod.DeletionGracePeriodSeconds == 0 {
			return 0, nil // already final; waiting for finalizers
		}
		uid := pod.UID
		err := pods.Delete(ctx, name, metav1.DeleteOptions{
			GracePeriodSeconds: ptr.To[int64](0),
			Preconditions:      &metav1.Preconditions{UID: &uid},
		})
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			return 0, nil
		}
		return 0, err
	}

	if pod.Spec.NodeName == "" {
		return 0, s.schedule(ctx, pod)
	}
	if pod.Spec.NodeName != s.nodeName {
		return 0, nil
	}
	if pod.Status.Phase == v1.PodSucceeded || pod.Status.Phase == v1.PodFailed {
		return 0, nil
	}

	desired, after := s.desiredStatus(pod)
	if equality.Semantic.DeepEqual(&pod.Status, desired) {
		return after, nil
	}
	s.mu.Lock()
	w, seen := s.written[pod.UID]
	s.mu.Unlock()
	if seen && w.rv == pod.ResourceVersion && equality.Semantic.DeepEqual(w.desired, desired) {
		// The server normalised what we wrote; writing it again would loop.
		return after, nil
	}
	p := pod.DeepCopy()
	p.Status = *desired
	res, err := pods.UpdateStatus(ctx, p, metav1.UpdateOptions{})
	if err != nil {
		if apierrors.IsNotFound(err) {
			return 0, nil
		}
		return 0, err
	}
	s.mu.Lock()
	s.written[pod.UID] = written{rv: res.ResourceVersion, desired: desired}
	s.mu.Unlock()
	return after, nil
}

func (s *kubeletSim) schedule(ctx context.Context, pod *v1.Pod) error {
	if sn := pod.Spec.SchedulerName; sn != "" && sn != v1.DefaultSchedulerName {
		return nil // someone else's pod
	}
	s.mu.Lock()
	node := s.node
	s.mu.Unlock()
	if node == nil {
		return fmt.Errorf("node not registered yet")
	}
	if ok, _ := nodeaffinity.GetRequiredNodeAffinity(pod).Match(node); !ok {
		st := pod.Status.DeepCopy()
		setPodCondition(st, v1.PodCondition{
			Type: v1.PodScheduled, Status: v1.ConditionFalse, Reason: v1.PodReasonUnschedulable,
			Message: "0/1 nodes are available: 1 node(s) didn't match Pod's node affinity/selector.",
		}, metav1.Now())
		if equality.Semantic.DeepEqual(&pod.Status, st) {
			return nil
		}
		p := pod.DeepCopy()
		p.Status = *st
		_, err := s.client.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, p, metav1.UpdateOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	}
	err := s.client.CoreV1().Pods(pod.Namespace).Bind(ctx, &v1.Binding{
		ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID},
		Target:     v1.ObjectReference{Kind: "Node", Name: s.nodeName},
	}, metav1.CreateOptions{})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	return err
}

func badImage(image string) bool {
	return strings.Contains(image, "doesnotexist") || strings.HasSuffix(image, ":bad") || strings.Contains(image, ":bad@")
}

func failImage(image string) bool {
	return strings.HasSuffix(image, ":fail") || strings.Contains(image, ":fail@")
}

func isJobPod(p *v1.Pod) bool {
	ref := metav1.GetControllerOf(p)
	return ref != nil && ref.Kind == "Job" && strings.HasPrefix(ref.APIVersion, "batch/")
}

func findStatus(sts []v1.ContainerStatus, name string) *v1.ContainerStatus {
	for i := range sts {
		if sts[i].Name == name {
			return &sts[i]
		}
	}
	return nil
}

// setPodCondition sets c in st, keeping lastTransitionTime when the status
// does not change.
func setPodCondition(st *v1.PodStatus, c v1.PodCondition, now metav1.Time) {
	for i := range st.Conditions {
		old := &st.Conditions[i]
		if old.Type != c.Type {
			continue
		}
		c.LastTransitionTime = old.LastTransitionTime
		c.LastProbeTime = old.LastProbeTime
		if old.Status != c.Status || c.LastTransitionTime.IsZero() {
			c.LastTransitionTime = now
		}
		*old = c
		return
	}
	c.LastTransitionTime = now
	st.Conditions = append(st.Conditions, c)
}

func (s *kubeletSim) containerStatus(pod *v1.Pod, old []v1.ContainerStatus, c v1.Container, terminal v1.PodPhase, initDone bool, now metav1.Time) v1.ContainerStatus {
	cs := v1.ContainerStatus{Name: c.Name, Image: c.Image}
	prev := findStatus(old, c.Name)
	if prev != nil {
		cs.RestartCount = prev.RestartCount
	}
	if badImage(c.Image) {
		cs.State.Waiting = &v1.ContainerStateWaiting{
			Reason:  "ImagePullBackOff",
			Message: fmt.Sprintf("Back-off pulling image %q: ErrImagePull: not found (plumb kubelet-sim)", c.Image),
		}
		cs.Started = ptr.To(false)
		return cs
	}
	cs.ImageID = "plumb-sim://" + c.Image
	cs.ContainerID = "plumb-sim://" + string(pod.UID) + "/" + c.Name
	startedAt := now
	if prev != nil && prev.State.Running != nil {
		startedAt = prev.State.Running.StartedAt
	} else if prev != nil && prev.State.Terminated != nil {
		startedAt = prev.State.Terminated.StartedAt
	}
	if !initDone {
		cs.State.Waiting = &v1.ContainerStateWaiting{Reason: "PodInitializing"}
		cs.ImageID, cs.ContainerID = "", ""
		cs.Started = ptr.To(false)
		return cs
	}
	if terminal != "" {
		if prev != nil && prev.State.Terminated != nil {
			cs.State.Terminated = prev.State.Terminated
		} else {
			t := &v1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed", StartedAt: startedAt, FinishedAt: now, ContainerID: cs.ContainerID}
			if terminal == v1.PodFailed {
				t.ExitCode, t.Reason = 1, "Error"
			}
			cs.State.Terminated = t
		}
		cs.Started = ptr.To(false)
		return cs
	}
	cs.State.Running = &v1.ContainerStateRunning{StartedAt: startedAt}
	cs.Ready = true
	cs.Started = ptr.To(true)
	return cs
}

func (s *kubeletSim) desiredStatus(pod *v1.Pod) (*v1.PodStatus, time.Duration) {
	now := metav1.Now()
	st := pod.Status.DeepCopy()
	st.ObservedGeneration = pod.Generation
	st.HostIP = s.nodeIP
	st.HostIPs = []v1.HostIP{{IP: s.nodeIP}}
	if ip := s.podIP(pod); ip != "" {
		st.PodIP = ip
		st.PodIPs = []v1.PodIP{{IP: ip}}
	}
	if st.StartTime == nil {
		st.StartTime = &now
	}

	// Init containers: regular ones have completed, sidecars run.
	initDone := true
	var initStatuses []v1.ContainerStatus
	var pendingInit []string
	for _, c := range pod.Spec.InitContainers {
		cs := v1.ContainerStatus{Name: c.Name, Image: c.Image}
		if prev := findStatus(st.InitContainerStatuses, c.Name); prev != nil {
			cs = *prev
			cs.Image = c.Image
		}
		switch {
		case badImage(c.Image):
			initDone = false
			pendingInit = append(pendingInit, c.Name)
			cs.State = v1.ContainerState{Waiting: &v1.ContainerStateWaiting{
				Reason:  "ImagePullBackOff",
				Message: fmt.Sprintf("Back-off pulling image %q: ErrImagePull: not found (plumb kubelet-sim)", c.Image),
			}}
			cs.Ready, cs.Started, cs.ImageID, cs.ContainerID = false, ptr.To(false), "", ""
		case c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways:
			cs.ImageID = "plumb-sim://" + c.Image
			cs.ContainerID = "plumb-sim://" + string(pod.UID) + "/" + c.Name
			if cs.State.Running == nil {
				cs.State = v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: now}}
			}
			cs.Ready, cs.Started = true, ptr.To(true)
		default:
			cs.ImageID = "plumb-sim://" + c.Image
			cs.ContainerID = "plumb-sim://" + string(pod.UID) + "/" + c.Name
			if cs.State.Terminated == nil {
				cs.State = v1.ContainerState{Terminated: &v1.ContainerStateTerminated{
					ExitCode: 0, Reason: "Completed", StartedAt: now, FinishedAt: now, ContainerID: cs.ContainerID}}
			}
			cs.Ready, cs.Started = false, ptr.To(false)
		}
		initStatuses = append(initStatuses, cs)
	}
	st.InitContainerStatuses = initStatuses

	// Job pods finish after jobDur.
	var terminal v1.PodPhase
	var after time.Duration
	anyBad := !initDone
	for _, c := range pod.Spec.Containers {
		if badImage(c.Image) {
			anyBad = true
		}
	}
	if isJobPod(pod) && !anyBad {
		if el := time.Since(st.StartTime.Time); el >= s.jobDur {
			terminal = v1.PodSucceeded
			for _, c := range pod.Spec.Containers {
				if failImage(c.Image) {
					terminal = v1.PodFailed
				}
			}
		} else {
			after = s.jobDur - el + 100*time.Millisecond
		}
	}

	statuses := make([]v1.ContainerStatus, 0, len(pod.Spec.Containers))
	var unready []string
	for _, c := range pod.Spec.Containers {
		cs := s.containerStatus(pod, st.ContainerStatuses, c, terminal, initDone, now)
		if !cs.Ready {
			unready = append(unready, c.Name)
		}
		statuses = append(statuses, cs)
	}
	st.ContainerStatuses = statuses

	cond := func(t v1.PodConditionType, ok bool, reason, msg string) {
		c := v1.PodCondition{Type: t, Status: v1.ConditionTrue, ObservedGeneration: pod.Generation}
		if !ok {
			c.Status, c.Reason, c.Message = v1.ConditionFalse, reason, msg
		}
		setPodCondition(st, c, now)
	}
	cond(v1.PodReadyToStartContainers, terminal == "", "", "")
	cond(v1.PodInitialized, initDone, "ContainersNotInitialized",
		fmt.Sprintf("containers with incomplete status: [%s]", strings.Join(pendingInit, " ")))
	containersReady := len(unready) == 0
	notReadyReason, notReadyMsg := "ContainersNotReady", fmt.Sprintf("containers with unready status: [%s]", strings.Join(unready, " "))
	if terminal != "" {
		notReadyReason, notReadyMsg = "PodCompleted", ""
	}
	cond(v1.ContainersReady, containersReady, notReadyReason, notReadyMsg)
	ready := containersReady
	readyReason, readyMsg := notReadyReason, notReadyMsg
	if ready {
		for _, g := range pod.Spec.ReadinessGates {
			found := false
			for _, c := range st.Conditions {
				if c.Type == g.ConditionType && c.Status == v1.ConditionTrue {
					found = true
				}
			}
			if !found {
				ready = false
				readyReason, readyMsg = "ReadinessGatesNotReady", fmt.Sprintf("corresponding condition of pod readiness gate %q does not exist or is not True", g.ConditionType)
			}
		}
	}
	cond(v1.PodReady, ready, readyReason, readyMsg)
	cond(v1.PodScheduled, true, "", "")

	switch {
	case terminal != "":
		st.Phase = terminal
	case anyBad:
		st.Phase = v1.PodPending
	default:
		st.Phase = v1.PodRunning
	}
	return st, after
}
