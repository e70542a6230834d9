package admission

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/emirpasic/gods/trees/redblacktree"
	"github.com/stretchr/testify/assert"
)

// ceilingAfter against a sorted slice: for every cursor (a key in the
// tree, a key between two, before all, after all, none), the node with
// the smallest key greater than the cursor.
func TestCeilingAfterMatchesSortedKeys(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	for n := range 40 {
		tree := redblacktree.NewWith(compareKeys)
		var keys []orderKey
		for len(keys) < n {
			k := orderKey{share: float64(r.IntN(4)), rank: -int64(r.IntN(3)), name: fmt.Sprintf("j%04d", 2*r.IntN(1000))}
			if slices.Contains(keys, k) {
				continue
			}
			keys = append(keys, k)
			tree.Put(any(k), len(keys))
		}
		slices.SortFunc(keys, orderKey.compare)
		want := func(cursor orderKey) *orderKey {
			for i := range keys {
				if keys[i].compare(cursor) > 0 {
					return &keys[i]
				}
			}
			return nil
		}
		var cursors []orderKey
		for _, k := range keys {
			between := k
			between.name += "+" // in no tree: after k, before the next name
			cursors = append(cursors, k, between)
		}
		cursors = append(cursors, orderKey{share: -1}, orderKey{share: 10})
		for _, c := range cursors {
			got := ceilingAfter(tree, any(c))
			if w := want(c); w == nil {
				assert.Nil(t, got, "n=%d cursor %+v", n, c)
			} else if assert.NotNil(t, got, "n=%d cursor %+v", n, c) {
				assert.Equal(t, *w, got.Key.(orderKey), "n=%d cursor %+v", n, c)
			}
		}
		if len(keys) > 0 {
			assert.Equal(t, keys[0], ceilingAfter(tree, nil).Key.(orderKey), "no cursor: the first node")
		} else {
			assert.Nil(t, ceilingAfter(tree, nil))
		}
	}
}
