package regiontest_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/regiontest"
	"github.com/regionsched/regionsched/topology"
)

// Verify checks FLIP-119's example job statically and by simulating it
// for 10 seeds: all-pipelined, its one region of 12 subtasks needs 4
// slots at once.
func ExampleVerify() {
	f, err := os.Open("../examples/jobs/flip119.json")
	if err != nil {
		panic(err)
	}
	defer f.Close()
	job, err := topology.Decode(f)
	if err != nil {
		panic(err)
	}

	rep := regiontest.Verify(job, exchange.AllPipelined, regiontest.Slots(4), regiontest.Seeds(10))
	fmt.Println("4 slots deadlock-free:", rep.DeadlockFree(), "- runs:", len(rep.Runs), "- makespan:", rep.Runs[0].Makespan)

	rep = regiontest.Verify(job, exchange.AllPipelined, regiontest.Slots(3))
	fmt.Println("3 slots deadlock-free:", rep.DeadlockFree(), "- minimum slots:", rep.Static.MinimumSlots, "- region:", rep.Static.Region)

	rep = regiontest.Verify(job, exchange.PointwisePipelinedOnly, regiontest.Slots(2), regiontest.Failures("C#3@500"))
	fmt.Println("pointwise, 2 slots, C#3 fails:", rep.DeadlockFree(), "- restarts:", rep.Runs[0].Failovers)
	// Output:
	// 4 slots deadlock-free: true - runs: 10 - makespan: 1s
	// 3 slots deadlock-free: false - minimum slots: 4 - region: 0
	// pointwise, 2 slots, C#3 fails: true - restarts: 1
}

// testFLIP119IsDeadlockFree is the test a user writes in their own
// package, as func TestFLIP119IsDeadlockFree(t *testing.T): FLIP-119's
// example job is deadlock-free all-pipelined on 4 slots, and in
// pointwise-pipelined-only mode on 2 slots even when B#1 fails after
// 500 ms of work.
func testFLIP119IsDeadlockFree(t testing.TB) {
	f, err := os.Open("../examples/jobs/flip119.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	job, err := topology.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	regiontest.AssertDeadlockFree(t, job, exchange.AllPipelined, regiontest.Slots(4))
	regiontest.AssertDeadlockFree(t, job, exchange.PointwisePipelinedOnly, regiontest.Slots(2),
		regiontest.Failures("B#1@500"))
	// and one that fails: all-pipelined, the one region needs 4 slots
	regiontest.AssertDeadlockFree(t, job, exchange.AllPipelined, regiontest.Slots(3))
}

// printT stands in for the *testing.T of a test: it prints what the test
// would report.
type printT struct {
	testing.TB // the methods AssertDeadlockFree does not call are left nil
}

func (printT) Helper()           { fmt.Print("") }
func (printT) Error(args ...any) { fmt.Println(append([]any{"FAIL:"}, args...)...) }
func (printT) Fatal(args ...any) { panic(fmt.Sprint(args...)) }

// AssertDeadlockFree in a test: it checks the job statically and
// simulates it 20 times (each run ends the tasks of a wave in another
// order); a failure names the region that cannot be served and what is
// missing, or the run and the tasks that hold slots while waiting.
func ExampleAssertDeadlockFree() {
	testFLIP119IsDeadlockFree(printT{})
	// Output:
	// FAIL: job "flip119-example" in mode all-pipelined on 3 slots is not deadlock-free: not runnable: region 0 {A#0, A#1, B#0, B#1, C#0, C#1, C#2, C#3, ... (12 in all)} needs 4 slots at once; the cluster has 3 slots; missing 1 slot
}
