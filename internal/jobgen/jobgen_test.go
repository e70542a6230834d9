package jobgen

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/topology"
)

// randomOptions draws options that turn every knob now and then.
func randomOptions(r *rand.Rand) Options {
	lo := 1 + r.IntN(4)
	plo := 1 + r.IntN(6)
	o := Options{
		Name:        "job",
		Vertices:    IntRange{lo, lo + r.IntN(8)},
		Parallelism: IntRange{plo, plo + r.IntN(8)},
		ForwardRate: r.Float64(),
	}
	if r.IntN(2) == 0 {
		o.ParallelismPool, o.PoolRate = 1+r.IntN(3), r.Float64()
	}
	if r.IntN(2) == 0 {
		o.IDPrefix = "V"
	}
	o.ShuffleOrder = r.IntN(2) == 0
	o.ShuffleEdges = r.IntN(2) == 0
	if r.IntN(3) == 0 {
		o.Inputs = 1 + r.IntN(3)
	} else {
		d := r.Float64()
		o.Density = FloatRange{d, d + (1-d)*r.Float64()}
		o.ChainRate = []float64{0, 0.75}[r.IntN(2)]
	}
	o.ParallelEdgeRate = []float64{0, 0.25, 1}[r.IntN(3)]
	if r.IntN(2) == 0 {
		o.Ships = []exchange.ShipStrategy{exchange.Rescale, exchange.Rescale, exchange.Hash}
	}
	if r.IntN(2) == 0 {
		o.PinRates = []float64{0, 0.2, 1}
		if r.IntN(2) == 0 {
			o.PinTypes = []exchange.ResultPartitionType{exchange.Blocking}
		}
	}
	if r.IntN(2) == 0 {
		o.Groups, o.GroupRate = []string{"default", "a", "b"}, r.Float64()
	}
	if r.IntN(2) == 0 {
		o.Profiles = append(Grid([]int64{0, 100}, []int64{256, 512}), resource.Unknown)
		o.ResourceJobRate, o.ResourceRate = r.Float64(), r.Float64()
		o.GPURate, o.GPUs = r.Float64(), []int64{0, 1, 2}
	}
	o.UnboundedRate = []float64{0, 0.2}[r.IntN(2)]
	if r.IntN(2) == 0 {
		o.Duration = DurationRange{100 * time.Millisecond, 2 * time.Second, 100 * time.Millisecond}
	}
	if r.IntN(2) == 0 {
		o.Motifs = []Motif{ForwardTriangle, RescaleTriangle}[:1+r.IntN(2)]
		o.MotifRate = []float64{0.5, 1}[r.IntN(2)]
	}
	return o
}

