package main

import (
	"errors"
	"io"

	"github.com/spf13/cobra"
)

func newSimulateCommand(stdin io.Reader) *cobra.Command {
	c := &cobra.Command{
		Use:   "simulate [--mode M] (--slots N | --cluster CLUSTER) [--policy region|eager] [--seed S] [--trace FILE] [--svg FILE] [--fail ID#i@MS ...] JOB",
		Short: "Run a job in virtual time on the example executor",
		Args:  cobra.MinimumNArgs(1),
	}
	c.RunE = func(c *cobra.Command, args []string) error {
		return badInput(errors.New("simulate: the example executor is not built yet"))
	}
	return c
}
