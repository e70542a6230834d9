package slotpool_test

import (
	"fmt"
	"time"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/scheduler"
	"github.com/regionsched/regionsched/slotpool"
	"github.com/regionsched/regionsched/topology"
)

// fixedSlots is an admission of a fixed list of slots: it grants an ask
// when it has every slot of the ask's gang, and takes released slots back
// (package admission's StaticCluster does this and more: matching by
// profile, capacity, revocations).
type fixedSlots struct {
	free []slotpool.Slot
	out  []slotpool.FromAdmission
}

func (a *fixedSlots) Handle(now time.Time, msg slotpool.ToAdmission) error {
	switch m := msg.(type) {
	case slotpool.Ask:
		n := 0
		for _, g := range m.Gang.Groups {
			n += g.MinMembers
		}
		fmt.Printf("  ask %d: %d slot(s)\n", m.ID, n)
		if n <= len(a.free) {
			a.out = append(a.out, slotpool.Grant{Ask: m.ID, Slots: a.free[:n:n]})
			a.free = a.free[n:]
		}
	case slotpool.AskRelease:
		fmt.Printf("  ask %d withdrawn (%v)\n", m.ID, m.Reason)
	case slotpool.SlotRelease:
		fmt.Printf("  slot %d back (%v)\n", m.Slot, m.Reason)
		a.free = append(a.free, slotpool.Slot{ID: m.Slot})
		a.out = append(a.out, slotpool.ReleaseConfirmed{Slot: m.Slot, Reason: m.Reason})
	default:
		return fmt.Errorf("fixed slots: %T: %w", msg, slotpool.ErrUnknownMessage)
	}
	return nil
}

func (a *fixedSlots) Ready() []slotpool.FromAdmission {
	out := a.out
	a.out = nil
	return out
}

func (a *fixedSlots) Tick(now time.Time) {}

func (a *fixedSlots) NextDeadline() (time.Time, bool) { return time.Time{}, false }

// An admission plugged into a scheduler: the scheduler's pool asks it for
// the slots of each region and gives idle slots back, inside the
// scheduler's calls. The job is src(2) -hash, blocking-> sink(1); the
// admission has two slots.
func Example() {
	job, err := topology.NewBuilder("two-vertex").
		AddVertex(topology.JobVertex{ID: "src", Parallelism: 2}).
		AddVertex(topology.JobVertex{ID: "sink", Parallelism: 1}).
		Connect("src", "sink", exchange.Hash).
		Build()
	if err != nil {
		panic(err)
	}
	rs := region.FromJob(job, exchange.AllBlocking)
	s, err := scheduler.New(rs, scheduler.Config{
		Pool:      slotpool.Config{IdleTimeout: time.Second},
		Admission: &fixedSlots{free: slotpool.Slots(2)},
	})
	if err != nil {
		panic(err)
	}
	now := time.Unix(0, 0)
	deploy := func() {
		for _, d := range s.Ready().Deploy {
			fmt.Printf("  deploy %s in slot %d\n", s.TaskName(d.Task), d.Slot)
		}
	}
	fmt.Println("start")
	_ = s.Start(now)
	deploy()
	for _, task := range []string{"src#0", "src#1", "sink#0"} {
		fmt.Println(task, "finished")
		v, _ := rs.Topology().ParseVertexName(task)
		_ = s.TaskFinished(now, v, 0)
		deploy()
	}
	fmt.Println("a second later")
	_ = s.Tick(now.Add(time.Second))
	deploy()
	// Output:
	// start
	//   ask 1: 1 slot(s)
	//   ask 2: 1 slot(s)
	//   deploy src#0 in slot 1
	//   deploy src#1 in slot 2
	// src#0 finished
	// src#1 finished
	//   deploy sink#0 in slot 2
	// sink#0 finished
	// a second later
	//   slot 1 back (stopped)
	//   slot 2 back (stopped)
}

// Slots of unknown size serve any request: Slots(n) makes n of them, with
// ids 1 ... n.
func ExampleSlots() {
	fmt.Printf("%+v\n", slotpool.Slots(2))
	// Output:
	// [{ID:1 Profile:unknown Node:} {ID:2 Profile:unknown Node:}]
}
