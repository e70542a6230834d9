package simulator_test

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/admission"
	"github.com/regionsched/regionsched/exchange"
	"github.com/regionsched/regionsched/internal/jobgen"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/simulator"
	"github.com/regionsched/regionsched/topology"
)

// storageCase is one run of TestReusedStorageRunsAsNew: a single job
// (cfg) or several (jobs).
type storageCase struct {
	name string
	cfg  simulator.Config
	jobs *simulator.JobsConfig
}

// storageOutcome is everything a run returns.
type storageOutcome struct {
	Result *simulator.Result
	Jobs   []simulator.JobResult
	Err    error
}

func (c storageCase) run(st *simulator.Storage) storageOutcome {
	if c.jobs != nil {
		res, jobs, err := simulator.RunJobsWith(*c.jobs, st)
		return storageOutcome{res, jobs, err}
	}
	res, err := simulator.RunWith(c.cfg, st)
	return storageOutcome{Result: res, Err: err}
}

// TestReusedStorageRunsAsNew: runs one after another on one storage —
// the example jobs in every mode under both policies, generated jobs with
// a failure, clusters too small to run on, runs stopped in the middle,
// several jobs behind the admission — each return exactly what they
// return on new storage, in whatever order they come, so that storage
// passes from every kind of run to every other, from larger jobs to
// smaller and back.
func TestReusedStorageRunsAsNew(t *testing.T) {
	var cases []storageCase
	for _, path := range jobFiles(t) {
		job := loadJob(t, path)
		for _, mode := range modes {
			rs := region.FromJob(job, mode)
			cluster := exampleCluster(t, rs)
			name := fmt.Sprintf("%s/%s", filepath.Base(path), mode)
			cases = append(cases,
				storageCase{name: name, cfg: simulator.Config{Regions: rs, Cluster: cluster, Seed: 1, Record: true}},
				storageCase{name: name + "/eager", cfg: simulator.Config{Regions: rs, Cluster: cluster, Seed: 2, Ties: simulator.TiesSeeded,
					Policy: simulator.EagerPolicy, Record: true}})
			if n := rs.MinimumSlots(); n > 1 {
				cases = append(cases, storageCase{name: name + "/too-small", cfg: simulator.Config{Regions: rs, Cluster: slots(n - 1),
					Timeout: 3 * time.Second, Seed: 3, Record: true}})
			}
		}
	}
	rng := rand.New(rand.NewPCG(26, 0x5707))
	for i := range 40 {
		job, err := jobgen.Generate(rng, fuzzJobs)
		require.NoError(t, err)
		rs := region.FromJob(job, modes[i%len(modes)])
		topo := rs.Topology()
		victim := topology.ExecutionVertexID(rng.IntN(topo.NumExecutionVertices()))
		cfg := simulator.Config{Regions: rs, Cluster: slots(rs.MinimumSlots() + i%3), Seed: uint64(i), Ties: tiesFor(uint64(i)), Record: true}
		if vx := topo.Job().Vertex(topo.JobVertexOf(victim)); !vx.Unbounded {
			cfg.Failures = []simulator.Failure{{Task: victim, After: vx.Duration / 2}}
		}
		cases = append(cases, storageCase{name: fmt.Sprintf("generated-%d", i), cfg: cfg})
	}
	// Large enough for full chunks of bulk records and slot lists.
	for _, mode := range []exchange.Mode{exchange.AllBlocking, exchange.AllPipelined} {
		for _, big := range []*topology.JobGraph{chains(t, 3, 1_500), allToAll(t, 1_500)} {
			rs := region.FromJob(big, mode)
			cases = append(cases, storageCase{name: fmt.Sprintf("%s/%s", big.Name(), mode),
				cfg: simulator.Config{Regions: rs, Cluster: slots(max(rs.MinimumSlots(), 700)), Seed: 5, Ties: simulator.TiesSeeded}},
				// Stopped in the middle: tasks running, bulks waiting.
				storageCase{name: fmt.Sprintf("%s/%s/stopped", big.Name(), mode),
					cfg: simulator.Config{Regions: rs, Cluster: slots(max(rs.MinimumSlots(), 700)), Seed: 6, MaxEvents: 400}})
		}
	}
	for _, q := range []admission.Policy{admission.FIFO, admission.StateAware} {
		flood := func(mode exchange.Mode, maxEvents int) *simulator.JobsConfig {
			return &simulator.JobsConfig{Jobs: floodJobs(t), Mode: mode, Cluster: []resource.Count{{Profile: resource.Unknown, N: 4}},
				Queues: []admission.QueueConfig{{Name: "root.default", Policy: q}}, Record: true, MaxEvents: maxEvents}
		}
		cases = append(cases,
			storageCase{name: "flood/" + q.String(), jobs: flood(exchange.AllBlocking, 0)},
			// Stopped in the middle: jobs admitted, others waiting.
			storageCase{name: "flood/" + q.String() + "/stopped", jobs: flood(exchange.AllPipelined, 25)})
	}

	want := make([]storageOutcome, len(cases))
	for i, c := range cases {
		want[i] = c.run(&simulator.Storage{})
	}
	// In order, backwards, then shuffled: every case after others of
	// every kind and size.
	order := make([]int, 0, 3*len(cases))
	for i := range cases {
		order = append(order, i)
	}
	for i := range cases {
		order = append(order, len(cases)-1-i)
	}
	order = append(order, rand.New(rand.NewPCG(1, 2)).Perm(len(cases))...)
	verdicts := map[string]int{}
	for _, w := range want {
		switch {
		case w.Err != nil && w.Result == nil:
			verdicts["error"]++
		default:
			verdicts[w.Result.Verdict.String()]++
		}
	}
	for _, v := range []string{"finished", "deadlock", "failed", "error"} {
		require.Positive(t, verdicts[v], "no case ends %s", v)
	}
	st := &simulator.Storage{}
	for _, i := range order {
		got := cases[i].run(st)
		require.Equal(t, want[i], got, cases[i].name)
		require.Positive(t, st.Schedulers(), "%s: the run left its scheduler", cases[i].name)
	}
	assert.GreaterOrEqual(t, st.Schedulers(), 4, "the flood's four")
	assert.Positive(t, st.Tasks())
}

