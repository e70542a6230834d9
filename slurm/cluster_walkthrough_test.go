package slurm

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/multijob"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/topology"
)

// Two jobs on a Slurm cluster through multijob: each region's slots (one
// subtask of A each: A's subtasks share no edge) are one Slurm job,
// tagged with the run and limited in time; one query serves both jobs, and
// the grants reach the jobs' schedulers in the next Ready. (A poller
// runs the commands and the query, through Driver.ClusterInput.)
func TestClusterWalkthrough(t *testing.T) {
	var out strings.Builder
	job, err := topology.DecodeBytes([]byte(`{"name": "etl", "vertices": [{"id": "A", "parallelism": 2}], "edges": []}`))
	if err != nil {
		t.Fatal(err)
	}
	rs := region.FromJob(job, exchange.AllPipelined)
	part := partition{Name: "batch", Default: true, Nodes: []node{{Name: "n1", CPUs: 4}}}
	cl, err := newCluster(clusterConfig{Run: "r7", TimeLimit: 30 * time.Minute}, []partition{part})
	if err != nil {
		t.Fatal(err)
	}
	s, err := multijob.New(multijob.Config{Cluster: cl})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(0, 0)
	for _, name := range []string{"etl", "report"} {
		if err := s.Submit(now, multijob.JobSpec{JobSpec: admission.JobSpec{Name: name}, Regions: rs}); err != nil {
			fmt.Fprintln(&out, err)
			return
		}
	}
	s.Ready() // the schedulers ask; the cluster turns each ask into an sbatch

	cmds := cl.Commands()
	for _, c := range cmds {
		fmt.Fprintln(&out, c.Kind, c.Name, c.Request.SbatchArgs(c.Name)[6:8])
	}
	names := cl.Watched()
	fmt.Fprintln(&out, "one query for", names)

	// What the poller reports back: sbatch's ids, then squeue's states.
	var statuses []jobStatus
	for i, c := range cmds {
		id := JobID(100 + i)
		cl.Submitted(now, c.Name, id, nil)
		statuses = append(statuses, jobStatus{ID: id, Name: c.Name, State: "RUNNING", Nodes: []nodeCPUs{{Node: "n1", CPUs: 1}}})
	}
	if err := s.ClusterInput(now, func(now time.Time) error { cl.Observe(now, names, statuses); return nil }); err != nil {
		t.Fatal(err)
	}
	for _, jr := range s.Ready().Jobs {
		for _, d := range jr.Deploy {
			p, _ := cl.Placement(jr.Job, d.Slot)
			fmt.Fprintf(&out, "%s: %s in slot %d, Slurm job %d on %s\n", jr.Job, rs.Topology().VertexName(d.Task), d.Slot, p.Job, p.Node)
		}
	}
	assert.Equal(t, `submit rs-etl-r7-j0-a1 [--time=30 --comment=regionsched-run=r7]
submit rs-etl-r7-j0-a2 [--time=30 --comment=regionsched-run=r7]
submit rs-report-r7-j1-a1 [--time=30 --comment=regionsched-run=r7]
submit rs-report-r7-j1-a2 [--time=30 --comment=regionsched-run=r7]
one query for [rs-etl-r7-j0-a1 rs-etl-r7-j0-a2 rs-report-r7-j1-a1 rs-report-r7-j1-a2]
etl: A#0 in slot 1, Slurm job 100 on n1
etl: A#1 in slot 2, Slurm job 101 on n1
report: A#0 in slot 1, Slurm job 102 on n1
report: A#1 in slot 2, Slurm job 103 on n1
`, out.String())
}
