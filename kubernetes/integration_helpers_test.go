package kubernetes_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/benbjohnson/clock"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	rsk8s "github.com/regionsched/regionsched/kubernetes"
	"github.com/regionsched/regionsched/kubernetes/internal/k8stest"
	"github.com/regionsched/regionsched/multijob"
	"github.com/regionsched/regionsched/region"
	rsresource "github.com/regionsched/regionsched/resource"
)

// The helpers of the integration tests of integration_*_test.go.

// slotShape is the slot of the integration tests: one cpu, 1 GiB. A node
// of CPU "1" is one slot.
var slotShape = rsresource.New(1000, 1024)

// poll is how often the integration tests' runners step.
const poll = 50 * time.Millisecond

var nonDNS = regexp.MustCompile(`[^a-z0-9-]+`)

// group returns a name unique to the test in this process (and to this
// run of it, k8stest.Seq), usable as a node group, a run id and a node
// name prefix (lower case, at most 30 characters or so).
func group(t *testing.T) string {
	name := strings.TrimPrefix(t.Name(), "TestIntegration")
	name = strings.Trim(nonDNS.ReplaceAllString(strings.ToLower(name), "-"), "-")
	base := fmt.Sprintf("%s-%d-", k8stest.Prefix(), k8stest.Seq(t))
	if len(base)+len(name) > 30 {
		name = fmt.Sprintf("%s-%08x", strings.Trim(name[:max(0, 21-len(base))], "-"), fnv32(t.Name()))
	}
	return strings.Trim(base+name, "-")
}

// fnv32 is FNV-1a of s.
func fnv32(s string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h ^= uint32(s[i])
		h *= 16777619
	}
	return h
}

// oneSlotNodes makes n fake nodes of one slot each in the test's group and
// returns their names.
func oneSlotNodes(t *testing.T, c kubernetes.Interface, g string, from, n int) []string {
	t.Helper()
	var nodes []k8stest.Node
	var names []string
	for i := from; i < from+n; i++ {
		name := fmt.Sprintf("%s-n%d", g, i)
		names = append(names, name)
		nodes = append(nodes, k8stest.Node{Name: name, CPU: "1", Memory: "1Gi", Pods: "110", Group: g})
	}
	k8stest.FakeNodes(t, c, nodes...)
	return names
}

// runConfig is the RunnerConfig of a test's run on its group's nodes,
// every task's duration scaled by scale.
func runConfig(c kubernetes.Interface, g string, scale float64, jobs multijob.Config) rsk8s.RunnerConfig {
	return rsk8s.RunnerConfig{Client: c, Run: g, Shape: slotShape, NodeSelector: k8stest.Selector(g), Jobs: jobs, Scale: scale}
}

// realClock is the clock the integration tests' runs step on: the API
// server and KWOK live in real time.
func realClock() clock.Clock { return clock.New() }

// attempt names one region attempt of one job: a bulk.
type attempt struct {
	job             string
	region, attempt int
}

func (a attempt) String() string {
	return fmt.Sprintf("%s region %d attempt %d", a.job, a.region, a.attempt)
}

// gangRecord is, per region attempt, its pods bound (spec.nodeName set,
// not deleted) after every change of one of its pods.
type gangRecord map[attempt][]int

// checkGangs replays a watch of a run's pods and checks that no region
// was ever left partly bound: per region attempt, the pods bound rise to
// the region's size (regions gives each job's), never exceed it, and once
// they start going (cancels, the end of the run) never rise again, so
// that a count short of the size is only ever a bulk on its way up or
// down. (Binding a bulk is one pods/binding per pod: its first pods may
// run, even finish, before its last are bound on a busy API server.) It
// returns the record.
func checkGangs(t *testing.T, events []k8stest.PodEvent, regions map[string]*region.Regions) gangRecord {
	t.Helper()
	rec := gangRecord{}
	bound := map[string]bool{}
	count := map[attempt]int{}
	full := map[attempt]bool{}
	falling := map[attempt]bool{}
	for _, ev := range events {
		pod := ev.Pod
		if rsk8s.IsDriver(pod) {
			continue
		}
		ref, err := rsk8s.RefOf(pod)
		require.NoError(t, err, pod.Name)
		rs := regions[ref.Job]
		require.NotNil(t, rs, "a pod of job %q, which is not of the run", ref.Job)
		key := attempt{ref.Job, int(ref.Region), int(ref.Attempt)}
		size := rs.Size(region.ID(ref.Region))
		isBound := ev.Type != watch.Deleted && pod.Spec.NodeName != ""
		before := count[key]
		switch {
		case isBound && !bound[pod.Name]:
			count[key]++
		case !isBound && bound[pod.Name]:
			count[key]--
		}
		bound[pod.Name] = isBound
		n := count[key]
		if n == before && len(rec[key]) > 0 {
			continue
		}
		rec[key] = append(rec[key], n)
		switch {
		case n > size:
			t.Errorf("%s: %d pods bound, more than its region's %d tasks", key, n, size)
		case n > before && falling[key]:
			t.Errorf("%s: a pod bound again after its pods started going: %v", key, rec[key])
		case n < before:
			falling[key] = true
		case n == size:
			full[key] = true
		}
	}
	for key, series := range rec {
		if !full[key] {
			t.Errorf("%s: never bound whole: pods bound after each change %v, of %d", key, series, regions[key.job].Size(region.ID(key.region)))
		}
	}
	return rec
}
