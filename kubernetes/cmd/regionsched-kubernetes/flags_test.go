package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A namespace that is not a Kubernetes name is bad input, to run and to
// leftovers, found before the API server is asked anything.
func TestRunRefusesBadNamespace(t *testing.T) {
	for _, ns := range []string{"", "Bad_NS!", "-x"} {
		res := execCLI(t, "run", "--namespace", ns, "--kubeconfig", "/nonexistent/kubeconfig", flip119)
		assert.Equal(t, 2, res.code, "namespace %q: %s", ns, res.stderr)
		assert.Contains(t, res.stderr, "is not a namespace name", ns)
		res = execCLI(t, "leftovers", "--namespace", ns, "--kubeconfig", "/nonexistent/kubeconfig")
		assert.Equal(t, 2, res.code, "leftovers, namespace %q: %s", ns, res.stderr)
		assert.Contains(t, res.stderr, "is not a namespace name", ns)
	}
}

// A job in a queue that has child queues is bad input naming its file
// and the field, as simulate says it, before the API server is asked
// anything.
func TestRunRefusesJobInParentQueue(t *testing.T) {
	dir := t.TempDir()
	cluster := filepath.Join(dir, "cluster.json")
	job := filepath.Join(dir, "j.json")
	require.NoError(t, os.WriteFile(cluster, []byte(`{"slots": [{"count": 2}], "queues": [{"name": "root.p"}, {"name": "root.p.x"}]}`), 0o600))
	require.NoError(t, os.WriteFile(job, []byte(`{"name": "j", "queue": "root.p", "vertices": [{"id": "v", "parallelism": 1}]}`), 0o600))
	res := execCLI(t, "run", "--cluster", cluster, "--kubeconfig", "/nonexistent/kubeconfig", job)
	assert.Equal(t, 2, res.code, res.stderr)
	assert.Equal(t, "regionsched-kubernetes run: "+job+`: job file field "queue": queue root.p has the child queue root.p.x and may not hold job "j": `+
		"jobs run in queues without children (name one, e.g. root.p.x)\n", res.stderr)
}
