// Package kubernetes runs the tasks of regionsched's jobs as pods of a
// Kubernetes cluster, with regionsched as the scheduler of the pods it
// creates (spec.schedulerName: regionsched): the in-process admission
// (package admission, through package multijob) decides which region
// gets which slots, and this package turns each decision into
// Kubernetes objects.
//
//   - Nodes become slots (Inventory): a node's allocatable resources,
//     minus what pods not of the run request on it, divided into slots of
//     one shape; a node cordoned, not Ready, tainted or deleted loses its
//     slots, and the regions in them fail over.
//   - A region's bulk is a gang bound all-or-nothing (Binder): every pod
//     is created, then bound to its node through pods/binding; if any step
//     fails, or a node rejects a pod, every pod of the bulk is deleted and
//     a *BulkError names the pod, the node and the step.
//   - Pod phases are task events (EventOf, EventOfDeleted): Running,
//     Succeeded and Failed; a pod deleted by someone else has failed.
//   - Every pod carries labels naming the run, job, task, attempt and
//     region: the end of Run deletes every pod of the run, Leftovers finds
//     those of runners that died, and Finished reads back the task
//     attempts that succeeded.
//
// Run is the runtime (Runner is its deterministic core, one turn per
// Step): the Runner reads the nodes and pods from informers' caches
// (watches of the API server), and Run steps it when they change or a
// timer is due. It is a Go module of its own, so that a program that does not
// use it compiles nothing of client-go.
package kubernetes
