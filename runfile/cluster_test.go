package runfile_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/runfile"
)

// fullCluster is the cluster file of docs/job-file.md using every field.
const fullCluster = `{"slots": [{"count": 2, "resources": {"cpuMillis": 1000, "memoryMB": 2048, "extended": {"gpu": 1, "GPU": 2}}},
	                        {"count": 3}, {"count": 1}, {"count": 0}],
	 "queues": [{"name": "root.default", "policy": "fifo", "maxRunningJobs": 0, "startingTimeoutMs": 300000, "reclaimTimeoutMs": 0},
	            {"name": "root.batch", "policy": "fairshare"}, {"name": "root.x", "policy": "stateaware", "maxRunningJobs": 2},
	            {"name": "root.y", "policy": "priority", "reclaimTimeoutMs": 1000}],
	 "users": [{"name": "alice", "role": "admin"}, {"name": "bob", "role": "user"}]}`

// TestDecodeClusterAcceptsEveryField: the cluster file of
// docs/job-file.md, as documented, is accepted and read as written.
func TestDecodeClusterAcceptsEveryField(t *testing.T) {
	cf, err := runfile.DecodeCluster([]byte(fullCluster))
	require.NoError(t, err)
	require.Len(t, cf.Slots, 4)
	assert.Equal(t, 2, cf.Slots[0].Count)
	require.NotNil(t, cf.Slots[0].Resources)
	assert.Equal(t, resource.New(1000, 2048).WithExtended("gpu", 1).WithExtended("GPU", 2), *cf.Slots[0].Resources)
	assert.Nil(t, cf.Slots[1].Resources, "absent resources: unknown-sized")
	require.Len(t, cf.Queues, 4)
	assert.Equal(t, runfile.Queue{Name: "root.default", Policy: "fifo", StartingTimeoutMs: ptr(int64(300000)), ReclaimTimeoutMs: ptr(int64(0))}, cf.Queues[0])
	assert.Equal(t, runfile.Queue{Name: "root.batch", Policy: "fairshare"}, cf.Queues[1])
	assert.Equal(t, 2, cf.Queues[2].MaxRunningJobs)
	assert.Equal(t, ptr(int64(1000)), cf.Queues[3].ReclaimTimeoutMs)
	assert.Nil(t, cf.Queues[3].StartingTimeoutMs)
	assert.Equal(t, []runfile.User{{Name: "alice", Role: "admin"}, {Name: "bob", Role: "user"}}, cf.Users)

	// escapes in names are resolved as encoding/json does
	cf, err = runfile.DecodeCluster([]byte(`{"sl\u006fts": [{"c\u006funt": 1}]}`))
	require.NoError(t, err)
	assert.Equal(t, 1, cf.Slots[0].Count)
}

// TestDecodeClusterErrors: a bad cluster file is a *ClusterError naming
// the field by its JSON path (none for the file as a whole).
func TestDecodeClusterErrors(t *testing.T) {
	tests := []struct {
		name, file, field, problem string
	}{
		{"empty", ``, "", "malformed JSON: the file is empty"},
		{"missing slots", `{"queues": []}`, "slots", `missing: a cluster file lists its slot groups, e.g. {"slots": [{"count": 4}]}`},
		{"negative count", `{"slots": [{"count": 1}, {"count": -2}]}`, "slots[1].count", "invalid value -2: must be a non-negative integer"},
		{"too many slots", `{"slots": [{"count": 1099511627776}, {"count": 1}]}`, "slots[1].count",
			"the slot counts add up to more than 1099511627776 slots with this one (1): a cluster this large is surely a mistake"},
		{"node with a blank", `{"slots": [{"count": 1, "node": "a b"}]}`, "slots[0].node", `"a b" is not a node name: non-empty, without whitespace`},
		{"bad policy", `{"slots": [], "queues": [{"name": "root.a", "policy": "lifo"}]}`, "queues[0].policy",
			`"lifo" is not a queue policy: valid values are fifo, priority, fairshare, stateaware (leave the field out for the --queue-policy default)`},
		{"queue twice", `{"slots": [], "queues": [{"name": "root.q"}, {"name": "root.q"}]}`, "queues[1].name", `queue "root.q" is already configured by queues[0]`},
		{"queue name not full", `{"slots": [], "queues": [{"name": "root.q"}, {"name": "root..x"}]}`, "queues[1].name", `"root..x" is not a full queue name: a queue name is "root" or "root." followed by dot-separated non-empty parts, e.g. "root.default" or "root.prod.etl"`},
		{"bad role", `{"slots": [], "users": [{"name": "bob", "role": "root"}]}`, "users[0].role", `"root" is not a role: valid values are admin, user`},
		{"null user", `{"slots": [], "users": [null]}`, "users[0]", "expected an object, got JSON null"},
		{"negative guarantee", `{"slots": [], "queues": [{"name": "root.a", "guaranteedSlots": -1}]}`, "queues[0].guaranteedSlots",
			"invalid value -1: must be an integer in 0 ... 1099511627776"},
		{"max of 0", `{"slots": [], "queues": [{"name": "root.a", "maxSlots": 0}]}`, "queues[0].maxSlots",
			"invalid value 0: must be an integer in 1 ... 1099511627776 (leave the field out for unlimited)"},
		{"guarantee over max", `{"slots": [], "queues": [{"name": "root.b"}, {"name": "root.a", "guaranteedSlots": 5, "maxSlots": 4}]}`, "queues[1].guaranteedSlots",
			"queue root.a: guaranteedSlots 5 is over its maxSlots 4 (valid: 0 ... 4)"},
		{"children over the parent's guarantee", `{"slots": [], "queues": [{"name": "root.prod", "guaranteedSlots": 6},
			{"name": "root.prod.a", "guaranteedSlots": 4}, {"name": "root.prod.b", "guaranteedSlots": 3}, {"name": "root.prod.c"}]}`, "queues[0].guaranteedSlots",
			"queue root.prod: the guaranteedSlots of its children root.prod.a (4), root.prod.b (3) add up to 7, over its guaranteedSlots 6"},
		{"children over the parent's max", `{"slots": [], "queues": [{"name": "root.prod.a", "guaranteedSlots": 3}, {"name": "root.prod", "maxSlots": 2}]}`, "queues[1].maxSlots",
			"queue root.prod: the guaranteedSlots of its children root.prod.a (3) add up to 3, over its maxSlots 2"},
		{"grandchildren over the guarantee", `{"slots": [], "queues": [{"name": "root.prod", "guaranteedSlots": 4},
			{"name": "root.prod.etl.a", "guaranteedSlots": 3}, {"name": "root.prod.etl.b", "guaranteedSlots": 2}]}`, "queues[0].guaranteedSlots",
			"queue root.prod: the guaranteedSlots of its children root.prod.etl (5, its children's) add up to 5, over its guaranteedSlots 4"},
		{"a max over the parent's", `{"slots": [], "queues": [{"name": "root.prod", "maxSlots": 4}, {"name": "root.prod.etl", "maxSlots": 6}]}`, "queues[1].maxSlots",
			"queue root.prod.etl: maxSlots 6 is over the maxSlots 4 of root.prod (valid: 1 ... 4, or leave the field out)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cf, err := runfile.DecodeCluster([]byte(tc.file))
			assert.Nil(t, cf)
			var ce *runfile.ClusterError
			require.True(t, errors.As(err, &ce), "%T %v", err, err)
			assert.Equal(t, tc.field, ce.Field)
			assert.Equal(t, tc.problem, ce.Problem)
		})
	}
}

