package scenario

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/slotpool"
)

// Profiles reads the slots a command gives: slots=N (of unknown
// profile) or input lines "N [cpu=C mem=M name=K ...]" (cpu in
// millicores, mem in MB, other names extended resources).
func Profiles(t *testing.T, td *datadriven.TestData) []resource.Profile {
	if td.HasArg("slots") {
		return make([]resource.Profile, Int(t, td, "slots"))
	}
	var out []resource.Profile
	for _, line := range strings.Split(td.Input, "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		n, err := strconv.Atoi(fields[0])
		if err != nil {
			td.Fatalf(t, "slot line %q: %v", line, err)
		}
		p := resource.Unknown
		if len(fields) > 1 {
			p = profile(t, td, line, fields[1:])
		}
		for range n {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		td.Fatalf(t, "%s: no slots given", td.Cmd)
	}
	return out
}

// profile reads "cpu=C mem=M name=K ..." of a slot line.
func profile(t *testing.T, td *datadriven.TestData, line string, fields []string) resource.Profile {
	var cpu, mem int64
	ext := map[string]int64{}
	for _, f := range fields {
		k, val, ok := strings.Cut(f, "=")
		x, err := strconv.ParseInt(val, 10, 64)
		if !ok || err != nil {
			td.Fatalf(t, "slot line %q: bad %q", line, f)
		}
		switch k {
		case "cpu":
			cpu = x
		case "mem":
			mem = x
		default:
			ext[k] = x
		}
	}
	p := resource.New(cpu, mem)
	for k, x := range ext {
		p = p.WithExtended(k, x)
	}
	return p
}

// DescribeSlots renders "slots 1-4 (unknown)", one run per profile and
// node.
func DescribeSlots(slots []slotpool.Slot) string {
	var parts []string
	for i := 0; i < len(slots); {
		j := i
		for j+1 < len(slots) && slots[j+1].Profile == slots[i].Profile && slots[j+1].Node == slots[i].Node && slots[j+1].ID == slots[j].ID+1 {
			j++
		}
		on := ""
		if slots[i].Node != "" {
			on = " on " + slots[i].Node
		}
		if i == j {
			parts = append(parts, fmt.Sprintf("slot %d %v%s", slots[i].ID, slots[i].Profile, on))
		} else {
			parts = append(parts, fmt.Sprintf("slots %d-%d %v%s", slots[i].ID, slots[j].ID, slots[i].Profile, on))
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}
