package kubernetes

import (
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// NewClient returns a client of the cluster of a kubeconfig file ("":
// the usual rules, $KUBECONFIG then ~/.kube/config), allowed qps requests
// a second (bursts of twice that): a runner creates and binds whole
// bulks at once, which client-go's default of 5 a second would slow to a
// crawl. It speaks protobuf to the API server.
func NewClient(kubeconfig string, qps float32) (kubernetes.Interface, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if kubeconfig != "" {
		rules.ExplicitPath = kubeconfig
	}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, err
	}
	if qps > 0 {
		cfg.QPS, cfg.Burst = qps, int(2*qps)
	}
	// Protobuf, not JSON: a runner lists the pods of its run at every
	// turn, and protobuf decodes several times faster.
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	return kubernetes.NewForConfig(cfg)
}
