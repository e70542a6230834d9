package admission

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/slotpool"
)

// get finds every ask added and not removed, whether the job has few asks
// (a walk of its list) or many (its index by id), as their number grows
// past indexFrom and falls again.
func TestJobAsksGetWithFewAndManyAsks(t *testing.T) {
	var l jobAsks
	in := map[slotpool.AskID]*jobAsk{}
	check := func() {
		t.Helper()
		require.Equal(t, len(in), l.len())
		for id := slotpool.AskID(1); id <= 3*indexFrom; id++ {
			a, ok := l.get(id)
			if want, listed := in[id]; listed {
				assert.True(t, ok, "ask %d", id)
				assert.Same(t, want, a, "ask %d", id)
			} else {
				assert.False(t, ok, "ask %d is not in", id)
			}
		}
	}
	for id := slotpool.AskID(1); id <= 2*indexFrom; id++ {
		a := l.newAsk()
		a.id = id
		l.add(a)
		in[id] = a
		check()
	}
	for id := slotpool.AskID(1); id <= 2*indexFrom; id += 2 {
		a, _ := l.get(id)
		l.remove(a)
		delete(in, id)
		check()
	}
	a := l.newAsk() // one removed before, reused
	a.id = 3 * indexFrom
	l.add(a)
	in[a.id] = a
	check()
}

// smallest is the smallest size bucket of the asks in the list, whether
// the job has few asks (its bits kept by walks of the list) or many (by
// counts), as asks are added, partly granted and removed.
func TestJobAsksSmallestWithFewAndManyAsks(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	var l jobAsks
	var in []*jobAsk
	check := func(what string) {
		t.Helper()
		want := maxBucket
		for _, a := range in {
			want = min(want, a.sizeBucket())
		}
		require.Equal(t, want, l.smallest(), what)
	}
	for step := range 400 {
		switch op := r.IntN(4); { // more adds than removals: few asks first, then many
		case op <= 1 || len(in) == 0:
			a := l.newAsk()
			a.id, a.allOrNothing = slotpool.AskID(step+1), r.IntN(4) > 0
			a.n = 1 + r.IntN(6)
			l.add(a)
			in = append(in, a)
			check("add")
		case op == 2:
			i := r.IntN(len(in))
			if a := in[i]; a.n > 1 {
				l.took(a, 1+r.IntN(a.n-1))
				check("took")
			}
		default:
			i := r.IntN(len(in))
			l.remove(in[i])
			in = append(in[:i], in[i+1:]...)
			check("remove")
		}
	}
}