// checkJob asserts what every generated job must satisfy under o.
func checkJob(t *testing.T, o Options, g *topology.JobGraph) {
	t.Helper()
	n := g.NumVertices()
	ships := o.Ships
	if len(ships) == 0 {
		ships = defaultShips
	}
	for e := range topology.JobEdgeID(g.NumEdges()) {
		s, c := g.EdgeEnds(e)
		ed := g.Edge(e)
		if ed.ShipStrategy == exchange.Forward {
			assert.Equal(t, g.Vertex(s).Parallelism, g.Vertex(c).Parallelism, "forward edge %d between unequal parallelisms", e)
		}
		if o.MotifRate > 0 {
			continue // motif edges follow their own rules
		}
		assert.True(t, ed.ShipStrategy == exchange.Forward || slices.Contains(ships, ed.ShipStrategy), "edge %d ship %v", e, ed.ShipStrategy)
		if ed.ShipStrategy == exchange.Forward {
			assert.Positive(t, o.ForwardRate, "forward edge %d", e)
		}
		if ed.Pinned {
			assert.NotEmpty(t, o.PinRates, "pinned edge %d", e)
			if len(o.PinTypes) > 0 {
				assert.Contains(t, o.PinTypes, ed.Exchange, "pinned edge %d", e)
			}
		}
	}
	if o.MotifRate < 1 {
		assert.GreaterOrEqual(t, n, o.Vertices.Min)
	} else {
		assert.GreaterOrEqual(t, n, max(o.Vertices.Min, 3))
	}
	assert.LessOrEqual(t, n, max(o.Vertices.Max, 3))
	assert.Equal(t, o.Name, g.Name())
	for i := range n {
		v := g.Vertex(topology.JobVertexID(i))
		prefix := o.IDPrefix
		if prefix == "" {
			prefix = "v"
		}
		assert.Equal(t, fmt.Sprintf("%s%d", prefix, i), v.ID)
		if o.MotifRate == 0 {
			assert.True(t, v.Parallelism >= o.Parallelism.Min && v.Parallelism <= o.Parallelism.Max, "%s parallelism %d", v.ID, v.Parallelism)
		}
		if len(o.Groups) == 0 {
			assert.Equal(t, topology.DefaultSlotSharingGroup, v.SlotSharingGroup)
		} else {
			assert.Contains(t, o.Groups, v.SlotSharingGroup)
		}
		if o.ResourceJobRate == 0 || o.ResourceRate == 0 {
			assert.True(t, v.Resources.IsUnknown(), "%s has resources", v.ID)
		} else if !v.Resources.IsUnknown() {
			base := v.Resources.WithExtended("gpu", 0)
			assert.True(t, slices.Contains(o.Profiles, base) || slices.Contains(o.Profiles, v.Resources), "%s profile %v", v.ID, v.Resources)
		}
		if o.UnboundedRate == 0 {
			assert.False(t, v.Unbounded, "%s unbounded", v.ID)
		}
		if o.Duration.Step == 0 {
			assert.Equal(t, topology.DefaultDuration, v.Duration, "a zero draw gets the Builder's default")
		} else {
			assert.True(t, v.Duration >= o.Duration.Min && v.Duration <= o.Duration.Max && (v.Duration-o.Duration.Min)%o.Duration.Step == 0,
				"%s duration %v", v.ID, v.Duration)
		}
	}
}

// Generated jobs always build, over many seeds and random options, and
// honour their options.
func TestGeneratedJobsBuild(t *testing.T) {
	for seed := range uint64(3000) {
		r := rand.New(rand.NewPCG(seed, 11))
		o := randomOptions(r)
		g, err := Generate(r, o)
		require.NoError(t, err, "seed %d, options %+v", seed, o)
		checkJob(t, o, g)
		if t.Failed() {
			t.Fatalf("seed %d, options %+v", seed, o)
		}
	}
}

// The same source and options give the same job.
func TestDeterministic(t *testing.T) {
	o := Options{Name: "d", Vertices: IntRange{3, 9}, Parallelism: IntRange{1, 5}, ShuffleOrder: true, Density: FloatRange{0.2, 0.8},
		ShuffleEdges: true, ForwardRate: 0.5, PinRates: []float64{0.3}, Groups: []string{"a", "b"}, GroupRate: 1,
		Motifs: []Motif{ForwardTriangle}, MotifRate: 0.5}
	for seed := range uint64(50) {
		a, err := Generate(rand.New(rand.NewPCG(seed, 1)), o)
		require.NoError(t, err)
		b, err := Generate(rand.New(rand.NewPCG(seed, 1)), o)
		require.NoError(t, err)
		require.Equal(t, a, b)
	}
}

// Inputs: every vertex but the first reads 1..Inputs earlier ones, once.
func TestInputs(t *testing.T) {
	o := Options{Vertices: IntRange{2, 9}, Parallelism: IntRange{1, 4}, Inputs: 3, ForwardRate: 0.2}
	maxIn := 0
	for seed := range uint64(300) {
		g, err := Generate(rand.New(rand.NewPCG(seed, 2)), o)
		require.NoError(t, err)
		for v := range topology.JobVertexID(g.NumVertices()) {
			in := len(g.InEdges(v))
			if v == 0 {
				assert.Zero(t, in)
				continue
			}
			assert.True(t, in >= 1 && in <= min(int(v), 3), "v%d has %d inputs", v, in)
			maxIn = max(maxIn, in)
			srcs := map[topology.JobVertexID]bool{}
			for _, e := range g.InEdges(v) {
				s, _ := g.EdgeEnds(e)
				assert.Less(t, s, v)
				assert.False(t, srcs[s], "parallel input edge")
				srcs[s] = true
			}
		}
	}
	assert.Equal(t, 3, maxIn)
}

