package admission

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/regionsched/regionsched/internal/rbtree"
)

// firstAfter against a sorted slice: for every cursor (a key in the
// tree, a key between two, before all, after all, none), the job with
// the smallest key greater than the cursor.
func TestFirstAfterMatchesSortedKeys(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	for n := range 40 {
		tree := rbtree.New(byKey)
		var keys []orderKey
		for len(keys) < n {
			name := fmt.Sprintf("j%04d", 2*r.IntN(1000))
			k := orderKey{share: float64(r.IntN(4)), rank: -int64(r.IntN(3)), head: nameHead(name), name: name}
			if slices.Contains(keys, k) {
				continue
			}
			keys = append(keys, k)
			j := &job{key: k}
			tree.Insert(&j.orderNode, j)
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
			between.head = nameHead(between.name)
			cursors = append(cursors, k, between)
		}
		cursors = append(cursors, orderKey{share: -1}, orderKey{share: 10})
		for _, c := range cursors {
			got := firstAfter(tree, cursor{key: c, set: true})
			if w := want(c); w == nil {
				assert.Nil(t, got, "n=%d cursor %+v", n, c)
			} else if assert.NotNil(t, got, "n=%d cursor %+v", n, c) {
				assert.Equal(t, *w, got.key, "n=%d cursor %+v", n, c)
			}
		}
		if len(keys) > 0 {
			assert.Equal(t, keys[0], firstAfter(tree, cursor{}).key, "no cursor: the first job")
		} else {
			assert.Nil(t, firstAfter(tree, cursor{}))
		}
	}
}
