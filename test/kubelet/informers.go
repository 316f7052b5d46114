package kubelet

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
)

// nodeNameIndex indexes pods by spec.nodeName.
const nodeNameIndex = "nodeName"

// startInformers starts the pod informer (all pods: the scheduler needs
// the unbound ones, the kubelets the bound ones) and a node informer
// limited to the pool, and waits for their caches.
func (k *Kubelet) startInformers(ctx context.Context) error {
	k.podQueue = k.newQueue("kubelet-pods-" + k.opts.NamePrefix)
	k.schedQueue = k.newQueue("scheduler-" + k.opts.NamePrefix)
	k.nodeQueue = k.newQueue("kubelet-nodes-" + k.opts.NamePrefix)
	k.pods = informers.NewSharedInformerFactory(k.client, 0)
	k.nodeInf = informers.NewSharedInformerFactoryWithOptions(k.client, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = PoolLabel + "=" + k.opts.NamePrefix }))
	podInf := k.pods.Core().V1().Pods().Informer()
	if err := podInf.AddIndexers(cache.Indexers{nodeNameIndex: byNodeName}); err != nil {
		return err
	}
	if _, err := podInf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: k.onPod,
		UpdateFunc: func(old, obj any) {
			o, ok1 := old.(*corev1.Pod)
			p, ok2 := obj.(*corev1.Pod)
			if ok1 && ok2 && p.Spec.NodeName != "" {
				if key, err := cache.MetaNamespaceKeyFunc(p); err == nil {
					k.poke(key, o, p)
				}
			}
			k.onPod(obj)
		},
		DeleteFunc: k.onPod,
	}); err != nil {
		return err
	}
	nodeInf := k.nodeInf.Core().V1().Nodes().Informer()
	if _, err := nodeInf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(_, _ any) { k.retryUnschedulable() },
	}); err != nil {
		return err
	}
	k.podLister, k.podIndexer = k.pods.Core().V1().Pods().Lister(), podInf.GetIndexer()
	k.nodeLister = k.nodeInf.Core().V1().Nodes().Lister()
	k.pods.Start(ctx.Done())
	k.nodeInf.Start(ctx.Done())
	for _, f := range []informers.SharedInformerFactory{k.pods, k.nodeInf} {
		for typ, ok := range f.WaitForCacheSync(ctx.Done()) {
			if !ok {
				return errors.New("informer cache did not sync: " + typ.String())
			}
		}
	}
	return nil
}

// byNodeName indexes a pod under its node, an unbound pod under "".
func byNodeName(obj any) ([]string, error) {
	if p, ok := obj.(*corev1.Pod); ok {
		return []string{p.Spec.NodeName}, nil
	}
	return nil, nil
}

// onPod routes a pod event: bound to one of our nodes → its kubelet;
// unbound and ours to schedule → the scheduler.
func (k *Kubelet) onPod(obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	key, err := cache.MetaNamespaceKeyFunc(pod)
	if err != nil {
		return
	}
	if pod.Spec.NodeName != "" {
		k.observeBound(pod)
		if _, ours := k.nodes[pod.Spec.NodeName]; ours {
			k.podQueue.Add(key)
		}
		return
	}
	if !k.opts.DisableScheduler && pod.Spec.SchedulerName == k.opts.SchedulerName {
		k.schedQueue.Add(key)
	}
}

// startWorkers runs the pod workers, the scheduler, the node status
// writer and the heartbeat until ctx ends.
func (k *Kubelet) startWorkers(ctx context.Context) {
	run := func(f func()) {
		k.wg.Add(1)
		go func() { defer k.wg.Done(); f() }()
	}
	for i := 0; i < k.opts.Workers; i++ {
		run(func() { k.drain(ctx, k.podQueue, k.syncPod) })
	}
	if !k.opts.DisableScheduler {
		run(func() { k.drain(ctx, k.schedQueue, k.schedulePod) })
	}
	run(func() { k.drain(ctx, k.nodeQueue, k.syncNode) })
	run(func() { k.heartbeat(ctx) })
	run(func() { k.refreshImages(ctx) })
}
