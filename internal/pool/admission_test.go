package pool

import (
	"testing"

	"github.com/regionsched/regionsched/slotpool"
	"github.com/stretchr/testify/assert"
)

// The pool's side of the admission protocol, with the admission's
// messages written by hand. The pool working with a StaticCluster is
// tested in package admission.

// A slot granted for a younger bulk's ask goes to the oldest waiting bulk
// (FIFO); the head's ask always says what it still lacks, and the younger
// bulk asks again when it becomes the head. The static cluster serves asks
// in order, so the grants are delivered by hand, as a policy that favors
// bulk 2 would.
func TestGrantsGoFIFOAndTheHeadAsksForWhatItLacks(t *testing.T) {
	h := newHarness(t, Config{Admission: true})
	gang := func(n int) slotpool.Gang {
		return slotpool.Gang{Groups: []slotpool.TaskGroup{{Profile: small, MinMembers: n}}, AllOrNothing: true}
	}
	h.submit(1, small, small)
	h.submit(2, small)
	assert.Equal(t, []Event{slotpool.Ask{ID: 1, Bulk: 1, Gang: gang(2), Head: true}, slotpool.Ask{ID: 2, Bulk: 2, Gang: gang(1)}}, h.events())
	h.admit(slotpool.Grant{Ask: 2, Slots: []slotpool.Slot{slot(10, small)}})
	assert.Equal(t, []Event{slotpool.AskRelease{ID: 1, Reason: slotpool.ReasonStopped}, slotpool.Ask{ID: 3, Bulk: 1, Gang: gang(1), Head: true, Holding: []slotpool.SlotID{10}}}, h.events(),
		"bulk 1 holds the slot (and says so) and now lacks one")
	h.admit(slotpool.Grant{Ask: 1, Slots: []slotpool.Slot{slot(11, small)}}) // late grant of a withdrawn ask: still offered
	assert.Equal(t, []Event{
		Fulfilled{Bulk: 1, Slots: []slotpool.SlotID{11, 10}},
		slotpool.AskRelease{ID: 3, Reason: slotpool.ReasonStopped},
		slotpool.Ask{ID: 4, Bulk: 2, Gang: gang(1), Head: true},
	}, h.events())
	h.admit(slotpool.Grant{Ask: 4, Slots: []slotpool.Slot{slot(12, small)}})
	assert.Equal(t, []Event{Fulfilled{Bulk: 2, Slots: []slotpool.SlotID{12}}}, h.events())
}

func TestHeadAsksAgainWhenItLosesAHeldSlot(t *testing.T) {
	h := newHarness(t, Config{Admission: true})
	h.offer(slot(1, small))
	h.submit(1, small, big)
	assert.Equal(t, []Event{slotpool.Ask{ID: 1, Bulk: 1, Gang: slotpool.Gang{Groups: []slotpool.TaskGroup{{Profile: big, MinMembers: 1}}, AllOrNothing: true}, Head: true, Holding: []slotpool.SlotID{1}}}, h.events())
	h.lose(1)
	assert.Equal(t, []Event{
		slotpool.AskRelease{ID: 1, Reason: slotpool.ReasonStopped},
		slotpool.Ask{ID: 2, Bulk: 1, Gang: slotpool.Gang{Groups: []slotpool.TaskGroup{{Profile: small, MinMembers: 1}, {Profile: big, MinMembers: 1}}, AllOrNothing: true}, Head: true},
	}, h.events())
}
