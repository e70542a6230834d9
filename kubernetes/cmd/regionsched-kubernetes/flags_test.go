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

// A value a flag does not take is bad input naming the flag, the value
// and what the flag takes, found before the API server is asked
// anything, not the parser's message.
func TestFlagValuesThatDoNotParseNameTheValidValues(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--slot-cpu", "x", flip119}, `regionsched-kubernetes run: --slot-cpu: invalid value "x" (valid: an integer of 0 or more)`},
		{[]string{"run", "--slot-memory", "1.5", flip119}, `regionsched-kubernetes run: --slot-memory: invalid value "1.5" (valid: an integer of 0 or more)`},
		{[]string{"run", "--poll", "5", flip119}, `regionsched-kubernetes run: --poll: invalid value "5" (valid: a duration of more than 0, such as 1s or 200ms)`},
		{[]string{"run", "--qps", "many", flip119}, `regionsched-kubernetes run: --qps: invalid value "many" (valid: a number (0 or less: the client's default))`},
		{[]string{"run", "--timeout", "30", flip119}, `regionsched-kubernetes run: --timeout: invalid value "30" (valid: a duration of more than 0, such as 30m or 90s)`},
		{[]string{"run", "--duration-scale", "x", flip119}, `regionsched-kubernetes run: --duration-scale: invalid value "x" (valid: a number more than 0)`},
		{[]string{"leftovers", "--delete=maybe"}, `regionsched-kubernetes leftovers: --delete: invalid value "maybe" (valid: true or false)`},
	} {
		res := execCLI(t, tc.args...)
		assert.Equal(t, 2, res.code, "%v: %s", tc.args, res.stderr)
		assert.Equal(t, tc.want+"\n", res.stderr, "%v", tc.args)
	}
}
