package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/topology"
)

// clusterFile is the cluster file of SPEC.md sections 4 and 5.
type clusterFile struct {
	Slots  []slotGroupFile `json:"slots"`
	Queues []queueFile     `json:"queues"`
	Users  []userFile      `json:"users"`
}

type slotGroupFile struct {
	Count     *int              `json:"count"`
	Resources *resource.Profile `json:"resources"`
}

type queueFile struct {
	Name              string `json:"name"`
	Policy            string `json:"policy"`
	MaxRunningJobs    int    `json:"maxRunningJobs"`
	StartingTimeoutMs *int64 `json:"startingTimeoutMs"`
	ReclaimTimeoutMs  *int64 `json:"reclaimTimeoutMs"`
}

type userFile struct {
	Name string `json:"name"`
	Role string `json:"role"`
}

// clusterFlags are --slots and --cluster, exactly one of which is required.
type clusterFlags struct {
	slots   int
	cluster string
}

func addClusterFlags(c *cobra.Command) *clusterFlags {
	f := &clusterFlags{}
	c.Flags().IntVar(&f.slots, "slots", -1, "number of unknown-sized slots (fit any request)")
	c.Flags().StringVar(&f.cluster, "cluster", "", "cluster file: {\"slots\": [{\"count\": N, \"resources\": {...}}, ...]}")
	return f
}

// load returns the cluster's slots as profile counts, in file order.
func (f *clusterFlags) load(c *cobra.Command) ([]resource.Count, error) {
	slotsSet, clusterSet := c.Flags().Changed("slots"), c.Flags().Changed("cluster")
	switch {
	case slotsSet && clusterSet:
		return nil, badInput(fmt.Errorf("give either --slots or --cluster, not both"))
	case !slotsSet && !clusterSet:
		return nil, badInput(fmt.Errorf("the cluster is missing: give --slots N or --cluster FILE"))
	case slotsSet:
		if f.slots < 0 {
			return nil, badInput(fmt.Errorf("--slots %d: must be a non-negative integer", f.slots))
		}
		return []resource.Count{{Profile: resource.Unknown, N: f.slots}}, nil
	}
	data, err := os.ReadFile(f.cluster)
	if err != nil {
		return nil, badInput(fmt.Errorf("cluster file: %w", err))
	}
	cf, err := decodeCluster(data)
	if err != nil {
		return nil, badInput(fmt.Errorf("cluster file %s: %w", f.cluster, err))
	}
	var out []resource.Count
	for _, s := range cf.Slots {
		p := resource.Unknown
		if s.Resources != nil {
			p = *s.Resources
		}
		out = append(out, resource.Count{Profile: p, N: *s.Count})
	}
	return out, nil
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

// decodeCluster parses and validates a cluster file; unknown fields are errors.
func decodeCluster(data []byte) (*clusterFile, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("empty input")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var cf clusterFile
	if err := dec.Decode(&cf); err != nil {
		return nil, fmt.Errorf("malformed cluster: %w (valid fields: slots[].count, slots[].resources, queues[], users[])", err)
	}
	if cf.Slots == nil {
		return nil, fmt.Errorf("field \"slots\" is missing")
	}
	for i, s := range cf.Slots {
		if s.Count == nil {
			return nil, fmt.Errorf("slots[%d]: field \"count\" is missing", i)
		}
		if *s.Count < 0 {
			return nil, fmt.Errorf("slots[%d].count = %d: must be a non-negative integer", i, *s.Count)
		}
	}
	for i, q := range cf.Queues {
		if q.Name == "" {
			return nil, fmt.Errorf("queues[%d]: field \"name\" is missing", i)
		}
		switch q.Policy {
		case "", "fifo", "priority", "fairshare", "stateaware":
		default:
			return nil, fmt.Errorf("queues[%d].policy %q: valid values are fifo, priority, fairshare, stateaware", i, q.Policy)
		}
		if q.MaxRunningJobs < 0 {
			return nil, fmt.Errorf("queues[%d].maxRunningJobs = %d: must be non-negative", i, q.MaxRunningJobs)
		}
	}
	for i, u := range cf.Users {
		if u.Role != "admin" && u.Role != "user" {
			return nil, fmt.Errorf("users[%d].role %q: valid values are admin, user", i, u.Role)
		}
	}
	return &cf, nil
}
