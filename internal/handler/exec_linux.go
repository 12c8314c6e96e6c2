//go:build linux

package handler

import (
	"bytes"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
)

// runWithParentDeath runs cmd (already given its process group by
// killGroup) with a parent-death signal: if consume dies without stopping
// it, even by SIGKILL, the kernel sends the handler process SIGKILL (else an
// orphaned handler keeps running after consume was killed). Linux
// sends the signal when the OS thread that started the child exits, not
// the process, so the goroutine locks its thread from Start until Wait
// returns: the Go runtime never ends a locked thread's life while its
// goroutine still holds it, so the signal fires only when the process dies.
// The handler's own children get no such signal; a clean stop still kills
// the whole group (killGroup). started is called once the process runs.
func runWithParentDeath(cmd *exec.Cmd, started func()) error {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := cmd.Start(); err != nil {
		return err
	}
	started()
	return cmd.Wait()
}

// groupAlive reports whether any process of group pgid is alive: kill(2)
// with signal 0 finds the group, and then /proc is read for a member that
// is not a zombie (an orphan the init process has not reaped yet still
// belongs to the group; in a container whose init does not reap, it stays).
func groupAlive(pgid int) bool {
	if syscall.Kill(-pgid, 0) != nil {
		return false
	}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return true
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if g, state, ok := procGroup(pid); ok && g == pgid && state != 'Z' && state != 'X' {
			return true
		}
	}
	return false
}

// procGroup reads the process group and state of pid from /proc/PID/stat
// (fields 3 and 5; the command name in field 2 may hold spaces and
// parentheses, so fields are counted after its last ')').
func procGroup(pid int) (pgid int, state byte, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 3 || len(f[0]) != 1 {
		return 0, 0, false
	}
	g, err := strconv.Atoi(f[2])
	if err != nil {
		return 0, 0, false
	}
	return g, f[0][0], true
}
