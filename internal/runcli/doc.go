// Package runcli is the front end of the commands that run job files on a
// real cluster ("regionsched run --slurm" and the Kubernetes backend's
// command): the flags they share, reading the job and events files,
// writing the trace, the audit and the summary, and the exit codes. A
// backend gives it a function that runs the jobs (Backend); everything a
// user sees around that is the same whatever the cluster.
//
// It lives in the root module without depending on any backend, so that a
// backend in a module of its own imports it without the root module
// depending on that backend's libraries.
package runcli