// Density 0 with ChainRate 1 makes a chain in declaration order; density
// 1 joins every pair; ShuffleOrder hides the direction.
func TestDensityAndOrder(t *testing.T) {
	for seed := range uint64(100) {
		r := rand.New(rand.NewPCG(seed, 3))
		g, err := Generate(r, Options{Vertices: IntRange{1, 8}, Parallelism: IntRange{1, 3}, ChainRate: 1})
		require.NoError(t, err)
		require.Equal(t, max(0, g.NumVertices()-1), g.NumEdges())
		for e := range topology.JobEdgeID(g.NumEdges()) {
			s, c := g.EdgeEnds(e)
			assert.Equal(t, s+1, c)
		}
		g, err = Generate(r, Options{Vertices: IntRange{1, 8}, Parallelism: IntRange{1, 3}, Density: FloatRange{1, 1}, ShuffleOrder: true})
		require.NoError(t, err)
		n := g.NumVertices()
		require.Equal(t, n*(n-1)/2, g.NumEdges())
	}
}

// Motifs are planted as specified, on the first positions of the order.
func TestMotifs(t *testing.T) {
	for seed := range uint64(200) {
		r := rand.New(rand.NewPCG(seed, 4))
		g, err := Generate(r, Options{Vertices: IntRange{1, 6}, Parallelism: IntRange{1, 12}, ShuffleOrder: true, Density: FloatRange{0.5, 0.5},
			ForwardRate: 0.5, Motifs: []Motif{ForwardTriangle}, MotifRate: 1})
		require.NoError(t, err)
		require.GreaterOrEqual(t, g.NumVertices(), 3)
		var motif []string
		for e := range topology.JobEdgeID(3) {
			ed := g.Edge(e)
			motif = append(motif, fmt.Sprintf("%v/%v", ed.ShipStrategy, ed.Exchange))
			require.True(t, ed.Pinned)
		}
		assert.Equal(t, []string{"rescale/pipelined", "forward/pipelined-bounded", "rescale/blocking"}, motif)
		assert.Equal(t, g.Edge(0).Source, g.Edge(1).Source)
		assert.Equal(t, g.Edge(0).Target, g.Edge(2).Source)
		assert.Equal(t, g.Edge(1).Target, g.Edge(2).Target)

		g, err = Generate(r, Options{Vertices: IntRange{2, 8}, Parallelism: IntRange{1, 6}, Density: FloatRange{1, 1},
			ForwardRate: 0.2, Motifs: []Motif{RescaleTriangle}, MotifRate: 1})
		require.NoError(t, err)
		p := [3]int{g.Vertex(0).Parallelism, g.Vertex(1).Parallelism, g.Vertex(2).Parallelism}
		assert.Contains(t, CrossParallelisms, p)
		var among []string
		for e := range topology.JobEdgeID(g.NumEdges()) {
			s, c := g.EdgeEnds(e)
			if c <= 2 {
				ed := g.Edge(e)
				among = append(among, fmt.Sprintf("%d-%v/%v->%d", s, ed.ShipStrategy, ed.Exchange, c))
			}
		}
		assert.Equal(t, []string{"0-rescale/pipelined-bounded->1", "1-rescale/pipelined-bounded->2", "0-rescale/blocking->2"}, among,
			"only the motif joins v0, v1, v2")
	}
	// MotifCut puts the cut on a hybrid edge.
	for _, cut := range []exchange.ResultPartitionType{exchange.HybridFull, exchange.HybridSelective} {
		g, err := Generate(rand.New(rand.NewPCG(7, 4)), Options{Vertices: IntRange{3, 3}, Parallelism: IntRange{1, 6},
			Motifs: []Motif{RescaleTriangle}, MotifRate: 1, MotifCut: cut})
		require.NoError(t, err)
		assert.Equal(t, cut, g.Edge(2).Exchange)
		assert.True(t, g.Edge(2).Pinned)
	}
	assert.Equal(t, []exchange.ResultPartitionType{exchange.Blocking, exchange.Pipelined, exchange.PipelinedBounded,
		exchange.HybridFull, exchange.HybridSelective}, AllPinTypes())
	assert.Equal(t, "forward-triangle", ForwardTriangle.String())
	assert.Equal(t, "rescale-triangle", RescaleTriangle.String())
	assert.True(t, strings.HasPrefix(Motif(9).String(), "motif("))
}

