package runfile

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/topology"
)

// QueuePolicies returns the values of a queue's "policy" in a cluster
// file: "fifo", "priority", "fairshare", "stateaware".
func QueuePolicies() []string { return slices.Clone(queuePolicies) }

// Counts returns the cluster's slots as profile counts, in file order
// (an unknown-sized group is of resource.Unknown).
func (c *Cluster) Counts() []resource.Count {
	var out []resource.Count
	for _, s := range c.Slots {
		p := resource.Unknown
		if s.Resources != nil {
			p = *s.Resources
		}
		out = append(out, resource.Count{Profile: p, N: s.Count})
	}
	return out
}

// SlotNodes lists the node of each slot, in the order of Counts' slots
// ("" for a slot without a node), or nil if no group names a node.
func (c *Cluster) SlotNodes() []string {
	var out []string
	named := false
	for _, g := range c.Slots {
		for range g.Count {
			out = append(out, g.Node)
		}
		named = named || g.Node != ""
	}
	if !named {
		return nil
	}
	return out
}

// QueueConfigs maps the cluster's queues to the admission's; a queue
// without a policy takes defaultPolicy. A queue name that is not a full
// one (topology.ValidQueueName: DecodeCluster refuses it already, but a
// Cluster may be built otherwise) is a *ClusterError.
func (c *Cluster) QueueConfigs(defaultPolicy admission.Policy) ([]admission.QueueConfig, error) {
	var out []admission.QueueConfig
	for i, q := range c.Queues {
		if !topology.ValidQueueName(q.Name) {
			return nil, clusterErrorf(fmt.Sprintf("queues[%d].name", i), "%s is not a full queue name: %s", quoteJSON(q.Name), topology.QueueNameRule)
		}
		qc := admission.QueueConfig{Name: q.Name, Policy: defaultPolicy, MaxRunningJobs: q.MaxRunningJobs,
			GuaranteedSlots: q.GuaranteedSlots, MaxSlots: q.MaxSlots}
		if q.Policy != "" {
			p, err := admission.ParsePolicy(q.Policy)
			if err != nil { // DecodeCluster admits only valid names
				return nil, clusterErrorf(fmt.Sprintf("queues[%d].policy", i),
					"%s is not a queue policy: valid values are %s", quoteJSON(q.Policy), strings.Join(queuePolicies, ", "))
			}
			qc.Policy = p
		}
		if q.StartingTimeoutMs != nil {
			qc.StartingTimeout = time.Duration(*q.StartingTimeoutMs) * time.Millisecond
			if qc.StartingTimeout == 0 {
				// 0 means "leave starting at once"; the admission reads a
				// zero StartingTimeout as its default of 5 minutes.
				qc.StartingTimeout = admission.NoStartingWait
			}
		}
		if q.ReclaimTimeoutMs != nil {
			// Present: a higher-priority job preempts this queue's
			// lower-priority jobs after that long (0: at once); absent:
			// never (docs/job-file.md).
			qc.Preempt, qc.ReclaimTimeout = true, time.Duration(*q.ReclaimTimeoutMs)*time.Millisecond
		}
		out = append(out, qc)
	}
	return out, nil
}

// checkCapacities checks the queues' guaranteed and maximum slots as a
// hierarchy (admission.CheckCapacities); the error names the field of the
// queue at fault (queueAt: the index of each queue by name), or the
// queues when the parent is only implied by its children.
func checkCapacities(queues []Queue, queueAt map[string]int) error {
	qcs := make([]admission.QueueConfig, len(queues))
	for i, q := range queues {
		qcs[i] = admission.QueueConfig{Name: q.Name, GuaranteedSlots: q.GuaranteedSlots, MaxSlots: q.MaxSlots}
	}
	err := admission.CheckCapacities(qcs)
	if me := (*admission.MaxOverParentError)(nil); errors.As(err, &me) {
		return clusterErrorf(fmt.Sprintf("queues[%d].maxSlots", queueAt[me.Queue]), "queue %s: maxSlots %d is over the maxSlots %d of %s (valid: 1 ... %d, or leave the field out)",
			me.Queue, me.Max, me.ParentMax, me.Parent, me.ParentMax)
	}
	var ce *admission.CapacityError
	if errors.As(err, &ce) {
		field := "queues"
		if i, ok := queueAt[ce.Queue]; ok {
			field = fmt.Sprintf("queues[%d].%s", i, ce.Field)
			if len(ce.Children) == 0 {
				field = fmt.Sprintf("queues[%d].guaranteedSlots", i)
			}
		}
		if len(ce.Children) == 0 {
			return clusterErrorf(field, "queue %s: guaranteedSlots %d is over its maxSlots %d (valid: 0 ... %d)", ce.Queue, ce.Guaranteed, ce.Limit, ce.Limit)
		}
		return clusterErrorf(field, "queue %s: the guaranteedSlots of its children %s add up to %d, over its %s %d",
			ce.Queue, strings.Join(ce.Children, ", "), ce.Guaranteed, ce.Field, ce.Limit)
	}
	return nil
}

// Roles maps the cluster's users to their roles (an empty map for a
// cluster without users: every change is refused).
func (c *Cluster) Roles() (map[string]admission.Role, error) {
	out := map[string]admission.Role{}
	for i, u := range c.Users {
		role, err := admission.ParseRole(u.Role)
		if err != nil { // DecodeCluster admits only valid roles
			return nil, fmt.Errorf("users[%d].role: %w", i, err)
		}
		out[u.Name] = role
	}
	return out, nil
}
