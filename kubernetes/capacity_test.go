package kubernetes

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"

	rsresource "github.com/regionsched/regionsched/resource"
)

func TestCapacityOf(t *testing.T) {
	nodes := loadNodes(t, "nodes.json")
	pods := loadPods(t, "pods.json")
	tests := []struct {
		node        string
		tolerations []corev1.Toleration
		want        NodeCapacity
	}{
		{node: "n1", want: NodeCapacity{
			Node: "n1", Usable: true,
			Allocatable: rsresource.New(4000, 8192).WithExtended("nvidia.com/gpu", 2),
			// web-1 only: batch-done ended, rs-r1-etl-t0-a0 is the run's own.
			Foreign:  rsresource.New(1000, 1024).WithExtended("nvidia.com/gpu", 1),
			Free:     rsresource.New(3000, 7168).WithExtended("nvidia.com/gpu", 1),
			PodsFree: 109,
		}},
		{node: "n2", want: NodeCapacity{
			Node: "n2", Why: "cordoned", Allocatable: rsresource.New(4000, 8192),
			Foreign: rsresource.New(0, 0), Free: rsresource.New(4000, 8192), PodsFree: 110,
		}},
		{node: "n3", want: NodeCapacity{
			Node: "n3", Why: "not Ready", Allocatable: rsresource.New(4000, 8192),
			Foreign: rsresource.New(0, 0), Free: rsresource.New(4000, 8192), PodsFree: 110,
		}},
		{node: "n4", want: NodeCapacity{
			Node: "n4", Why: "tainted dedicated=gpu:NoSchedule", Allocatable: rsresource.New(8000, 16384),
			Foreign: rsresource.New(0, 0), Free: rsresource.New(8000, 16384), PodsFree: 110,
		}},
		{node: "n4", tolerations: []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "gpu"}},
			want: NodeCapacity{
				Node: "n4", Usable: true, Allocatable: rsresource.New(8000, 16384),
				Foreign: rsresource.New(0, 0), Free: rsresource.New(8000, 16384), PodsFree: 110,
			}},
		{node: "n5", want: NodeCapacity{
			Node: "n5", Usable: true, Allocatable: rsresource.New(2500, 3500),
			// other-run (another run's pod: foreign) 500m/512Mi, and
			// init-heavy: max(setup 1000m, main+sidecar 300m) + 50m
			// overhead = 1050m; memory main+sidecar 350Mi.
			Foreign: rsresource.New(1550, 862), Free: rsresource.New(950, 2638), PodsFree: 1,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.node, func(t *testing.T) {
			got := CapacityOf(nodes[tt.node], pods, "r1", tt.tolerations)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestProfileOfRoundTrip(t *testing.T) {
	p := rsresource.New(1500, 2048).WithExtended("example.com/fpga", 3)
	assert.Equal(t, p, ProfileOf(ResourceListOf(p)))
	assert.Empty(t, ResourceListOf(rsresource.Unknown))
}

func TestIsExtended(t *testing.T) {
	for name, want := range map[corev1.ResourceName]bool{
		"nvidia.com/gpu": true, "example.com/fpga": true,
		"cpu": false, "pods": false, "ephemeral-storage": false, "hugepages-2Mi": false,
		"kubernetes.io/batteries": false, "node.kubernetes.io/x": false, "requests.nvidia.com/gpu": false,
	} {
		assert.Equal(t, want, IsExtended(name), name)
	}
}

func TestTolerates(t *testing.T) {
	taint := corev1.Taint{Key: "k", Value: "v", Effect: corev1.TaintEffectNoSchedule}
	for _, tt := range []struct {
		tol  corev1.Toleration
		want bool
	}{
		{corev1.Toleration{Key: "k", Value: "v"}, true},
		{corev1.Toleration{Key: "k", Value: "w"}, false},
		{corev1.Toleration{Key: "k", Operator: corev1.TolerationOpExists}, true},
		{corev1.Toleration{Operator: corev1.TolerationOpExists}, true},
		{corev1.Toleration{Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}, false},
		{corev1.Toleration{Key: "j", Operator: corev1.TolerationOpExists}, false},
		{corev1.Toleration{Value: "v"}, false},
	} {
		assert.Equal(t, tt.want, tolerates(tt.tol, taint), "%+v", tt.tol)
	}
}
