package rbtree_test

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/regionsched/regionsched/internal/rbtree"
)

// item is a value that may be in a tree: key orders it, seq tells items
// of equal keys apart (in the order they went in).
type item struct {
	key, seq int
	node     rbtree.Node[*item]
	in       bool
}

func byKey(a, b *item) int { return cmp.Compare(a.key, b.key) }

// contents returns the tree's items in order, walked forward, and checks
// that the walk backward meets them in reverse.
func contents(t *testing.T, tr *rbtree.Tree[*item]) []*item {
	t.Helper()
	var out []*item
	for n := tr.First(); n != nil; n = n.Next() {
		out = append(out, n.Item())
	}
	var back []*item
	for n := tr.Last(); n != nil; n = n.Prev() {
		back = append(back, n.Item())
	}
	slices.Reverse(back)
	require.Equal(t, out, back, "walked backward")
	require.Len(t, out, tr.Len())
	return out
}

func TestRandomInsertsAndRemovesKeepOrderAndBalance(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	tr := rbtree.New(byKey)
	items := make([]*item, 500)
	for i := range items {
		items[i] = &item{key: r.IntN(100)} // equal keys too
	}
	seq := 0
	for step := range 20000 {
		it := items[r.IntN(len(items))]
		if it.in {
			tr.Remove(&it.node)
			it.in = false
		} else {
			seq++
			it.seq = seq
			tr.Insert(&it.node, it)
			it.in = true
		}
		if step%97 != 0 {
			continue
		}
		var want []*item
		for _, x := range items {
			if x.in {
				want = append(want, x)
			}
		}
		slices.SortFunc(want, func(a, b *item) int {
			return cmp.Or(cmp.Compare(a.key, b.key), cmp.Compare(a.seq, b.seq))
		})
		require.Equal(t, want, contents(t, tr), "step %d", step)
		require.NoError(t, tr.Check(), "step %d", step)
	}
}

func TestSearchFindsTheFirstItemAfterAKey(t *testing.T) {
	tr := rbtree.New(byKey)
	items := make([]*item, 50)
	for i := range items {
		items[i] = &item{key: 2 * i} // 0, 2, ..., 98
		tr.Insert(&items[i].node, items[i])
	}
	for k := -1; k <= 99; k++ {
		n := tr.Search(func(x *item) bool { return x.key > k })
		if k >= 98 {
			assert.Nil(t, n, "after %d", k)
			continue
		}
		want := 0 // the smallest even key above k
		if k >= 0 {
			want = (k/2 + 1) * 2
		}
		require.NotNil(t, n, "after %d", k)
		assert.Equal(t, want, n.Item().key, "after %d", k)
	}
	assert.Nil(t, rbtree.New(byKey).Search(func(*item) bool { return true }))
}

func TestRemoveEveryItemInEveryOrder(t *testing.T) {
	for _, order := range []string{"ascending", "descending", "random"} {
		t.Run(order, func(t *testing.T) {
			tr := rbtree.New(byKey)
			items := make([]*item, 300)
			for i := range items {
				items[i] = &item{key: i}
				tr.Insert(&items[i].node, items[i])
			}
			switch order {
			case "descending":
				slices.Reverse(items)
			case "random":
				rand.New(rand.NewPCG(3, 4)).Shuffle(len(items), func(i, j int) { items[i], items[j] = items[j], items[i] })
			}
			for i, x := range items {
				tr.Remove(&x.node)
				require.NoError(t, tr.Check(), fmt.Sprintf("after %d removals", i+1))
			}
			assert.Zero(t, tr.Len())
			assert.Nil(t, tr.First())
			assert.Nil(t, tr.Last())
		})
	}
}
