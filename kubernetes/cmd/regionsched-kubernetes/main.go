// Command regionsched-kubernetes runs job files on a Kubernetes cluster,
// regionsched being the scheduler of the pods it creates, and finds and
// deletes what runners that died left there:
//
//	regionsched-kubernetes run [--kubeconfig F] [--namespace N] [--mode M] [--trace FILE] JOB [JOB ...]
//	regionsched-kubernetes leftovers [--kubeconfig F] [--namespace N] [--run ID] [--delete [--force]]
//
// "regionsched run --kubernetes" and "regionsched leftovers --kubernetes"
// run it with their arguments (it accepts and ignores --kubernetes): it is
// a program of its own, built from the module of the Kubernetes backend,
// so that regionsched compiles nothing of client-go. Its outputs and exit
// codes are those of "regionsched run --slurm": 0 every job finished (or
// was killed by the events file), 1 a job failed or the run was
// interrupted, 2 bad input or no API server reachable.
package main

import "os"

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