// TestRunConcurrently: runs on several goroutines at once, each taking
// storage that runs on the others left, return what they return alone
// (go test -race checks that no storage is shared).
func TestRunConcurrently(t *testing.T) {
	var cfgs []simulator.Config
	for _, job := range []*topology.JobGraph{flip119(t), chains(t, 3, 400), allToAll(t, 300)} {
		for i, mode := range modes {
			rs := region.FromJob(job, mode)
			cfgs = append(cfgs, simulator.Config{Regions: rs, Cluster: slots(max(rs.MinimumSlots(), 50)), Seed: uint64(i), Ties: tiesFor(uint64(i))})
		}
	}
	want := make([]*simulator.Result, len(cfgs))
	for i, cfg := range cfgs {
		want[i] = run(t, cfg)
	}
	const workers = 4
	got := make([][]*simulator.Result, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for round := range 3 {
				for k := range cfgs {
					i := (k + w + round) % len(cfgs)
					res, err := simulator.Run(cfgs[i])
					if err != nil {
						res = &simulator.Result{Err: err}
					}
					got[w] = append(got[w], res)
				}
			}
		}()
	}
	wg.Wait()
	for w := range workers {
		require.Len(t, got[w], 3*len(cfgs))
		for j, res := range got[w] {
			round, k := j/len(cfgs), j%len(cfgs)
			i := (k + w + round) % len(cfgs)
			require.Equal(t, want[i], res, "worker %d, run %d", w, j)
		}
	}
}

// TestStorageOfALargeRunIsNotKeptForSmallOnes: after a run of 60,000
// tasks, a run of a few keeps none of its tables (resetting them would
// cost the large run's size on every small run), and returns what it
// returns on new storage; a run of a size close to the large one keeps
// them.
func TestStorageOfALargeRunIsNotKeptForSmallOnes(t *testing.T) {
	large := region.FromJob(chains(t, 3, 20_000), exchange.AllBlocking)
	small := region.FromJob(flip119(t), exchange.AllBlocking)
	st := &simulator.Storage{}
	_, err := simulator.RunWith(simulator.Config{Regions: large, Cluster: slots(1_000), Seed: 1}, st)
	require.NoError(t, err)
	require.Equal(t, 60_000, st.Served())
	require.GreaterOrEqual(t, st.Tasks(), 60_000)

	cfg := simulator.Config{Regions: small, Cluster: slots(4), Seed: 2, Record: true}
	got, err := simulator.RunWith(cfg, st)
	require.NoError(t, err)
	want, err := simulator.RunWith(cfg, &simulator.Storage{})
	require.NoError(t, err)
	assert.Equal(t, want, got)
	assert.Less(t, st.Served(), 100, "the large run's scheduler was dropped")
	assert.Less(t, st.Tasks(), 5_000, "the large run's tables were dropped")

	near := region.FromJob(chains(t, 3, 6_000), exchange.AllBlocking)
	_, err = simulator.RunWith(simulator.Config{Regions: large, Cluster: slots(1_000), Seed: 3}, st)
	require.NoError(t, err)
	_, err = simulator.RunWith(simulator.Config{Regions: near, Cluster: slots(1_000), Seed: 4}, st)
	require.NoError(t, err)
	assert.Equal(t, 60_000, st.Served(), "18,000 tasks reuse the tables of 60,000")
	assert.GreaterOrEqual(t, st.Tasks(), 60_000)
}
