package scenario

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/internal/testjobs"
	"github.com/regionsched/regionsched/topology"
)

// JobData returns the job file a command names (file=F, in examples/jobs)
// or, without file=, its input; nil if it has neither.
func JobData(t *testing.T, td *datadriven.TestData) []byte {
	if td.HasArg("file") {
		data, err := os.ReadFile(filepath.Join(testjobs.Dir(), MustStr(t, td, "file")))
		if err != nil {
			td.Fatalf(t, "%v", err)
		}
		return data
	}
	if strings.TrimSpace(td.Input) != "" {
		return []byte(td.Input)
	}
	return nil
}

// BuildRegions makes a job of independent regions of the given slot
// counts (chained through blocking edges if chain): region i is vertex
// "ri" of that parallelism, and for more than one slot a vertex "ri.x"
// of parallelism 1 it feeds through a pipelined all-to-all edge, which
// makes one region of them.
func BuildRegions(t *testing.T, td *datadriven.TestData, name string, sizes []int, chain bool, durs []time.Duration) *topology.JobGraph {
	b := topology.NewBuilder(name)
	prev := ""
	for i, k := range sizes {
		id := fmt.Sprintf("r%d", i)
		b.AddVertex(topology.JobVertex{ID: id, Parallelism: k, Duration: durs[i]})
		last := id
		if k > 1 {
			last = id + ".x"
			b.AddVertex(topology.JobVertex{ID: last, Parallelism: 1, Duration: durs[i]})
			b.ConnectPinned(id, last, exchange.Hash, exchange.PipelinedBounded)
		}
		if chain && prev != "" {
			b.ConnectPinned(prev, id, exchange.Hash, exchange.Blocking)
		}
		prev = last
	}
	g, err := b.Build()
	if err != nil {
		td.Fatalf(t, "%v", err)
	}
	return g
}
