// Command regionsched derives the pipelined regions of a dataflow job,
// checks statically whether the job can run on a cluster without deadlock,
// and simulates it in virtual time. It implements the command-line
// contract of docs/cli.md:
//
//	regionsched regions  [--mode M] [--format text|json|dot] JOB
//	regionsched check    [--mode M] (--slots N | --cluster CLUSTER) [--format text|json] JOB
//	regionsched simulate [--mode M] (--slots N | --cluster CLUSTER) [--policy region|eager] [--seed S]
//	                     [--ties order|seeded] [--trace FILE] [--svg FILE] [--fail ID#i@MS ...] JOB
//	regionsched --version
//
// JOB is a job file path or "-" for standard input; the job, cluster and
// events files are described in docs/job-file.md. "--trace -" and
// "--svg -" write to standard output (the summary then goes to standard
// error). --ties, an addition to the contract, is the order of events due
// at the same time: as scheduled (default), or drawn by the seed. Values
// of flags are case-insensitive. Exit codes: 0 success,
// 1 a negative verdict (not runnable, deadlock, failure; printed once, on
// standard output), 2 bad input or usage, with one message on standard
// error naming the problem, prefixed by the command ("regionsched check:").
package main

import "os"

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
