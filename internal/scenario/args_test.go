package scenario

import (
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/stretchr/testify/assert"

	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/slotpool"
)

func TestArgsAndRendering(t *testing.T) {
	td := &datadriven.TestData{Cmd: "x", CmdArgs: []datadriven.CmdArg{
		{Key: "at", Vals: []string{"1500"}}, {Key: "dur", Vals: []string{"2s"}}, {Key: "flag"}, {Key: "list", Vals: []string{"1", "2"}},
	}}
	assert.Equal(t, 1500*time.Millisecond, ParseDur(t, td, "at", Str(td, "at", "")))
	assert.Equal(t, 2*time.Second, ParseDur(t, td, "dur", MustStr(t, td, "dur")))
	assert.Equal(t, "", Str(td, "flag", "def"))
	assert.Equal(t, "def", Str(td, "none", "def"))
	assert.Equal(t, "1,2", Str(td, "list", ""))
	assert.Equal(t, "1500ms", Ms(1500*time.Millisecond))
	assert.Equal(t, "1 slot", Plural(1, "slot"))
	assert.Equal(t, "3 slots", Plural(3, "slot"))
	assert.Equal(t, "ok", Lines(nil))
	assert.Equal(t, "a\nb", Lines([]string{"a", "b"}))

	lines := &datadriven.TestData{Cmd: "cluster", Input: "2 cpu=1000 mem=512\n1"}
	profiles := Profiles(t, lines)
	assert.Equal(t, []resource.Profile{resource.New(1000, 512), resource.New(1000, 512), resource.Unknown}, profiles)
	slots := []slotpool.Slot{{ID: 1, Profile: profiles[0]}, {ID: 2, Profile: profiles[1]}, {ID: 3, Node: "n1"}}
	assert.Equal(t, "slots 1-2 "+profiles[0].String()+", slot 3 "+resource.Unknown.String()+" on n1", DescribeSlots(slots))
}
