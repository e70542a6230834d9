package slurm

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/slotpool"
)

// A jobCore on a partition of two 4-CPU nodes: the pool asks for a gang of
// 3 slots of 2 CPUs, the jobCore asks for an sbatch, Slurm's answer and the
// job's state come back, and the slots are granted on the nodes Slurm
// chose. (An Adapter does the running and the polling.)
func TestJobCoreWalkthrough(t *testing.T) {
	var out strings.Builder
	part := partition{Name: "batch", Nodes: []node{{Name: "n1", CPUs: 4}, {Name: "n2", CPUs: 4}}}
	core, err := newJobCore(jobConfig{Name: "etl-run7"}, part)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(0, 0)
	fmt.Fprintln(&out, core.ready()) // the capacity

	err = core.handle(now, slotpool.Ask{ID: 1, Gang: slotpool.Gang{AllOrNothing: true,
		Groups: []slotpool.TaskGroup{{Profile: resource.New(2000, 0), MinMembers: 3}}}})
	fmt.Fprintln(&out, err)
	cmd := core.commands()[0]
	fmt.Fprintln(&out, cmd.Name, cmd.Request.SbatchArgs(cmd.Name)[6:9])

	core.submitted(now, cmd.Name, 42, nil) // sbatch --parsable printed 42
	core.observe(now, core.watched(), []jobStatus{{ID: 42, Name: cmd.Name, State: "RUNNING",
		Nodes: []nodeCPUs{{Node: "n1", CPUs: 4}, {Node: "n2", CPUs: 2}}}})
	for _, m := range core.ready() {
		for _, s := range m.(slotpool.Grant).Slots {
			p, _ := core.placement(s.ID)
			fmt.Fprintf(&out, "slot %d: job %d on %s, %d CPUs\n", s.ID, p.Job, p.Node, p.CPUs)
		}
	}

	err = core.handle(now, slotpool.Ask{ID: 2, Gang: slotpool.Gang{Groups: []slotpool.TaskGroup{{Profile: resource.New(1000, 0), MinMembers: 9}}}})
	fmt.Fprintln(&out, err)
	assert.Equal(t, `[{[8 x unknown]}]
<nil>
etl-run7-a1 [--partition=batch --ntasks=3 --cpus-per-task=2]
slot 1: job 42 on n1, 2 CPUs
slot 2: job 42 on n1, 2 CPUs
slot 3: job 42 on n2, 2 CPUs
slurm: ask 2 needs 9 slots of {cpu=1000m mem=0MB}, partition "batch" has room for 8: larger than the partition
`, out.String())
}
