// Package jobgen generates seeded random job graphs for the property tests
// of this module.
//
// One generator serves every test: Options holds the knobs (vertex count,
// parallelism, edge density or in-degree, ship strategies, pinned
// exchanges, slot sharing groups, resources, unbounded vertices,
// durations, planted motifs), and Generate draws a job from a *rand.Rand.
// Every job it returns is acyclic: edges go from earlier to later
// positions of an edge order (the declaration order, or a random
// permutation of it), and a forward edge only joins vertices of equal
// parallelism. The same options and the same random source give the same
// job.
package jobgen

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/topology"
)

// IntRange is an inclusive range of whole numbers; a draw is uniform.
type IntRange struct{ Min, Max int }

func (g IntRange) draw(r *rand.Rand) int {
	if g.Max <= g.Min {
		return g.Min
	}
	return g.Min + r.IntN(g.Max-g.Min+1)
}

// FloatRange is a range [Min, Max) of reals; a draw is uniform. When Max
// is not above Min the draw is Min and takes nothing from the source.
type FloatRange struct{ Min, Max float64 }

func (g FloatRange) draw(r *rand.Rand) float64 {
	if g.Max <= g.Min {
		return g.Min
	}
	return g.Min + (g.Max-g.Min)*r.Float64()
}

// DurationRange is the durations Min, Min+Step, ... up to Max; a draw is
// uniform among them. The zero value draws 0.
type DurationRange struct{ Min, Max, Step time.Duration }

func (g DurationRange) draw(r *rand.Rand) time.Duration {
	if g.Step <= 0 || g.Max <= g.Min {
		return g.Min
	}
	return g.Min + time.Duration(r.Int64N(int64((g.Max-g.Min)/g.Step)+1))*g.Step
}

// Motif is a small subgraph that random graphs rarely make by themselves
// and that Generate plants on the first three positions of the edge
// order (see Options.Motifs).
type Motif uint8

const (
	// ForwardTriangle is the FLINK-22017 motif W -> P -> Q, W -> Q with
	// W -rescale/pipelined-> P, W -forward/pipelined-bounded-> Q and
	// P -rescale/blocking-> Q, Q taking W's parallelism: a blocking
	// rescale whose blocks can straddle the regions glued by the two
	// pipelined edges. Random edges may join the three vertices too.
	ForwardTriangle Motif = iota
	// RescaleTriangle is the cross-region motif S -> X -> T, S -> T with
	// S -rescale/pipelined-bounded-> X -rescale/pipelined-bounded-> T and
	// S -rescale/blocking-> T, the parallelisms (s, x, t) drawn from
	// CrossParallelisms: a group of the blocking edge is cut across two
	// regions, one of which consumes it (FLINK-22017). These
	// parallelisms (up to 6) override Options.Parallelism. No random
	// edge joins the three vertices.
	RescaleTriangle
)

// CrossParallelisms are the parallelisms (s, x, t) of RescaleTriangle for
// which the blocking edge has a cross-region group.
var CrossParallelisms = [][3]int{{4, 3, 2}, {5, 2, 3}, {5, 4, 3}, {6, 3, 4}, {6, 5, 4}}

// motifSize is the number of vertices every motif spans.
const motifSize = 3

// String returns the motif's name.
func (m Motif) String() string {
	switch m {
	case ForwardTriangle:
		return "forward-triangle"
	case RescaleTriangle:
		return "rescale-triangle"
	}
	return "motif(" + strconv.Itoa(int(m)) + ")"
}

// sealed reports whether random edges stay away from the motif's vertices.
func (m Motif) sealed() bool { return m == RescaleTriangle }

// plant sets the parallelisms of the vertices at (a, b, c) and returns the
// motif's edges between them; cut is the partition type of the edge that
// is blocking in the motif's description.
func (m Motif) plant(r *rand.Rand, par []int, id func(int) string, a, b, c int, cut exchange.ResultPartitionType) []topology.JobEdge {
	pinned := func(s, t int, ship exchange.ShipStrategy, x exchange.ResultPartitionType) topology.JobEdge {
		return topology.JobEdge{Source: id(s), Target: id(t), ShipStrategy: ship, Pinned: true, Exchange: x}
	}
	switch m {
	case ForwardTriangle:
		par[c] = par[a]
		return []topology.JobEdge{
			pinned(a, b, exchange.Rescale, exchange.Pipelined),
			pinned(a, c, exchange.Forward, exchange.PipelinedBounded),
			pinned(b, c, exchange.Rescale, cut),
		}
	case RescaleTriangle:
		p := CrossParallelisms[r.IntN(len(CrossParallelisms))]
		par[a], par[b], par[c] = p[0], p[1], p[2]
		return []topology.JobEdge{
			pinned(a, b, exchange.Rescale, exchange.PipelinedBounded),
			pinned(b, c, exchange.Rescale, exchange.PipelinedBounded),
			pinned(a, c, exchange.Rescale, cut),
		}
	}
	return nil
}

