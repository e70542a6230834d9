// Command executor is the example executor: it runs a job file on a
// cluster of unknown-sized slots in virtual time, with the library's
// scheduler deciding what runs when (package simulator drives package
// scheduler through its Deployer interface), and narrates the run.
//
//	go run ./examples/executor -mode pointwise-pipelined-only -slots 2 examples/jobs/flip119.json
//
// The regionsched command (simulate) is the full tool; this program shows
// in a few lines how a runtime's event loop is wired to the library.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/simulator"
	"github.com/regionsched/regionsched/topology"
)

func main() {
	modeName := flag.String("mode", "all-blocking", "global data exchange mode")
	slots := flag.Int("slots", 2, "number of slots")
	seed := flag.Uint64("seed", 1, "seed")
	flag.Parse()
	if err := run(flag.Arg(0), *modeName, *slots, *seed); err != nil {
		fmt.Fprintln(os.Stderr, "executor:", err)
		os.Exit(2)
	}
}

var pastTense = map[simulator.Kind]string{simulator.Finish: "finished", simulator.Fail: "failed", simulator.Cancel: "canceled"}

func run(path, modeName string, slots int, seed uint64) error {
	if path == "" {
		return fmt.Errorf("usage: executor [-mode M] [-slots N] [-seed S] JOB")
	}
	mode, err := exchange.ParseMode(modeName)
	if err != nil {
		return err
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	job, err := topology.Decode(f)
	if err != nil {
		return err
	}
	rs := region.FromJob(job, mode)
	fmt.Printf("%s in %s mode: %d regions, at least %d slots; running on %d slots\n",
		job.Name(), mode, rs.NumRegions(), rs.MinimumSlots(), slots)
	res, err := simulator.Run(simulator.Config{
		Regions: rs,
		Cluster: []resource.Count{{Profile: resource.Unknown, N: slots}},
		Seed:    seed,
		Record:  true,
	})
	if err != nil {
		return err
	}
	for _, e := range res.Events {
		switch e.Kind {
		case simulator.Deploy:
			fmt.Printf("%6d ms  region %-3d %-8s deployed in slot %d\n", e.At.Milliseconds(), e.Region, e.Task, e.Slot)
		case simulator.Finish, simulator.Fail, simulator.Cancel:
			fmt.Printf("%6d ms  region %-3d %-8s %s\n", e.At.Milliseconds(), e.Region, e.Task, pastTense[e.Kind])
		}
	}
	fmt.Println(res.Reason)
	return nil
}