// TestClusterConfig: the slots, nodes, queues and roles a run takes from
// a cluster file.
func TestClusterConfig(t *testing.T) {
	cf, err := runfile.DecodeCluster([]byte(fullCluster))
	require.NoError(t, err)
	assert.Equal(t, []resource.Count{{Profile: resource.New(1000, 2048).WithExtended("gpu", 1).WithExtended("GPU", 2), N: 2},
		{Profile: resource.Unknown, N: 3}, {Profile: resource.Unknown, N: 1}, {Profile: resource.Unknown, N: 0}}, cf.Counts())
	assert.Nil(t, cf.SlotNodes(), "no group names a node")

	qs, err := cf.QueueConfigs(admission.Priority)
	require.NoError(t, err)
	assert.Equal(t, []admission.QueueConfig{
		{Name: "root.default", Policy: admission.FIFO, StartingTimeout: 5 * time.Minute, Preempt: true},
		{Name: "root.batch", Policy: admission.FairShare},
		{Name: "root.x", Policy: admission.StateAware, MaxRunningJobs: 2},
		{Name: "root.y", Policy: admission.Priority, Preempt: true, ReclaimTimeout: time.Second},
	}, qs)

	roles, err := cf.Roles()
	require.NoError(t, err)
	assert.Equal(t, map[string]admission.Role{"alice": admission.RoleAdmin, "bob": admission.RoleUser}, roles)

	cf, err = runfile.DecodeCluster([]byte(`{"slots": [], "queues": [{"name": "root.now", "startingTimeoutMs": 0}]}`))
	require.NoError(t, err)
	qs, err = cf.QueueConfigs(admission.FIFO)
	require.NoError(t, err)
	assert.Equal(t, []admission.QueueConfig{{Name: "root.now", StartingTimeout: admission.NoStartingWait}}, qs, "0: leave starting at once")

	cf, err = runfile.DecodeCluster([]byte(`{"slots": [{"count": 2, "node": "n1"}, {"count": 1}]}`))
	require.NoError(t, err)
	assert.Equal(t, []string{"n1", "n1", ""}, cf.SlotNodes())
	// A Cluster not from DecodeCluster: QueueConfigs checks the names too.
	cf.Queues = []runfile.Queue{{Name: "batch"}}
	qs, err = cf.QueueConfigs(admission.FIFO)
	assert.Nil(t, qs)
	var ce *runfile.ClusterError
	require.True(t, errors.As(err, &ce), "%T %v", err, err)
	assert.Equal(t, "queues[0].name", ce.Field)
	assert.Contains(t, ce.Problem, `"batch" is not a full queue name`)

	cf, err = runfile.DecodeCluster([]byte(`{"slots": [], "queues": [{"name": "root.prod", "maxSlots": 4, "guaranteedSlots": 4},
		{"name": "root.prod.etl", "guaranteedSlots": 2}]}`))
	require.NoError(t, err)
	assert.Equal(t, runfile.Queue{Name: "root.prod", GuaranteedSlots: 4, MaxSlots: 4}, cf.Queues[0])
	qs, err = cf.QueueConfigs(admission.FIFO)
	require.NoError(t, err)
	assert.Equal(t, []admission.QueueConfig{{Name: "root.prod", GuaranteedSlots: 4, MaxSlots: 4}, {Name: "root.prod.etl", GuaranteedSlots: 2}}, qs)

	assert.Equal(t, []string{"fifo", "priority", "fairshare", "stateaware"}, runfile.QueuePolicies())
}

func ptr[T any](v T) *T { return &v }
