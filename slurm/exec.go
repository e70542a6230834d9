package slurm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"go.uber.org/zap"
)

// DefaultTimeout bounds every command of an ExecClient but a job step.
const DefaultTimeout = 10 * time.Second

// execFunc runs one command and returns its standard output and error; a
// non-zero exit is an error. ExecClient's default runs the process; tests
// give recorded outputs.
type execFunc func(ctx context.Context, env []string, name string, args ...string) (stdout, stderr []byte, err error)

// ExecClient runs Slurm's commands (sbatch, scancel,
// squeue, scontrol, sinfo, srun) as processes. The zero value uses the
// environment's SLURM_CONF and DefaultTimeout.
type ExecClient struct {
	// Conf is the slurm.conf the commands use (SLURM_CONF); "" keeps the
	// environment's.
	Conf string
	// User, if set, runs sbatch, scancel and srun as that user (runuser
	// -u USER --, which needs root), so that the jobs are theirs.
	User string
	// Timeout bounds each command but a job step (srun) (default DefaultTimeout).
	Timeout time.Duration
	// Logger logs each command at debug level; nil means zap.NewNop().
	Logger *zap.Logger

	// exec runs a command (default: a process; a test's recorder).
	exec execFunc
}

// env returns the environment of the commands.
func (c *ExecClient) env() []string {
	env := os.Environ()
	if c.Conf != "" {
		env = append(env, "SLURM_CONF="+c.Conf)
	}
	return env
}

// command wraps name and args to run as user ("" as ourselves).
func command(user, name string, args []string) (string, []string) {
	if user == "" {
		return name, args
	}
	return "runuser", append([]string{"-u", user, "--", name}, args...)
}

// run runs one command with the client's timeout, as user, and turns a
// failure into a *CommandError.
func (c *ExecClient) run(ctx context.Context, user, name string, args ...string) ([]byte, error) {
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	run := c.exec
	if run == nil {
		run = runProcess
	}
	bin, argv := command(user, name, args)
	stdout, stderr, err := run(ctx, c.env(), bin, argv...)
	log := c.Logger
	if log == nil {
		log = zap.NewNop()
	}
	log.Debug("slurm command", zap.String("command", name), zap.Strings("args", args), zap.String("user", user), zap.Error(err))
	if err != nil {
		cause := classify(string(stderr))
		if ctx.Err() != nil {
			cause = ErrUnreachable // no answer in time
		}
		return stdout, &CommandError{Command: name, Args: args, Stderr: string(stderr), Err: cause}
	}
	return stdout, nil
}

// runProcess is the default execFunc. The command runs in its own process
// group, all of which is killed when ctx is done (runuser's child too),
// and Wait gives up on output pipes a straggler still holds 2 s later.
func runProcess(ctx context.Context, env []string, name string, args ...string) ([]byte, []byte, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	signalGroup(cmd, syscall.SIGKILL)
	err := cmd.Run()
	return stdout.Bytes(), stderr.Bytes(), err
}

// signalGroup makes cmd a process group leader whose whole group gets sig
// when its context is done, and bounds Wait after that.
func signalGroup(cmd *exec.Cmd, sig syscall.Signal) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, sig) }
	cmd.WaitDelay = 2 * time.Second
}

// submit runs sbatch (jobRequest.SbatchArgs) and reads the job id it
// prints ("12" or, with a cluster name, "12;cluster").
func (c *ExecClient) submit(ctx context.Context, name string, req jobRequest) (JobID, error) {
	args := req.SbatchArgs(name)
	out, err := c.run(ctx, c.User, "sbatch", args...)
	if err != nil {
		return 0, err
	}
	return parseJobID(string(out), args)
}

// parseJobID reads sbatch --parsable's answer.
func parseJobID(out string, args []string) (JobID, error) {
	s, _, _ := strings.Cut(strings.TrimSpace(out), ";")
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id <= 0 {
		return 0, &CommandError{Command: "sbatch", Args: args, Stderr: out, Err: fmt.Errorf("%w: job id %q", ErrBadOutput, s)}
	}
	return JobID(id), nil
}

// Cancel runs scancel on the job, or on every job named name.
func (c *ExecClient) Cancel(ctx context.Context, name string, job JobID) error {
	arg := strconv.FormatInt(int64(job), 10)
	if job == 0 {
		arg = "--name=" + name
	}
	_, err := c.run(ctx, c.User, "scancel", arg)
	return err
}

