package pool

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/regionsched/regionsched/resource"
	"github.com/regionsched/regionsched/slotpool"
)

// benchWorkload is n bulks of 10 requests (7 small, 3 medium) and the 10n
// slots that serve them (70% small, 30% medium). With exact matching the
// slots are offered in a seeded random order, so that the head regularly
// refuses slots it cannot use and younger bulks are completed from free
// slots. With fits-every-dimension a medium slot taken for a small request
// is not available for a medium one later, so a random order would leave
// bulks unserved at the end; the order is shuffled within each run of 10
// slots instead.
func benchWorkload(n int, m resource.Matching) ([]Bulk, []slotpool.Slot) {
	bulks := make([]Bulk, n)
	for i := range bulks {
		r := make([]Request, 10)
		for j := range r {
			r[j] = Request{Profile: small}
			if j >= 7 {
				r[j].Profile = medium
			}
		}
		bulks[i] = Bulk{ID: slotpool.BulkID(i + 1), Requests: r}
	}
	slots := make([]slotpool.Slot, 10*n)
	for i := range slots {
		slots[i] = slotpool.Slot{ID: slotpool.SlotID(i + 1), Profile: small}
		if i%10 >= 7 {
			slots[i].Profile = medium
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	if m == resource.ExactMatch {
		rng.Shuffle(len(slots), func(i, j int) { slots[i], slots[j] = slots[j], slots[i] })
		return bulks, slots
	}
	for w := 0; w < len(slots); w += 10 {
		win := slots[w : w+10]
		rng.Shuffle(len(win), func(i, j int) { win[i], win[j] = win[j], win[i] })
	}
	return bulks, slots
}

func BenchmarkSlotPool(b *testing.B) {
	for _, m := range []struct {
		name     string
		matching resource.Matching
	}{{"", resource.FitsEveryDimension}, {"exact/", resource.ExactMatch}} {
		for _, n := range []int{1000, 10000} {
			bulks, slots := benchWorkload(n, m.matching)
			name := fmt.Sprintf("%sbulks%d-requests%d", m.name, n, 10*n)
			b.Run(name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					p := New(Config{Matching: m.matching, Timeout: time.Hour})
					for _, bk := range bulks {
						if err := p.Submit(t0, bk); err != nil {
							b.Fatal(err)
						}
					}
					for _, s := range slots {
						if err := p.Offer(t0, s); err != nil {
							b.Fatal(err)
						}
					}
					reportFulfilled(b, p, n)
				}
			})
			b.Run("offer-first/"+name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					p := New(Config{Matching: m.matching, Timeout: time.Hour})
					for _, s := range slots {
						if err := p.Offer(t0, s); err != nil {
							b.Fatal(err)
						}
					}
					for _, bk := range bulks {
						if err := p.Submit(t0, bk); err != nil {
							b.Fatal(err)
						}
					}
					reportFulfilled(b, p, n)
				}
			})
		}
	}
}

// reportFulfilled fails the benchmark unless every bulk was fulfilled.
func reportFulfilled(b *testing.B, p *Pool, n int) {
	fulfilled := 0
	for _, ev := range p.Ready() {
		if _, ok := ev.(Fulfilled); ok {
			fulfilled++
		}
	}
	if fulfilled != n {
		b.Fatalf("%d of %d bulks fulfilled (%+v)", fulfilled, n, p.Stats())
	}
}
