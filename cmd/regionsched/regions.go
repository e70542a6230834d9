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

// writeRegionsJSON writes the object of docs/cli.md by hand: an
// all-to-all blocking edge between 10,000 and 10,000 subtasks gives 10,000
// regions that each consume the same 10,000 regions, so the encoded
// "consumes" list of a partition group is built once and reused.
func writeRegionsJSON(w *bufio.Writer, rs *region.Regions) {
	t := rs.Topology()
	job := t.Job()
	fmt.Fprintf(w, "{\n  \"job\": %s,\n  \"mode\": %q,\n  \"executionVertices\": %d,\n  \"blockingLogicalEdges\": %d,\n  \"hybridLogicalEdges\": %d,\n  \"minimumSlots\": %d,\n  \"regions\": [",
		jsontext.AppendString(nil, job.Name()), t.Mode().String(), t.NumExecutionVertices(), job.BlockingEdges(t.Mode()), job.HybridEdges(t.Mode()), rs.MinimumSlots())
	cache := map[topology.GroupID][]byte{}
	var buf []byte
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
		buf = append(buf, ", \"consumes\": "...)
		w.Write(buf)
		w.Write(consumesJSON(rs, r, cache))
		w.WriteByte('}')
	}
	w.WriteString("\n  ]\n}\n")
}

// consumesJSON encodes the producer regions of r as a JSON array; when r
// reads a single group that it does not also produce into, the array is the
// group's producer list and is cached.
func consumesJSON(rs *region.Regions, r region.ID, cache map[topology.GroupID][]byte) []byte {
	groups := rs.ConsumedGroups(r)
	if len(groups) == 1 && !rs.IsCrossRegion(groups[0]) {
		if b, ok := cache[groups[0]]; ok {
			return b
		}
		b := appendIDs(nil, rs.GroupProducerRegions(groups[0]))
		cache[groups[0]] = b
		return b
	}
	return appendIDs(nil, rs.ProducerRegions(r))
}

func appendIDs(buf []byte, ids []region.ID) []byte {
	buf = append(buf, '[')
	for i, id := range ids {
		if i > 0 {
			buf = append(buf, ", "...)
		}
		buf = strconv.AppendInt(buf, int64(id), 10)
	}
	return append(buf, ']')
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
	fmt.Fprintf(w, "%s, %s, %s, minimum slots %d\n\n", countOf(t.NumExecutionVertices(), "execution vertex", "execution vertices"),
		count(rs.NumRegions(), "region"), edges, rs.MinimumSlots())
	fmt.Fprintf(w, "%-7s %-6s %-40s %s\n", "REGION", "SLOTS", "VERTICES", "CONSUMES")
	cache := map[topology.GroupID]string{}
	for r := range region.ID(rs.NumRegions()) {
		members := rs.MemberNames(r, 8)
		var consumes string
		groups := rs.ConsumedGroups(r)
		switch {
		case len(groups) == 1 && !rs.IsCrossRegion(groups[0]):
			var ok bool
			if consumes, ok = cache[groups[0]]; !ok {
				consumes = idRanges(rs.GroupProducerRegions(groups[0]))
				if t.PartitionType(t.EdgeOfGroup(groups[0])).IsHybrid() {
					consumes = "hybrid " + consumes
				}
				cache[groups[0]] = consumes
			}
		case hybrid > 0:
			consumes = consumesByKind(rs, r, groups)
		default:
			consumes = idRanges(rs.ProducerRegions(r))
		}
		fmt.Fprintf(w, "%-7d %-6d %-40s %s\n", r, rs.SlotCount(r), strings.Trim(members, "{}"), consumes)
	}
}

// consumesByKind renders the producer regions of region r's consumed
// groups, those of blocking groups first, then "hybrid" and those of
// hybrid groups: "0-3; hybrid 4, 6".
func consumesByKind(rs *region.Regions, r region.ID, groups []topology.GroupID) string {
	t := rs.Topology()
	var blocking, hybrid []region.ID
	for _, g := range groups {
		for _, p := range rs.GroupProducerRegions(g) {
			if p == r {
				continue
			}
			if t.PartitionType(t.EdgeOfGroup(g)).IsHybrid() {
				hybrid = append(hybrid, p)
			} else {
				blocking = append(blocking, p)
			}
		}
	}
	var parts []string
	if len(blocking) > 0 || len(hybrid) == 0 {
		slices.Sort(blocking)
		parts = append(parts, idRanges(slices.Compact(blocking)))
	}
	if len(hybrid) > 0 {
		slices.Sort(hybrid)
		parts = append(parts, "hybrid "+idRanges(slices.Compact(hybrid)))
	}
	return strings.Join(parts, "; ")
}

// idRanges renders sorted ids compactly: "0-3, 7, 9-12", or "-" if none.
func idRanges(ids []region.ID) string {
	if len(ids) == 0 {
		return "-"
	}
	var parts []string
	for i := 0; i < len(ids); {
		j := i
		for j+1 < len(ids) && ids[j+1] == ids[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, fmt.Sprintf("%d-%d", ids[i], ids[j]))
		} else {
			parts = append(parts, strconv.Itoa(int(ids[i])))
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}
