package pool

import (
	"iter"
	"slices"
)

// shapeIndex finds a pool's shapes by key: by scanning a short list while
// it holds at most scanShapes of them, by a map beyond. A job's pool mostly
// sees a few shapes, and a map costs more memory than it saves time there.
type shapeIndex struct {
	few   []*shape          // every shape, while byKey is nil
	byKey map[string]*shape // every shape, once there were more than scanShapes
}

// scanShapes is the most shapes an index finds by scanning its list.
const scanShapes = 8

// get returns the shape of a key.
func (x *shapeIndex) get(key []byte) (*shape, bool) {
	if x.byKey != nil {
		s, ok := x.byKey[string(key)]
		return s, ok
	}
	for _, s := range x.few {
		if s.key == string(key) {
			return s, true
		}
	}
	return nil, false
}

// put adds a shape whose key the index does not hold.
func (x *shapeIndex) put(s *shape) {
	if x.byKey != nil {
		x.byKey[s.key] = s
		return
	}
	x.few = append(x.few, s)
	if len(x.few) > scanShapes {
		x.byKey = make(map[string]*shape, 2*len(x.few))
		for _, f := range x.few {
			x.byKey[f.key] = f
		}
		x.few = nil
	}
}

// dropDead forgets the shapes without waiting bulks (shape.pos < 0).
func (x *shapeIndex) dropDead() {
	if x.byKey != nil {
		for k, s := range x.byKey {
			if s.pos < 0 {
				delete(x.byKey, k)
			}
		}
		return
	}
	x.few = slices.DeleteFunc(x.few, func(s *shape) bool { return s.pos < 0 })
}

// len returns the number of shapes the index holds.
func (x *shapeIndex) len() int {
	if x.byKey != nil {
		return len(x.byKey)
	}
	return len(x.few)
}

// all yields every shape the index holds.
func (x *shapeIndex) all() iter.Seq[*shape] {
	return func(yield func(*shape) bool) {
		if x.byKey != nil {
			for _, s := range x.byKey {
				if !yield(s) {
					return
				}
			}
			return
		}
		for _, s := range x.few {
			if !yield(s) {
				return
			}
		}
	}
}
