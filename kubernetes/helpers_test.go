package kubernetes

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
)

// loadNodes reads a NodeList fixture of testdata.
func loadNodes(t *testing.T, name string) map[string]*corev1.Node {
	t.Helper()
	var l corev1.NodeList
	loadJSON(t, name, &l)
	out := map[string]*corev1.Node{}
	for i := range l.Items {
		out[l.Items[i].Name] = &l.Items[i]
	}
	return out
}

// loadPods reads a PodList fixture of testdata.
func loadPods(t *testing.T, name string) []corev1.Pod {
	t.Helper()
	var l corev1.PodList
	loadJSON(t, name, &l)
	return l.Items
}

func loadJSON(t *testing.T, name string, v any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, v))
}

// podNamed returns the pod of a list by name.
func podNamed(t *testing.T, pods []corev1.Pod, name string) *corev1.Pod {
	t.Helper()
	for i := range pods {
		if pods[i].Name == name {
			return &pods[i]
		}
	}
	t.Fatalf("no pod %q in the fixture", name)
	return nil
}