// Grid returns the profiles cpu x memory for every pair of the given
// amounts (millicores, MB), cpu-major.
func Grid(cpuMillis, memoryMB []int64) []resource.Profile {
	var out []resource.Profile
	for _, c := range cpuMillis {
		for _, m := range memoryMB {
			out = append(out, resource.New(c, m))
		}
	}
	return out
}

// Options are the knobs of Generate. Rates are probabilities in [0, 1];
// the zero value of a knob turns its feature off. Lists drawn from are
// drawn uniformly, so repeating an entry weighs it.
type Options struct {
	// Name is the job's name.
	Name string
	// IDPrefix starts every vertex id, followed by the vertex's index
	// ("" means "v").
	IDPrefix string

	// Vertices is the range of the vertex count (at least 1).
	Vertices IntRange
	// Parallelism is the range of a vertex's parallelism (at least 1).
	Parallelism IntRange
	// ParallelismPool, when above 0, draws that many parallelisms from
	// Parallelism per job; each vertex takes one of them with PoolRate
	// (else a fresh draw), so that equal parallelisms, and with them
	// forward edges, are common even over a wide range.
	ParallelismPool int
	// PoolRate is the chance that a vertex takes a pooled parallelism.
	PoolRate float64

	// ShuffleOrder makes the edge order a random permutation of the
	// vertices instead of their declaration order, so that declaration
	// order says nothing about the edge direction.
	ShuffleOrder bool
	// Density is the range of a per-job chance that an edge joins a pair
	// of positions (earlier -> later) in the edge order; each pair is
	// tried once. Unused when Inputs is above 0.
	Density FloatRange
	// ChainRate is an extra chance for consecutive positions: a pair the
	// density left out is still joined with this chance, making most
	// jobs chains with shortcuts.
	ChainRate float64
	// Inputs, when above 0, replaces Density: every vertex after the
	// first position reads from 1 to Inputs (at most its position) earlier
	// vertices, chosen uniformly.
	Inputs int
	// ParallelEdgeRate is the chance that a joined pair gets a second,
	// independently drawn edge.
	ParallelEdgeRate float64
	// ShuffleEdges declares the edges in random order instead of
	// motif edges first, then by target position.
	ShuffleEdges bool

	// Ships are the ship strategies an edge draws when it is not forward;
	// they must not include forward. Empty means rescale, hash,
	// rebalance and broadcast.
	Ships []exchange.ShipStrategy
	// ForwardRate is the chance that an edge between equal parallelisms
	// is forward; other edges draw from Ships.
	ForwardRate float64

	// PinRates lists per-job chances that an edge has a pinned exchange;
	// a job draws one of them (empty: no pinned exchanges).
	PinRates []float64
	// PinTypes are the result partition types a pinned exchange draws
	// from (empty means blocking, pipelined and pipelined-bounded).
	PinTypes []exchange.ResultPartitionType

	// Groups are the slot sharing group names a vertex draws from. An
	// empty name is the default group.
	Groups []string
	// GroupRate is the per-job chance of drawing groups at all; a job
	// that does not puts every vertex into Groups[0] (or the default
	// group when Groups is empty).
	GroupRate float64

	// Profiles are the resource profiles a vertex draws from.
	Profiles []resource.Profile
	// ResourceJobRate is the per-job chance that vertices get profiles at
	// all; the other jobs have only resource.Unknown.
	ResourceJobRate float64
	// ResourceRate is the chance that a vertex of such a job draws a
	// profile (else it stays resource.Unknown).
	ResourceRate float64
	// GPURate is the chance that a drawn known profile gets a "gpu"
	// extended resource of an amount drawn from GPUs (0 removes it);
	// resource.Unknown stays unknown.
	GPURate float64
	// GPUs are the gpu amounts GPURate draws from.
	GPUs []int64

	// UnboundedRate is the chance that a vertex is unbounded.
	UnboundedRate float64
	// Duration is the range of a vertex's simulated run time; a draw of 0
	// (the zero value always draws 0) gets topology.DefaultDuration from
	// the Builder.
	Duration DurationRange

	// Motifs are the motifs a job may start with; MotifRate is the chance
	// that a job plants one of them, drawn uniformly, on the first three
	// positions of the edge order. Such a job has at least three vertices.
	Motifs []Motif
	// MotifRate is the per-job chance of planting a motif.
	MotifRate float64
	// MotifCut is the partition type of the motif edge that separates
	// regions (the blocking one in the motifs' descriptions); the zero
	// value is exchange.Blocking. A hybrid type plants the motif's
	// cross-region group on a hybrid edge.
	MotifCut exchange.ResultPartitionType
}

