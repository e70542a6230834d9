package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
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
