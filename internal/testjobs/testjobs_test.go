package testjobs

import "testing"

func TestFLIP119(t *testing.T) {
	g := FLIP119(t)
	if g.Name() != "flip119-example" || g.NumVertices() != 4 || g.NumEdges() != 3 {
		t.Fatalf("unexpected job %q with %d vertices and %d edges", g.Name(), g.NumVertices(), g.NumEdges())
	}
}
