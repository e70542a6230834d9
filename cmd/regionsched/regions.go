package main

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/regionsched/regionsched/internal/jsontext"
	"github.com/regionsched/regionsched/region"
	"github.com/regionsched/regionsched/topology"
)

func newRegionsCommand(stdin io.Reader, mode *modeFlag) *cobra.Command {
	var format string
	c := &cobra.Command{
		Use:   "regions [--mode M] [--format text|json|dot] JOB",
		Short: "Derive the pipelined regions of a job",
		Args:  exactArgs(1),
	}
	c.Flags().StringVar(&format, "format", "text", "output format: text, json or dot (case-insensitive)")
	c.RunE = func(c *cobra.Command, args []string) error {
		format, err := parseChoice("format", "output format", format, "text", "json", "dot")
		if err != nil {
			return err
		}
		job, err := loadJob(args[0], stdin)
		if err != nil {
			return err
		}
		rs := region.FromJob(job, mode.mode)
		w := bufio.NewWriterSize(c.OutOrStdout(), 1<<20)
		switch format {
		case "json":
			writeRegionsJSON(w, rs)
		case "dot":
			out, err := rs.DOT()
			if err != nil {
				return err
			}
			w.Write(out)
			w.WriteByte('\n')
		default:
			writeRegionsText(w, rs)
		}
		return w.Flush()
	}
	return c
}

// writeRegionsJSON writes the object of docs/cli.md by hand, each
// region's "consumes" (the regions whose blocking results it reads) as
// ranges of ids: an all-to-all blocking edge between 10,000 and 10,000
// subtasks gives 10,000 regions that each consume the same 10,000
// regions, one range. A job with hybrid edges also has each region's
// "consumesHybrid", the regions whose hybrid results it reads.
func writeRegionsJSON(w *bufio.Writer, rs *region.Regions) {
	t := rs.Topology()
	job := t.Job()
	fmt.Fprintf(w, "{\n  \"job\": %s,\n  \"mode\": %q,\n  \"executionVertices\": %d,\n  \"blockingLogicalEdges\": %d,\n",
		jsontext.AppendString(nil, job.Name()), t.Mode().String(), t.NumExecutionVertices(), job.BlockingEdges(t.Mode()))
	hybrid := job.HybridEdges(t.Mode())
	if hybrid > 0 { // (as the text header: only when there are some)
		fmt.Fprintf(w, "  \"hybridLogicalEdges\": %d,\n", hybrid)
	}
	fmt.Fprintf(w, "  \"minimumSlots\": %d,\n  \"regions\": [", rs.MinimumSlots())
	producers := newProducerRanges(rs)
	var buf []byte
	var consumed consumedGroups
	for r := range region.ID(rs.NumRegions()) {
		if r > 0 {
			w.WriteByte(',')
		}
		buf = buf[:0]
		buf = append(buf, "\n    {\"id\": "...)
		buf = strconv.AppendInt(buf, int64(r), 10)
		buf = append(buf, ", \"vertices\": ["...)
		for i, v := range rs.Members(r) {
			if i > 0 {
				buf = append(buf, ", "...)
			}
			buf = jsontext.AppendString(buf, t.VertexName(v))
		}
		buf = append(buf, "], \"slots\": "...)
		buf = strconv.AppendInt(buf, int64(rs.SlotCount(r)), 10)
		consumed.split(rs, r)
		buf = append(buf, ", \"consumes\": "...)
		buf = appendRangesJSON(buf, producers.of(r, consumed.blocking))
		if hybrid > 0 {
			buf = append(buf, ", \"consumesHybrid\": "...)
			buf = appendRangesJSON(buf, producers.of(r, consumed.hybrid))
		}
		buf = append(buf, '}')
		w.Write(buf)
	}
	w.WriteString("\n  ]\n}\n")
}

// appendRangesJSON appends ranges as a JSON array of [first, last] pairs.
func appendRangesJSON(buf []byte, ranges []idRange) []byte {
	buf = append(buf, '[')
	for i, x := range ranges {
		if i > 0 {
			buf = append(buf, ", "...)
		}
		buf = append(buf, '[')
		buf = strconv.AppendInt(buf, int64(x.first), 10)
		buf = append(buf, ", "...)
		buf = strconv.AppendInt(buf, int64(x.last), 10)
		buf = append(buf, ']')
	}
	return append(buf, ']')
}

// idRange is an inclusive range of region ids.
type idRange struct{ first, last region.ID }

// producerRanges gives the producer regions of regions as ranges of ids.
// Each partition group's producers are turned into ranges once; a
// region's are the union of its groups' ranges without itself, so the
// work grows with the regions and the ranges of the groups they read,
// not with the producers of every region's groups.
type producerRanges struct {
	rs     *region.Regions
	groups map[topology.GroupID][]idRange
	merged []idRange // scratch of of
}

