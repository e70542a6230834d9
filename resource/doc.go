// Package resource describes what a subtask needs and what a slot offers:
// a Profile of CPU (millicores), memory (MB) and named extended resources
// (for example "gpu"), or Unknown, which fits any slot and is served by any
// slot. It also solves the matching problem both the region package and the
// slot pool need: can these requests be served by those slots, each slot
// serving at most one request, and if so with which slots, preferring small
// slots so that big ones are not wasted.
//
// Profiles are small immutable values; they are comparable with == and can
// be used as map keys. A leaf package: it imports nothing of regionsched.
//
//	req := resource.New(500, 512).WithExtended("gpu", 1)
//	slot := resource.New(1000, 2048).WithExtended("gpu", 1)
//	req.FitsIn(slot) // true
package resource