// query runs squeue --json --states=all --name=... (parseSqueue) and
// keeps the jobs of those names.
func (c *ExecClient) query(ctx context.Context, names []string) ([]jobStatus, error) {
	if len(names) == 0 {
		return nil, nil
	}
	out, err := c.run(ctx, "", "squeue", "--json", "--states=all", "--name="+strings.Join(names, ","))
	if err != nil {
		return nil, err
	}
	all, err := parseSqueue(out)
	if err != nil {
		return nil, err
	}
	// Slurm 22.05's squeue --json ignores its filters (measured: it lists
	// every job slurmctld remembers), so the names are filtered here.
	want := make(map[string]bool, len(names))
	for _, n := range names {
		want[n] = true
	}
	jobs := all[:0]
	for _, j := range all {
		if want[j.Name] {
			jobs = append(jobs, j)
		}
	}
	return jobs, nil
}

// partition runs scontrol show partition -o (the named partition, or all
// to find the default one) and sinfo for its nodes.
func (c *ExecClient) partition(ctx context.Context, name string) (partition, error) {
	args := []string{"show", "partition", "-o"}
	if name != "" {
		args = append(args, name)
	}
	out, err := c.run(ctx, "", "scontrol", args...)
	if err != nil {
		return partition{}, err
	}
	parts, err := parsePartitions(string(out))
	if err != nil {
		return partition{}, err
	}
	var p partition
	found := false
	for _, q := range parts {
		if (name != "" && q.Name == name) || (name == "" && q.Default) {
			p, found = q, true
			break
		}
	}
	if !found {
		return partition{}, &CommandError{Command: "scontrol", Args: args, Stderr: string(out), Err: fmt.Errorf("%w: no partition %q", ErrRejected, name)}
	}
	out, err = c.run(ctx, "", "sinfo", "-h", "-N", "-p", p.Name, "-o", sinfoFormat)
	if err != nil {
		return partition{}, err
	}
	if p.Nodes, err = parseNodes(string(out)); err != nil {
		return partition{}, err
	}
	return p, nil
}

// setPriority runs scontrol update jobid=J priority=N as principal.
func (c *ExecClient) setPriority(ctx context.Context, principal string, job JobID, priority int64) error {
	_, err := c.run(ctx, principal, "scontrol", "update", "jobid="+strconv.FormatInt(int64(job), 10), "priority="+strconv.FormatInt(priority, 10))
	return err
}

// stepArgs returns the srun arguments that run argv as one task in the
// slot at p: srun --jobid=J [--het-group=K] --overlap --ntasks=1
// --nodes=1 --nodelist=NODE --cpus-per-task=C --quiet -- argv.
func stepArgs(p Placement, argv []string) []string {
	args := []string{"--jobid=" + strconv.FormatInt(int64(p.Job), 10)}
	if p.HetGroup >= 0 {
		args = append(args, "--het-group="+strconv.Itoa(p.HetGroup))
	}
	args = append(args, "--overlap", "--ntasks=1", "--nodes=1")
	if p.Node != "" {
		args = append(args, "--nodelist="+p.Node)
	}
	if p.CPUs > 0 {
		args = append(args, "--cpus-per-task="+strconv.Itoa(p.CPUs))
	}
	args = append(args, "--quiet", "--")
	return append(args, argv...)
}

// stepCause classifies a failed srun: the controller unreachable, the
// step refused (it never ran), or the task's own failure (err).
func stepCause(stderr string, err error) error {
	cause := classify(stderr)
	switch {
	case cause == ErrUnreachable:
		return cause
	case strings.Contains(stderr, "Unable to create step"), strings.Contains(stderr, "Unable to confirm allocation"):
		return ErrStepRefused
	case cause == ErrRejected && !strings.Contains(stderr, "srun: error"):
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return err // the task itself failed
		}
	}
	return cause
}

// runStep runs argv with srun (stepArgs) and waits. When ctx is done the
// step is stopped: srun (and runuser with --user) gets SIGTERM (srun
// signals the step's tasks) and, if it has not ended 5 s later, SIGKILL. The error wraps ErrUnreachable
// or ErrStepRefused when the step did not start, the task's exit error
// when it failed.
func (c *ExecClient) runStep(ctx context.Context, p Placement, argv []string, stdout, stderr io.Writer) error {
	if len(argv) == 0 {
		return &CommandError{Command: "srun", Err: fmt.Errorf("%w: no command", ErrRejected)}
	}
	args := stepArgs(p, argv)
	bin, full := command(c.User, "srun", args)
	cmd := exec.CommandContext(ctx, bin, full...)
	cmd.Env = c.env()
	var errBuf bytes.Buffer
	cmd.Stdout = stdout
	cmd.Stderr = &errBuf
	if stderr != nil {
		cmd.Stderr = io.MultiWriter(&errBuf, stderr)
	}
	signalGroup(cmd, syscall.SIGTERM)
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	cause := stepCause(errBuf.String(), err)
	return &CommandError{Command: "srun", Args: args, Stderr: errBuf.String(), Err: cause}
}
