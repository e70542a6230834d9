package pool

import (
	"testing"

	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/slotpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A speculative ask goes out as a one-slot Ask with Speculative and the
// nodes to avoid; its grant goes to its bulk, not to the waiting head;
// a withdrawn ask's late grant is an ordinary surplus slot.
func TestAskSpeculative(t *testing.T) {
	h := newHarness(t, Config{Admission: true, ReturnFreed: true})
	h.submit(1, small) // the head waits, and asks
	h.events()
	id, err := h.p.AskSpeculative(Bulk{ID: -1, Requests: []Request{{Profile: small}}}, []string{"n1"}, []slotpool.SlotID{7})
	require.NoError(t, err)
	assert.Equal(t, []Event{slotpool.Ask{ID: id, Bulk: -1, Speculative: true, Avoid: []string{"n1"}, AvoidSlots: []slotpool.SlotID{7},
		Gang: slotpool.Gang{Groups: []slotpool.TaskGroup{{Profile: small, MinMembers: 1}}, AllOrNothing: true}}}, h.events())

	h.admit(slotpool.Grant{Ask: id, Slots: []slotpool.Slot{{ID: 3, Profile: small, Node: "n2"}}})
	assert.Empty(t, h.events(), "the head does not get it")
	assert.Equal(t, []SpeculativeGrant{{Ask: id, Bulk: -1, Slot: slotpool.Slot{ID: 3, Profile: small, Node: "n2"}}}, h.p.SpeculativeGrants())
	assert.Empty(t, h.p.SpeculativeGrants(), "handed out once")
	info, ok := h.p.Slot(3)
	require.True(t, ok)
	assert.Equal(t, SlotInUse, info.State)
	assert.Equal(t, slotpool.BulkID(-1), info.Bulk)
	assert.Equal(t, 1, h.p.Stats().Waiting)

	// Its end gives the slot back to the admission.
	h.release(3)
	assert.Equal(t, []Event{slotpool.SlotRelease{Slot: 3, Reason: slotpool.ReasonStopped}}, h.events())

	// Withdrawn: an AskRelease, and a grant after it is surplus: the head takes it.
	id2, err := h.p.AskSpeculative(Bulk{ID: -2, Requests: []Request{{Profile: small}}}, nil, nil)
	require.NoError(t, err)
	h.events()
	assert.True(t, h.p.WithdrawSpeculative(id2))
	assert.False(t, h.p.WithdrawSpeculative(id2))
	assert.Equal(t, []Event{slotpool.AskRelease{ID: id2, Reason: slotpool.ReasonStopped}}, h.events())
	h.admit(slotpool.Grant{Ask: id2, Slots: []slotpool.Slot{{ID: 4, Profile: small}}})
	assert.Empty(t, h.p.SpeculativeGrants())
	assert.Zero(t, h.p.Stats().Waiting, "the head took the surplus slot")
}

// AskSpeculative refuses a pool without an admission, a bulk of other
// than one request, and a bulk id in use.
func TestAskSpeculativeRefused(t *testing.T) {
	_, err := New(Config{}).AskSpeculative(Bulk{ID: -1, Requests: []Request{{Profile: small}}}, nil, nil)
	require.ErrorIs(t, err, ErrNoAdmission)
	p := New(Config{Admission: true})
	_, err = p.AskSpeculative(Bulk{ID: -1, Requests: []Request{{Profile: small}, {Profile: small}}}, nil, nil)
	require.ErrorIs(t, err, ErrNotOneRequest)
	_, err = p.AskSpeculative(Bulk{ID: -1, Requests: []Request{{Profile: resource.Unknown}}}, nil, nil)
	require.NoError(t, err)
	_, err = p.AskSpeculative(Bulk{ID: -1, Requests: []Request{{Profile: resource.Unknown}}}, nil, nil)
	require.ErrorIs(t, err, ErrDuplicateBulk)
	assert.True(t, p.HasEvents())
	assert.False(t, p.ReturnsFreed())
}
