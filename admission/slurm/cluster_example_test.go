package slurm_test

import (
	"fmt"
	"time"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/admission/slurm"
	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/multijob"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/topology"
)

// Two jobs on a Slurm cluster through multijob: each region's slots (one
// subtask of A each: A's subtasks share no edge) are one Slurm job,
// tagged with the run and limited in time; one query serves both jobs, and
// the grants reach the jobs' schedulers in the next Ready. (A Poller
// runs the commands and the query, through Driver.ClusterInput.)
func ExampleCluster() {
	job, err := topology.DecodeBytes([]byte(`{"name": "etl", "vertices": [{"id": "A", "parallelism": 2}], "edges": []}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	rs := region.FromJob(job, exchange.AllPipelined)
	part := slurm.Partition{Name: "batch", Default: true, Nodes: []slurm.Node{{Name: "n1", CPUs: 4}}}
	cl, err := slurm.NewCluster(slurm.ClusterConfig{Run: "r7", TimeLimit: 30 * time.Minute}, []slurm.Partition{part})
	if err != nil {
		fmt.Println(err)
		return
	}
	s, err := multijob.New(multijob.Config{Cluster: cl})
	if err != nil {
		fmt.Println(err)
		return
	}
	now := time.Unix(0, 0)
	for _, name := range []string{"etl", "report"} {
		if err := s.Submit(now, multijob.JobSpec{JobSpec: admission.JobSpec{Name: name}, Regions: rs}); err != nil {
			fmt.Println(err)
			return
		}
	}
	s.Ready() // the schedulers ask; the cluster turns each ask into an sbatch

	cmds := cl.Commands()
	for _, c := range cmds {
		fmt.Println(c.Kind, c.Name, c.Request.SbatchArgs(c.Name)[6:8])
	}
	names := cl.Watched()
	fmt.Println("one query for", names)

	// What the poller reports back: sbatch's ids, then squeue's states.
	var statuses []slurm.JobStatus
	for i, c := range cmds {
		id := slurm.JobID(100 + i)
		cl.Submitted(now, c.Name, id, nil)
		statuses = append(statuses, slurm.JobStatus{ID: id, Name: c.Name, State: "RUNNING", Nodes: []slurm.NodeCPUs{{Node: "n1", CPUs: 1}}})
	}
	if err := s.ClusterInput(now, func(now time.Time) error { cl.Observe(now, names, statuses); return nil }); err != nil {
		fmt.Println(err)
		return
	}
	for _, jr := range s.Ready().Jobs {
		for _, d := range jr.Deploy {
			p, _ := cl.Placement(jr.Job, d.Slot)
			fmt.Printf("%s: %s in slot %d, Slurm job %d on %s\n", jr.Job, rs.Topology().VertexName(d.Task), d.Slot, p.Job, p.Node)
		}
	}
	// Output:
	// submit rs-etl-r7-j0-a1 [--time=30 --comment=regionsched-run=r7]
	// submit rs-etl-r7-j0-a2 [--time=30 --comment=regionsched-run=r7]
	// submit rs-report-r7-j1-a1 [--time=30 --comment=regionsched-run=r7]
	// submit rs-report-r7-j1-a2 [--time=30 --comment=regionsched-run=r7]
	// one query for [rs-etl-r7-j0-a1 rs-etl-r7-j0-a2 rs-report-r7-j1-a1 rs-report-r7-j1-a2]
	// etl: A#0 in slot 1, Slurm job 100 on n1
	// etl: A#1 in slot 2, Slurm job 101 on n1
	// report: A#0 in slot 1, Slurm job 102 on n1
	// report: A#1 in slot 2, Slurm job 103 on n1
}