func newProducerRanges(rs *region.Regions) *producerRanges {
	return &producerRanges{rs: rs, groups: map[topology.GroupID][]idRange{}}
}

// group returns the producer regions of g as ascending ranges.
func (p *producerRanges) group(g topology.GroupID) []idRange {
	if x, ok := p.groups[g]; ok {
		return x
	}
	out := appendRanges(nil, p.rs.GroupProducerRegions(g))
	p.groups[g] = out
	return out
}

// appendRanges appends ascending ids to ranges as ranges.
func appendRanges(ranges []idRange, ids []region.ID) []idRange {
	for _, id := range ids {
		if n := len(ranges); n > 0 && ranges[n-1].last+1 == id {
			ranges[n-1].last = id
			continue
		}
		ranges = append(ranges, idRange{id, id})
	}
	return ranges
}

// of returns the regions other than r that produce into groups, as
// ascending, disjoint, non-adjacent ranges (valid until the next call).
func (p *producerRanges) of(r region.ID, groups []topology.GroupID) []idRange {
	p.merged = p.merged[:0]
	for _, g := range groups {
		for _, x := range p.group(g) {
			if x.first <= r && r <= x.last { // r reads its own results too: leave it out
				if x.first < r {
					p.merged = append(p.merged, idRange{x.first, r - 1})
				}
				if r < x.last {
					p.merged = append(p.merged, idRange{r + 1, x.last})
				}
				continue
			}
			p.merged = append(p.merged, x)
		}
	}
	if len(groups) > 1 {
		slices.SortFunc(p.merged, func(a, b idRange) int { return int(a.first) - int(b.first) })
	}
	out := p.merged[:0]
	for _, x := range p.merged {
		if n := len(out); n > 0 && x.first <= out[n-1].last+1 {
			out[n-1].last = max(out[n-1].last, x.last)
			continue
		}
		out = append(out, x)
	}
	p.merged = out
	return out
}

// writeRegionsText writes a summary line and a table with one row per
// region; long vertex lists are cut and consumed regions shown as ranges,
// those read through hybrid exchanges after "hybrid".
func writeRegionsText(w io.Writer, rs *region.Regions) {
	t := rs.Topology()
	job := t.Job()
	blocking := job.BlockingEdges(t.Mode())
	fmt.Fprintf(w, "job %q, mode %s\n", job.Name(), t.Mode())
	edges := count(blocking, "blocking logical edge")
	hybrid := job.HybridEdges(t.Mode())
	if hybrid > 0 {
		edges += ", " + count(hybrid, "hybrid logical edge")
	}
	fmt.Fprintf(w, "%s, %s, %s, minimum slots %d\n", countOf(t.NumExecutionVertices(), "execution vertex", "execution vertices"),
		count(rs.NumRegions(), "region"), edges, rs.MinimumSlots())
	if n, ok := rs.SlotsToRun(); ok && n > rs.MinimumSlots() {
		fmt.Fprintf(w, "subtasks that never finish keep their slots: the job runs on %d slots or more\n", n)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "%-7s %-6s %-40s %s\n", "REGION", "SLOTS", "VERTICES", "CONSUMES")
	producers := newProducerRanges(rs)
	var consumed consumedGroups
	for r := range region.ID(rs.NumRegions()) {
		members := rs.MemberNames(r, 8) // "{A#0, B#0}": the braces go
		consumed.split(rs, r)
		var parts []string
		if len(consumed.blocking) > 0 || len(consumed.hybrid) == 0 {
			parts = append(parts, rangesText(producers.of(r, consumed.blocking)))
		}
		if len(consumed.hybrid) > 0 {
			parts = append(parts, "hybrid "+rangesText(producers.of(r, consumed.hybrid)))
		}
		fmt.Fprintf(w, "%-7d %-6d %-40s %s\n", r, rs.SlotCount(r), members[1:len(members)-1], strings.Join(parts, "; "))
	}
}

// consumedGroups holds the partition groups a region reads from other
// regions, split by the exchange of their edge (valid until the next
// split).
type consumedGroups struct {
	blocking, hybrid []topology.GroupID
}

// split sorts the groups region r consumes into blocking and hybrid ones.
func (c *consumedGroups) split(rs *region.Regions, r region.ID) {
	t := rs.Topology()
	c.blocking, c.hybrid = c.blocking[:0], c.hybrid[:0]
	for _, g := range rs.ConsumedGroups(r) {
		if t.PartitionType(t.EdgeOfGroup(g)).IsHybrid() {
			c.hybrid = append(c.hybrid, g)
		} else {
			c.blocking = append(c.blocking, g)
		}
	}
}

// rangesText renders ranges compactly: "0-3, 7, 9-12", or "-" if none.
func rangesText(ranges []idRange) string {
	if len(ranges) == 0 {
		return "-"
	}
	var b strings.Builder
	for i, x := range ranges {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(int(x.first)))
		if x.last > x.first {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(int(x.last)))
		}
	}
	return b.String()
}
