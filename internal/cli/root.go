package cli

import (
	"context"
	"errors"
	"fmt"
	"github.com/nsysphase/nsysphase/internal/base/marks"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"runtime/pprof"
	"runtime/trace"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/nsysphase/nsysphase/export"
	"github.com/nsysphase/nsysphase/nsys"
)

// Exit statuses.
const (
	ExitOK    = 0
	ExitGate  = 1 // a gate (check, verdict) failed: a proven regression, a no-go
	ExitInput = 2 // unusable input or usage
	// ExitInconclusive is verdict's status when the CI straddles the
	// minimum gain: neither a go (0) nor a no-go (1), and not a usage error.
	ExitInconclusive = 3
	// ExitInterrupted and ExitTerminated follow the shell's 128 + signal
	// number: the run was stopped by SIGINT (Ctrl-C) or SIGTERM after
	// removing its temporary files; no output was written.
	ExitInterrupted = 130
	ExitTerminated  = 143
)

// version is set at build time with -ldflags "-X github.com/nsysphase/nsysphase/internal/cli.version=v1.2.3".
var version = ""

// Version returns the tool version: the linker-set one, else the module's build info.
func Version() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}

// ExitError carries an exit status with its error.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string { return e.Err.Error() }
func (e *ExitError) Unwrap() error { return e.Err }

// usageErr marks a usage mistake (exit 2).
func usageErr(format string, args ...any) error {
	return &ExitError{Code: ExitInput, Err: fmt.Errorf(format, args...)}
}

// Main runs nsysphase with args and returns the exit status.
//
// SIGINT and SIGTERM cancel the command's context, so that every deferred
// cleanup runs (the decompressed copy of an .xz input, a --out staging
// directory, a -o temporary file) before Main returns ExitInterrupted or
// ExitTerminated. A second signal is not caught: it ends the process at once.
func Main(args []string, stdout, stderr io.Writer) (code int) {
	marks.Mark("main")
	gout, gerr := guard(stdout), guard(stderr)
	defer gerr.flush()
	defer gout.flush()
	stdout, stderr = gout, gerr
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		select {
		case s := <-sigs:
			signal.Stop(sigs) // a second signal: the default action, at once
			cancel(&signalError{sig: s})
		case <-ctx.Done():
		}
	}()
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(stderr, "nsysphase: internal error (a bug; please report it with the command and input): %v\n%s", r, debug.Stack())
			code = ExitInput
		}
	}()
	root := NewRootCmd()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	var se *signalError
	if err != nil && errors.As(context.Cause(ctx), &se) {
		// Whatever the command made of the cancellation, the cause is the signal.
		fmt.Fprintf(stderr, "nsysphase: %s\n", se)
		return se.code()
	}
	if err == nil {
		return ExitOK
	}
	code = exitCode(err)
	if code != ExitGate || !isSilent(err) {
		fmt.Fprintf(stderr, "nsysphase: %s\n", oneLine(err.Error()))
	}
	return code
}

// signalError is the cause of a context cancelled by SIGINT or SIGTERM.
type signalError struct{ sig os.Signal }

func (e *signalError) Error() string {
	return fmt.Sprintf("stopped by %s (temporary files removed)", signalName(e.sig))
}

// code is the shell's convention, 128 + the signal number.
func (e *signalError) code() int {
	if e.sig == syscall.SIGTERM {
		return ExitTerminated
	}
	return ExitInterrupted
}

func signalName(s os.Signal) string {
	if s == syscall.SIGTERM {
		return "SIGTERM"
	}
	return "SIGINT"
}

// silentErr is a gate failure whose explanation the command already printed.
type silentErr struct{}

func (silentErr) Error() string { return "gate failed" }

func isSilent(err error) bool { var s silentErr; return errors.As(err, &s) }

func exitCode(err error) int {
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	var ie *nsys.InputError
	if errors.As(err, &ie) {
		return ExitInput
	}
	if errors.Is(err, context.Canceled) {
		return ExitInput
	}
	// Anything else that reaches here is a problem with the input or its
	// combination with the flags; a gate failure is always an ExitError.
	return ExitInput
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// NewRootCmd builds the command tree.
func NewRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "nsysphase",
		Short: "Per-phase timing, host-sync inventories and honest arm comparisons from Nsight Systems exports",
		Long: `nsysphase reads Nsight Systems SQLite exports (nsys export --type sqlite) and tells where each
NVTX phase of a repeated step spends its time, which host syncs and allocations block a CUDA-graph
capture, and whether arm A really beats arm B, with block-bootstrap confidence intervals.

` + exitStatusText(),
		Version:       Version(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	addProfileFlags(root)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &ExitError{Code: ExitInput, Err: fmt.Errorf("%w (see %s --help)", err, c.CommandPath())}
	})
	root.AddCommand(NewCmdInfo(nil))
	root.AddCommand(NewCmdRanges(nil))
	root.AddCommand(NewCmdAnalyze(nil))
	root.AddCommand(NewCmdInventory(nil))
	root.AddCommand(NewCmdBoundary(nil))
	root.AddCommand(NewCmdVerdict(nil))
	root.AddCommand(NewCmdCheck(nil))
	root.AddCommand(newCmdGenDocs())
	return root
}

// addProfileFlags adds hidden --cpuprofile/--memprofile flags so that slow
// inputs can be profiled with `go tool pprof` without a special build.
func addProfileFlags(root *cobra.Command) {
	var cpu, mem, exec string
	var cpuFile, traceFile *os.File
	root.PersistentFlags().StringVar(&cpu, "cpuprofile", "", "write a CPU profile to this file")
	root.PersistentFlags().StringVar(&mem, "memprofile", "", "write a heap profile to this file at exit")
	_ = root.PersistentFlags().MarkHidden("cpuprofile")
	root.PersistentFlags().StringVar(&exec, "trace", "", "write a runtime execution trace to this file (go tool trace)")
	_ = root.PersistentFlags().MarkHidden("memprofile")
	_ = root.PersistentFlags().MarkHidden("trace")
	root.PersistentPreRunE = func(cmd *cobra.Command, args []string) error {
		// Both paths are checked before any work: a FIFO would block, a
		// directory fail only at exit.
		for _, p := range []struct{ flag, path string }{{"--cpuprofile", cpu}, {"--memprofile", mem}, {"--trace", exec}} {
			if p.path == "" {
				continue
			}
			if err := export.CheckOutput(p.path, args); err != nil {
				return usageErr("%s: %v", p.flag, err)
			}
		}
		if exec != "" {
			f, err := os.Create(exec)
			if err != nil {
				return usageErr("--trace: %v", err)
			}
			if err := trace.Start(f); err != nil {
				f.Close()
				return usageErr("--trace: %v", err)
			}
			traceFile = f
		}
		if cpu == "" {
			return nil
		}
		f, err := os.Create(cpu)
		if err != nil {
			return usageErr("--cpuprofile: %v", err)
		}
		cpuFile = f
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			cpuFile = nil
			return usageErr("--cpuprofile: %v", err)
		}
		return nil
	}
	root.PersistentPostRunE = func(cmd *cobra.Command, args []string) error {
		if traceFile != nil {
			trace.Stop()
			traceFile.Close()
		}
		if cpuFile != nil {
			pprof.StopCPUProfile()
			cpuFile.Close()
		}
		if mem != "" {
			f, err := os.Create(mem)
			if err != nil {
				return usageErr("--memprofile: %v", err)
			}
			defer f.Close()
			return pprof.Lookup("allocs").WriteTo(f, 0)
		}
		return nil
	}
}
