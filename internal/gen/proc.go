package gen

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
)

// supervisorEnv set to 1 makes gen's binary the supervisor of one nvcc or ptxas run instead of the
// generator (see toolCommand): main checks it before anything else.
const supervisorEnv = "TILEGEN_GEN_SUPERVISE"

// IsSupervisor reports whether this process was started as the supervisor of one tool run: main
// then calls Supervise instead of Run.
func IsSupervisor() bool { return os.Getenv(supervisorEnv) == "1" }

// Supervise runs args[0] with args[1:], passing its output through, and exits with its status.
// On SIGTERM (sent by the kernel when gen dies), SIGINT or SIGHUP it kills its process group,
// which holds the tool and everything the tool started.
func Supervise(args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "gen: supervisor: no command")
		return 2
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, os.Interrupt, syscall.SIGHUP)
	os.Unsetenv(supervisorEnv)
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "gen: %v\n", err)
		return 127
	}
	go func() {
		<-sigs
		killOwnGroup(cmd)
	}()
	return exitStatus(cmd.Wait())
}
