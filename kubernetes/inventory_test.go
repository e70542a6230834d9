package kubernetes

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	rsresource "github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/slotpool"
)

// capacities computes the capacities of the fixture's nodes (names) for
// run r1.
func capacities(t *testing.T, nodes map[string]*corev1.Node, pods []corev1.Pod, names ...string) []NodeCapacity {
	t.Helper()
	var out []NodeCapacity
	for _, n := range names {
		out = append(out, CapacityOf(nodes[n], pods, "r1", nil))
	}
	return out
}

func TestSlotsOn(t *testing.T) {
	nodes := loadNodes(t, "nodes.json")
	pods := loadPods(t, "pods.json")
	caps := map[string]NodeCapacity{}
	for _, c := range capacities(t, nodes, pods, "n1", "n2", "n5") {
		caps[c.Node] = c
	}
	gpuSlot := rsresource.New(1000, 1024).WithExtended("nvidia.com/gpu", 1)
	for _, tt := range []struct {
		node    string
		shape   rsresource.Profile
		n       int
		profile rsresource.Profile
	}{
		{"n1", rsresource.New(1000, 1024), 3, rsresource.New(1000, 1024)}, // cpu 3000m free
		{"n1", rsresource.New(500, 4096), 1, rsresource.New(500, 4096)},   // memory 7168MB free
		{"n1", gpuSlot, 1, gpuSlot},                                       // one gpu left
		{"n1", rsresource.Unknown, 1, caps["n1"].Free},                    // the whole node
		{"n2", rsresource.New(1000, 1024), 0, rsresource.New(1000, 1024)}, // cordoned
		{"n5", rsresource.New(1000, 1024), 0, rsresource.New(1000, 1024)}, // 950m free
		{"n5", rsresource.New(100, 100), 1, rsresource.New(100, 100)},     // one pod left
	} {
		n, p := SlotsOn(caps[tt.node], tt.shape)
		assert.Equal(t, tt.n, n, "%s %v", tt.node, tt.shape)
		assert.Equal(t, tt.profile, p, "%s %v", tt.node, tt.shape)
	}
}

func TestNewInventoryRefusesEmptyShape(t *testing.T) {
	_, err := NewInventory(rsresource.New(0, 0))
	var se *ShapeError
	require.ErrorAs(t, err, &se)
	assert.ErrorIs(t, err, ErrBadSlotShape)
}

// TestInventoryObserve follows a cluster through node changes: the slots
// keep their ids, a cordoned, NotReady or deleted node loses all of its,
// a node whose foreign pods grow loses its last ones.
func TestInventoryObserve(t *testing.T) {
	nodes := loadNodes(t, "nodes.json")
	pods := loadPods(t, "pods.json")
	shape := rsresource.New(1000, 1024)
	inv, err := NewInventory(shape)
	require.NoError(t, err)

	ch := inv.Observe(capacities(t, nodes, pods, "n1", "n2", "n4"))
	slot := func(id slotpool.SlotID, node string) slotpool.Slot {
		return slotpool.Slot{ID: id, Profile: shape, Node: node}
	}
	assert.Equal(t, []slotpool.Slot{slot(1, "n1"), slot(2, "n1"), slot(3, "n1")}, ch.Added)
	assert.Empty(t, ch.Lost)

	// n4's taint is gone: it offers 8 slots after n1's, with new ids.
	n4 := nodes["n4"].DeepCopy()
	n4.Spec.Taints = nil
	caps := capacities(t, nodes, pods, "n1", "n2")
	caps = append(caps, CapacityOf(n4, pods, "r1", nil))
	ch = inv.Observe(caps)
	assert.Len(t, ch.Added, 8)
	assert.Equal(t, slot(4, "n4"), ch.Added[0])
	assert.Empty(t, ch.Lost)

	// A foreign pod takes 2 cpus of n1: its last two slots are lost.
	big := corev1.Pod{Spec: corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{
		Resources: corev1.ResourceRequirements{Requests: ResourceListOf(rsresource.New(2000, 10))}}}}}
	caps = append(capacities(t, nodes, append(pods, big), "n1", "n2"), CapacityOf(n4, pods, "r1", nil))
	ch = inv.Observe(caps)
	assert.Empty(t, ch.Added)
	assert.Equal(t, []LostSlot{{slot(2, "n1"), "capacity shrank"}, {slot(3, "n1"), "capacity shrank"}}, ch.Lost)

	// n1 cordoned, n4 deleted: every slot is lost.
	n1 := nodes["n1"].DeepCopy()
	n1.Spec.Unschedulable = true
	ch = inv.Observe([]NodeCapacity{CapacityOf(n1, pods, "r1", nil)})
	assert.Empty(t, ch.Added)
	require.Len(t, ch.Lost, 9)
	assert.Equal(t, LostSlot{slot(1, "n1"), "cordoned"}, ch.Lost[0])
	assert.Equal(t, LostSlot{slot(4, "n4"), "deleted"}, ch.Lost[1])
	assert.Empty(t, inv.Slots())

	// Uncordoned, n1 offers its slots again, under new ids.
	ch = inv.Observe(capacities(t, nodes, pods, "n1"))
	assert.Equal(t, []slotpool.Slot{slot(12, "n1"), slot(13, "n1"), slot(14, "n1")}, ch.Added)
	s, ok := inv.Slot(13)
	assert.True(t, ok)
	assert.Equal(t, "n1", s.Node)
	_, ok = inv.Slot(1)
	assert.False(t, ok)
}

// TestInventoryWholeNodes: with an unknown shape a node is one slot of
// what is free on it, replaced when that changes.
func TestInventoryWholeNodes(t *testing.T) {
	nodes := loadNodes(t, "nodes.json")
	pods := loadPods(t, "pods.json")
	inv, err := NewInventory(rsresource.Unknown)
	require.NoError(t, err)
	ch := inv.Observe(capacities(t, nodes, pods, "n1", "n5"))
	require.Len(t, ch.Added, 2)
	assert.Equal(t, rsresource.New(950, 2638), ch.Added[1].Profile)

	ch = inv.Observe(capacities(t, nodes, pods[:1], "n1", "n5")) // n5's pods ended
	assert.Equal(t, []LostSlot{{ch.Lost[0].Slot, "capacity changed"}}, ch.Lost)
	assert.Equal(t, "n5", ch.Lost[0].Slot.Node)
	require.Len(t, ch.Added, 1)
	assert.Equal(t, slotpool.Slot{ID: 3, Profile: rsresource.New(2500, 3500), Node: "n5"}, ch.Added[0])
}
