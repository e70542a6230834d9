package main

import (
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/spf13/cobra"

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

// load returns the cluster's slots as profile counts, in file order.
func (f *clusterFlags) load(c *cobra.Command) ([]resource.Count, error) {
	slots, _, err := f.loadFile(c)
	return slots, err
}

// loadFile is load that also returns the cluster file (nil for --slots),
// for its queues.
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

// loadWithJob loads the cluster (first, so that a usage error wins over a
// job error) and then the job file.
func (f *clusterFlags) loadWithJob(c *cobra.Command, jobPath string, stdin io.Reader) ([]resource.Count, *topology.JobGraph, error) {
	slots, err := f.load(c)
	if err != nil {
		return nil, nil, err
	}
	job, err := loadJob(jobPath, stdin)
	if err != nil {
		return nil, nil, err
	}
	return slots, job, nil
}
