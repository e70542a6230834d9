package timeline

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/regionsched/regionsched/runfile"
)

// palette is a qualitative colour set (Tableau 10 plus two).
var palette = []string{"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948",
	"#b07aa1", "#ff9da7", "#9c755f", "#bab0ac", "#8cd17d", "#86bcb6"}

// otherColor is the colour of the vertices left out of the legend.
const otherColor = "#c9c9c9"

// colorKeys maps events to colours: by region, or by a name — the job
// vertex (vertex mode), the job (job mode) or the job's queue (queue
// mode) — with the most frequent names coloured and the rest grey.
type colorKeys struct {
	byRegion bool
	byJob    bool              // names are jobs, or their queues; drivers are drawn apart
	queues   map[string]string // job -> queue: the names are queues (queue mode), nil otherwise
	regions  int               // regions in the legend (region mode)
	vertex   map[string]int    // name -> key (vertex, job and queue modes)
	names    []string          // legend label per key (vertex, job and queue modes)
	other    int               // key of the names without a colour of their own, or -1
	title    string            // what the colours stand for
	note     string
}

// vertexOf returns the job vertex of an execution vertex name "ID#i".
func vertexOf(task string) string {
	if i := strings.LastIndexByte(task, '#'); i >= 0 {
		return task[:i]
	}
	return task
}

// nameOf is what an event's colour stands for in vertex, job or queue
// mode.
func (c *colorKeys) nameOf(e runfile.Event) string {
	if c.byJob {
		return c.ofJob(e.Job)
	}
	return vertexOf(e.Task)
}

// ofJob is the name a job's colour stands for in job or queue mode: the
// job, or its queue.
func (c *colorKeys) ofJob(job string) string {
	if c.queues != nil {
		return c.queues[job]
	}
	return job
}

// checkQueues checks that every job of the timeline (its Jobs, and the
// jobs of its events in st) has a queue in tl.JobQueues.
func checkQueues(tl Timeline, st *colorStats) error {
	for _, jobs := range [][]string{tl.Jobs, st.jobs.names} {
		for _, j := range jobs {
			if _, ok := tl.JobQueues[j]; !ok {
				return &JobQueueError{Job: j, Jobs: slices.Sorted(maps.Keys(tl.JobQueues))}
			}
		}
	}
	return nil
}

// newColorKeys decides the colours of a timeline from what its events
// name (st, gathered from them in order). Coloured by queue, a job
// without a queue is an error.
func newColorKeys(tl Timeline, st *colorStats) (colorKeys, error) {
	c := colorKeys{other: -1, byJob: tl.ColorBy == ColorByJob || tl.ColorBy == ColorByQueue}
	if tl.ColorBy == ColorByQueue {
		if err := checkQueues(tl, st); err != nil {
			return c, err
		}
		c.queues = tl.JobQueues
		if c.queues == nil { // a run without jobs
			c.queues = map[string]string{}
		}
	}
	regions := max(tl.Regions, st.regions)
	type named struct {
		name         string
		first, count int
	}
	seen := map[string]int{}
	var names []named
	add := func(name string) *named {
		i, ok := seen[name]
		if !ok {
			i = len(names)
			seen[name] = i
			names = append(names, named{name: name, first: i})
		}
		return &names[i]
	}
	from := &st.vertices
	if c.byJob {
		from = &st.jobs
		for _, j := range tl.Jobs { // the jobs given first, in their order
			add(c.ofJob(j))
		}
	}
	for i, name := range from.names { // then in order of appearance
		if c.byJob {
			name = c.ofJob(name)
		}
		add(name).count += from.counts[i]
	}
	switch tl.ColorBy {
	case ColorByRegion:
		c.byRegion = true
	case ColorAuto:
		c.byRegion = regions <= len(palette)
	}
	if c.byRegion {
		c.title = "colour = region:"
		c.regions = min(regions, len(palette))
		if regions > len(palette) {
			c.note = fmt.Sprintf("Colours repeat every %d regions; %d regions in all.", len(palette), regions)
		}
		return c, nil
	}
	what, others := c.what()
	c.title = "colour = " + what + ":"
	keep := names
	if len(names) > len(palette) {
		// the most frequent names get colours, in order of appearance
		keep = slices.Clone(names)
		slices.SortStableFunc(keep, func(a, b named) int { return cmp.Compare(b.count, a.count) })
		keep = keep[:len(palette)-1]
		slices.SortFunc(keep, func(a, b named) int { return cmp.Compare(a.first, b.first) })
		c.other = len(keep)
	}
	c.vertex = make(map[string]int, len(names))
	for i, v := range keep {
		c.vertex[v.name] = i
		c.names = append(c.names, v.name)
	}
	if c.other >= 0 {
		c.names = append(c.names, fmt.Sprintf("%d other %s", len(names)-len(keep), others))
	}
	if regions > 1 && !c.byJob {
		c.note = fmt.Sprintf("%d regions in all.", regions)
	}
	return c, nil
}

// what says what the colours of vertex, job or queue mode stand for, one
// and several.
func (c *colorKeys) what() (one, several string) {
	switch {
	case c.queues != nil:
		return "queue", "queues"
	case c.byJob:
		return "job", "jobs"
	}
	return "job vertex", "vertices"
}

// of returns the colour key of an event's task.
func (c *colorKeys) of(e runfile.Event) int { return c.keyOf(e.Region, c.nameOf(e)) }

// keyOf returns the colour key of a task of the region and the name (job
// vertex or job) given.
func (c *colorKeys) keyOf(region int, name string) int {
	if c.byRegion {
		return region
	}
	if k, ok := c.vertex[name]; ok {
		return k
	}
	return max(c.other, 0)
}

// numKeys is the number of distinct colours (for the aggregated view, which
// folds region keys onto the palette).
func (c *colorKeys) numKeys() int {
	if c.byRegion {
		return len(palette)
	}
	return max(1, len(c.names))
}

// slot maps a key to its palette slot.
func (c *colorKeys) slot(k int) int {
	return ((k % len(palette)) + len(palette)) % len(palette)
}

func (c *colorKeys) color(k int) string {
	if !c.byRegion && k == c.other {
		return otherColor
	}
	return palette[c.slot(k)]
}

// textColor is a text colour readable on the key's colour.
func (c *colorKeys) textColor(k int) string {
	switch c.color(k) {
	case "#edc948", "#bab0ac", "#8cd17d", "#86bcb6", "#ff9da7", "#76b7b2", otherColor:
		return "#111"
	}
	return "#fff"
}

func (c *colorKeys) legend() []legendEntry {
	var out []legendEntry
	if c.byRegion {
		for r := range c.regions {
			out = append(out, legendEntry{fill: c.color(r), label: fmt.Sprintf("region %d", r)})
		}
		return out
	}
	for k, name := range c.names {
		out = append(out, legendEntry{fill: c.color(k), label: name})
	}
	return out
}

// legendName is what the legend calls key k.
func (c *colorKeys) legendName(k int) string {
	if c.byRegion {
		if c.note == "" { // one colour per region
			return fmt.Sprintf("region %d", k)
		}
		return fmt.Sprintf("regions of colour %d", c.slot(k))
	}
	if k < len(c.names) {
		return c.names[k]
	}
	_, several := c.what()
	return "other " + several
}
