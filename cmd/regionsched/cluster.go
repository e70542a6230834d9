package main

import (
	"fmt"
	"os"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/internal/runcli"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/runfile"
	"github.com/regionsched/regionsched/topology"
)

// clusterFlags are --slots and --cluster, exactly one of which is required.
type clusterFlags struct {
	slots   slotsFlag
	cluster string
}

func addClusterFlags(c *cobra.Command) *clusterFlags {
	f := &clusterFlags{}
	c.Flags().Var(&f.slots, "slots", "number of unknown-sized slots (fit any request); this or --cluster is required")
	c.Flags().StringVar(&f.cluster, "cluster", "", "cluster file: {\"slots\": [{\"count\": N, \"resources\": {...}}, ...]}; this or --slots is required")
	runcli.SetValid(c.Flags(), "slots", fmt.Sprintf("an integer in 0 ... %d", region.MaxClusterSlots))
	return f
}

// slotsFlag is the value of --slots: an integer, unset until given, so
// that --help shows no default (there is none: --slots or --cluster is
// required). Its range is checked with the other cluster flags.
type slotsFlag struct {
	n   int
	set bool
}

// String returns the number given, "" if none.
func (f *slotsFlag) String() string {
	if !f.set {
		return ""
	}
	return strconv.Itoa(f.n)
}

// Set parses the number of slots.
func (f *slotsFlag) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil {
		return fmt.Errorf("%q is not a number of slots: give an integer in 0 ... %d", s, region.MaxClusterSlots)
	}
	f.n, f.set = n, true
	return nil
}

// Type names the value in --help: "--slots int".
func (f *slotsFlag) Type() string { return "int" }

// loadFile returns the cluster's slots as profile counts, in file order,
// and the cluster file (nil for --slots), for its queues.
func (f *clusterFlags) loadFile(c *cobra.Command) ([]resource.Count, *runfile.Cluster, error) {
	slotsSet, clusterSet := c.Flags().Changed("slots"), c.Flags().Changed("cluster")
	switch {
	case slotsSet && clusterSet:
		return nil, nil, badInput(fmt.Errorf("give either --slots or --cluster, not both"))
	case !slotsSet && !clusterSet:
		return nil, nil, badInput(fmt.Errorf("the cluster is missing: give --slots N or --cluster FILE"))
	case slotsSet:
		n := f.slots.n
		if n < 0 {
			return nil, nil, badInput(fmt.Errorf("--slots %d: must be a non-negative integer", n))
		}
		if n > region.MaxClusterSlots {
			return nil, nil, badInput(fmt.Errorf("--slots %d: more than %d slots: a cluster this large is surely a mistake", n, region.MaxClusterSlots))
		}
		return []resource.Count{{Profile: resource.Unknown, N: n}}, nil, nil
	}
	data, err := os.ReadFile(f.cluster)
	if err != nil {
		return nil, nil, badInput(fmt.Errorf("cluster file: %w", err))
	}
	cf, err := runfile.DecodeCluster(data)
	if err != nil {
		return nil, nil, badInput(fmt.Errorf("cluster file %s: %w", f.cluster, err))
	}
	return cf.Counts(), cf, nil
}

// checkJobQueue refuses, as simulate does, a job whose file (path) names
// a queue that has child queues among the queues of the cluster file cf
// (read from clusterPath; nil for --slots), when it configures some:
// simulate then runs the job through the admission.
func checkJobQueue(cf *runfile.Cluster, clusterPath, path string, job *topology.JobGraph) error {
	if cf == nil || len(cf.Queues) == 0 {
		return nil
	}
	queues, err := cf.QueueConfigs(admission.FIFO) // the policy does not matter here
	if err != nil {
		return badInput(fmt.Errorf("cluster file %s: %w", clusterPath, err))
	}
	name := job.Name()
	if name == "" {
		name = runcli.JobNameOf(path)
	}
	return runcli.CheckJobQueues([]string{path}, []runfile.Job{{Name: name, Job: job}}, queues)
}