// Rates of 0 and 1 and single-entry lists pin the outcome down.
func TestRatesAndLists(t *testing.T) {
	gpu := resource.New(1000, 2048).WithExtended("gpu", 2)
	o := Options{Vertices: IntRange{4, 4}, Parallelism: IntRange{2, 2}, Density: FloatRange{1, 1}, ForwardRate: 1,
		PinRates: []float64{1}, PinTypes: []exchange.ResultPartitionType{exchange.PipelinedBounded},
		Groups: []string{"x", "y"}, GroupRate: 0,
		Profiles: []resource.Profile{resource.New(1000, 2048)}, ResourceJobRate: 1, ResourceRate: 1, GPURate: 1, GPUs: []int64{2},
		UnboundedRate: 1, Duration: DurationRange{Min: time.Second}}
	g, err := Generate(rand.New(rand.NewPCG(1, 1)), o)
	require.NoError(t, err)
	require.Equal(t, 6, g.NumEdges())
	for e := range topology.JobEdgeID(g.NumEdges()) {
		assert.Equal(t, exchange.Forward, g.Edge(e).ShipStrategy)
		assert.True(t, g.Edge(e).Pinned)
		assert.Equal(t, exchange.PipelinedBounded, g.Edge(e).Exchange)
	}
	for v := range topology.JobVertexID(4) {
		vx := g.Vertex(v)
		assert.Equal(t, "x", vx.SlotSharingGroup, "GroupRate 0 keeps Groups[0]")
		assert.Equal(t, gpu, vx.Resources)
		assert.True(t, vx.Unbounded)
		assert.Equal(t, time.Second, vx.Duration)
	}

	// Pool of one, always used: every parallelism equal.
	for seed := range uint64(50) {
		g, err := Generate(rand.New(rand.NewPCG(seed, 5)), Options{Vertices: IntRange{2, 9}, Parallelism: IntRange{1, 12},
			ParallelismPool: 1, PoolRate: 1})
		require.NoError(t, err)
		for v := range topology.JobVertexID(g.NumVertices()) {
			assert.Equal(t, g.Vertex(0).Parallelism, g.Vertex(v).Parallelism)
		}
	}
}

// Options Generate cannot honour are reported, not panicked on.
func TestBadOptions(t *testing.T) {
	ok := Options{Vertices: IntRange{1, 3}, Parallelism: IntRange{1, 3}}
	for name, mut := range map[string]func(*Options){
		"no vertices":        func(o *Options) { o.Vertices = IntRange{0, 3} },
		"empty vertex range": func(o *Options) { o.Vertices = IntRange{3, 2} },
		"no parallelism":     func(o *Options) { o.Parallelism = IntRange{} },
		"forward in ships":   func(o *Options) { o.Ships = []exchange.ShipStrategy{exchange.Forward} },
		"no profiles":        func(o *Options) { o.ResourceJobRate, o.ResourceRate = 1, 1 },
		"no gpus":            func(o *Options) { o.GPURate = 1 },
		"no motifs":          func(o *Options) { o.MotifRate = 1 },
		"pipelined cut":      func(o *Options) { o.MotifCut = exchange.PipelinedBounded },
		"unknown cut":        func(o *Options) { o.MotifCut = exchange.ResultPartitionType(9) },
	} {
		o := ok
		mut(&o)
		_, err := Generate(rand.New(rand.NewPCG(1, 1)), o)
		assert.True(t, errors.Is(err, ErrOptions), "%s: %v", name, err)
	}
	_, err := Generate(rand.New(rand.NewPCG(1, 1)), ok)
	assert.NoError(t, err)
}
