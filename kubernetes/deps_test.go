package kubernetes

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCoreNeedsNoClientGo: the packages of the root module (everything a
// program that does not import this module compiles) depend on nothing of
// Kubernetes; client-go stays in this module.
func TestCoreNeedsNoClientGo(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list over the root module")
	}
	cmd := exec.Command("go", "list", "-deps", "./...")
	cmd.Dir = ".."
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasPrefix(pkg, "k8s.io/") || strings.HasPrefix(pkg, "sigs.k8s.io/") || strings.Contains(pkg, "/regionsched/kubernetes") {
			t.Errorf("the root module depends on %s", pkg)
		}
	}
}
