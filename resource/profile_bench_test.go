package resource_test

import (
	"testing"

	"github.com/regionsched/regionsched/resource"
)

var fitsSink bool

// BenchmarkFitsIn measures FitsIn without extended resources, with a few
// and with many on both sides (the request's names a subset of the slot's).
func BenchmarkFitsIn(b *testing.B) {
	withExt := func(p resource.Profile, names ...string) resource.Profile {
		for i, n := range names {
			p = p.WithExtended(n, int64(i+1))
		}
		return p
	}
	many := []string{"a100", "disk", "fpga", "gpu", "hbm", "nic", "npu", "ssd", "tpu", "v100"}
	cases := []struct {
		name          string
		request, slot resource.Profile
	}{
		{"plain", resource.New(500, 512), resource.New(1000, 2048)},
		{"extended-2of4", withExt(resource.New(500, 512), "fpga", "gpu"), withExt(resource.New(1000, 2048), "disk", "fpga", "gpu", "ssd")},
		{"extended-10of10", withExt(resource.New(500, 512), many...), withExt(resource.New(1000, 2048), many...)},
	}
	for _, c := range cases {
		if !c.request.FitsIn(c.slot) {
			b.Fatalf("%s: %v does not fit in %v", c.name, c.request, c.slot)
		}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				fitsSink = c.request.FitsIn(c.slot)
			}
		})
	}
}