// AllPinTypes returns every partition type an edge may pin: the default
// PinTypes (blocking, pipelined, pipelined-bounded) and the hybrid ones.
func AllPinTypes() []exchange.ResultPartitionType {
	return []exchange.ResultPartitionType{exchange.Blocking, exchange.Pipelined, exchange.PipelinedBounded,
		exchange.HybridFull, exchange.HybridSelective}
}

// defaultShips are the non-forward ship strategies used when
// Options.Ships is empty.
var defaultShips = []exchange.ShipStrategy{exchange.Rescale, exchange.Hash, exchange.Rebalance, exchange.Broadcast}

// defaultPinTypes are the pinnable types used when Options.PinTypes is
// empty.
var defaultPinTypes = []exchange.ResultPartitionType{exchange.Blocking, exchange.Pipelined, exchange.PipelinedBounded}

// ErrOptions is wrapped by the error Generate returns for options it
// cannot honour.
var ErrOptions = errors.New("jobgen: invalid options")

func (o *Options) check() error {
	switch {
	case o.Vertices.Min < 1 || o.Vertices.Max < o.Vertices.Min:
		return fmt.Errorf("%w: vertices %+v", ErrOptions, o.Vertices)
	case o.Parallelism.Min < 1 || o.Parallelism.Max < o.Parallelism.Min:
		return fmt.Errorf("%w: parallelism %+v", ErrOptions, o.Parallelism)
	case slices.Contains(o.Ships, exchange.Forward):
		return fmt.Errorf("%w: forward in Ships (use ForwardRate)", ErrOptions)
	case o.ResourceJobRate > 0 && o.ResourceRate > 0 && len(o.Profiles) == 0:
		return fmt.Errorf("%w: resource rates without Profiles", ErrOptions)
	case o.GPURate > 0 && len(o.GPUs) == 0:
		return fmt.Errorf("%w: GPURate without GPUs", ErrOptions)
	case o.MotifRate > 0 && len(o.Motifs) == 0:
		return fmt.Errorf("%w: MotifRate without Motifs", ErrOptions)
	case o.MotifCut.IsPipelined() || o.MotifCut > exchange.HybridSelective:
		return fmt.Errorf("%w: MotifCut %v does not separate regions", ErrOptions, o.MotifCut)
	}
	return nil
}

// chance reports whether an event of probability p happens; p = 0 and
// p = 1 take nothing from r.
func chance(r *rand.Rand, p float64) bool {
	switch {
	case p <= 0:
		return false
	case p >= 1:
		return true
	}
	return r.Float64() < p
}

// pick draws an element of s.
func pick[T any](r *rand.Rand, s []T) T { return s[r.IntN(len(s))] }

// Generate draws a job graph with the options o from r and builds it. The
// error is ErrOptions-wrapped for bad options, or the builder's error,
// which for valid options does not happen.
func Generate(r *rand.Rand, o Options) (*topology.JobGraph, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	ships, pinTypes := o.Ships, o.PinTypes
	if len(ships) == 0 {
		ships = defaultShips
	}
	if len(pinTypes) == 0 {
		pinTypes = defaultPinTypes
	}
	prefix := o.IDPrefix
	if prefix == "" {
		prefix = "v"
	}
	id := func(i int) string { return prefix + strconv.Itoa(i) }

	// Per-job draws.
	motif, planted := Motif(0), chance(r, o.MotifRate)
	if planted {
		motif = pick(r, o.Motifs)
	}
	n := o.Vertices.draw(r)
	if planted {
		n = max(n, motifSize)
	}
	par := o.drawParallelism(r, n)
	order := make([]int, n) // edges go from earlier to later positions
	for i := range order {
		order[i] = i
	}
	if o.ShuffleOrder {
		order = r.Perm(n)
	}
	var edges []topology.JobEdge
	sealed := 0 // positions below this are joined by motif edges only
	if planted {
		edges = motif.plant(r, par, id, order[0], order[1], order[2], o.MotifCut)
		if motif.sealed() {
			sealed = motifSize
		}
	}
	groups := o.Groups
	if !chance(r, o.GroupRate) && len(groups) > 1 {
		groups = groups[:1]
	}
	withResources := chance(r, o.ResourceJobRate)
	pinRate := 0.0
	if len(o.PinRates) > 0 {
		pinRate = pick(r, o.PinRates)
	}
	density := 0.0
	if o.Inputs <= 0 {
		density = o.Density.draw(r)
	}

	b := topology.NewBuilder(o.Name)
	for i := range n {
		b.AddVertex(o.drawVertex(r, id(i), par[i], groups, withResources))
	}
	j := joiner{r: r, o: &o, order: order, par: par, id: id, ships: ships, pinTypes: pinTypes, pinRate: pinRate, edges: edges}
	for c := 1; c < n; c++ {
		if c < sealed {
			continue
		}
		if o.Inputs > 0 {
			for _, a := range r.Perm(c)[:1+r.IntN(min(c, o.Inputs))] {
				j.join(a, c)
			}
			continue
		}
		for a := range c {
			if chance(r, density) || (a == c-1 && chance(r, o.ChainRate)) {
				j.join(a, c)
			}
		}
	}
	edges = j.edges
	if o.ShuffleEdges {
		r.Shuffle(len(edges), func(i, j int) { edges[i], edges[j] = edges[j], edges[i] })
	}
	for _, e := range edges {
		b.AddEdge(e)
	}
	return b.Build()
}

// drawParallelism draws the parallelism of n vertices: from a pool of
// ParallelismPool values drawn first (at PoolRate), or afresh.
func (o *Options) drawParallelism(r *rand.Rand, n int) []int {
	pool := make([]int, o.ParallelismPool)
	for i := range pool {
		pool[i] = o.Parallelism.draw(r)
	}
	par := make([]int, n)
	for i := range par {
		if len(pool) > 0 && chance(r, o.PoolRate) {
			par[i] = pick(r, pool)
		} else {
			par[i] = o.Parallelism.draw(r)
		}
	}
	return par
}

// drawVertex draws a vertex's slot sharing group, resources, boundedness
// and duration.
func (o *Options) drawVertex(r *rand.Rand, id string, par int, groups []string, withResources bool) topology.JobVertex {
	v := topology.JobVertex{ID: id, Parallelism: par}
	if len(groups) > 0 {
		v.SlotSharingGroup = pick(r, groups)
	}
	if withResources && chance(r, o.ResourceRate) {
		v.Resources = pick(r, o.Profiles)
		if !v.Resources.IsUnknown() && chance(r, o.GPURate) {
			v.Resources = v.Resources.WithExtended("gpu", pick(r, o.GPUs))
		}
	}
	v.Unbounded = chance(r, o.UnboundedRate)
	v.Duration = o.Duration.draw(r)
	return v
}

// joiner draws the edges of a job between positions of its edge order.
type joiner struct {
	r        *rand.Rand
	o        *Options
	order    []int // edges go from earlier to later positions
	par      []int
	id       func(int) string
	ships    []exchange.ShipStrategy
	pinTypes []exchange.ResultPartitionType
	pinRate  float64
	edges    []topology.JobEdge
}

// join draws one edge (two at ParallelEdgeRate) from position a to c > a.
func (j *joiner) join(a, c int) {
	r, o := j.r, j.o
	src, dst := j.order[a], j.order[c]
	copies := 1
	if chance(r, o.ParallelEdgeRate) {
		copies = 2
	}
	for range copies {
		e := topology.JobEdge{Source: j.id(src), Target: j.id(dst)}
		if j.par[src] == j.par[dst] && chance(r, o.ForwardRate) {
			e.ShipStrategy = exchange.Forward
		} else {
			e.ShipStrategy = pick(r, j.ships)
		}
		if chance(r, j.pinRate) {
			e.Pinned, e.Exchange = true, pick(r, j.pinTypes)
		}
		j.edges = append(j.edges, e)
	}
}
