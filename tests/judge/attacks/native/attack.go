// Run-time attacks of tests/judge/attacks/bots/*.py, in Go: one program, built once for every
// test (by the real go build in the build sandbox), the attack named by /bot/params.json, which
// the test adds to each copy of the build. Never run it outside the sandbox.
//
// Like the Python bots, it writes its evidence on stderr: "ATTACK <name> blocked: ..." when the
// sandbox stopped it, "ATTACK <name> SUCCEEDED: ..." when it got through, and otherwise plays
// the first legal action of every decision. Started with the argument "child", it is a child of
// its own attacks: it takes the test's process name and sleeps.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"reflect"
	"runtime"
	"strings"
	"syscall"
	"time"
	"unsafe"
)

// What the test tells the bot (/bot/params.json): host paths, ports, tokens.
var params struct {
	Name          string `json:"name"`
	Token         string `json:"token"`
	Repo          string `json:"repo"`
	Port          int    `json:"port"`
	Dropbox       string `json:"dropbox"`
	HostTmpMarker string `json:"host_tmp_marker"`
	JudgePid      int    `json:"judge_pid"`
	Workdir       string `json:"workdir"`
	ProcessName   string `json:"process_name"`
}

func evidence(outcome, detail string) {
	fmt.Fprintf(os.Stderr, "ATTACK %s %s: %s\n", params.Name, outcome, detail)
}

func blocked(detail string)   { evidence("blocked", detail) }
func succeeded(detail string) { evidence("SUCCEEDED", detail) }

// An error means that the sandbox stopped it, none that it did not.
func mustFail(label string, err error) {
	if err != nil {
		blocked(fmt.Sprintf("%s: %v", label, err))
	} else {
		succeeded(label)
	}
}

// A raw system call; its errno as an error.
func rawSyscall(number uintptr, args ...uintptr) error {
	a := append(args, 0, 0, 0, 0, 0, 0)
	_, _, errno := syscall.Syscall6(number, a[0], a[1], a[2], a[3], a[4], a[5])
	if errno != 0 {
		return errno
	}
	return nil
}

func cString(text string) uintptr {
	return uintptr(unsafe.Pointer(&append([]byte(text), 0)[0]))
}

// This process's name (its /proc/PID/comm, seen from the host), to find survivors.
func setName() {
	syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_NAME, cString(params.ProcessName), 0)
}

// A child of this very program (/proc/self/exe child): it sleeps.
func startChild() (int, error) {
	return syscall.ForkExec("/proc/self/exe", []string{"bot", "child"}, &syscall.ProcAttr{})
}

func network() {
	for _, address := range []string{
		"127.0.0.1:5432", "127.0.0.1:6379", fmt.Sprintf("127.0.0.1:%d", params.Port), "[::1]:5432",
		"1.1.1.1:443",
	} {
		connection, err := net.DialTimeout("tcp", address, 2*time.Second)
		if err == nil {
			connection.Close()
		}
		mustFail("connect "+address, err)
	}
	for _, family := range []struct {
		label                string
		domain, kind, number int
	}{
		{"udp socket", syscall.AF_INET, syscall.SOCK_DGRAM, 0},
		{"raw socket", syscall.AF_INET, syscall.SOCK_RAW, syscall.IPPROTO_ICMP},
		{"netlink socket", syscall.AF_NETLINK, syscall.SOCK_RAW, 0},
		{"vsock socket", 40, syscall.SOCK_STREAM, 0},
	} {
		fd, err := syscall.Socket(family.domain, family.kind, family.number)
		if err == nil {
			syscall.Close(fd)
		}
		mustFail(family.label, err)
	}
}

func readProject() {
	for _, path := range []string{
		params.Repo + "/pyproject.toml", params.Repo + "/config/settings.py", "/work/main/manage.py",
		"/etc/passwd", "/etc/shadow", "/root/.bashrc", fmt.Sprintf("/proc/%d/environ", params.JudgePid),
		"/proc/1/root/etc/shadow", "/sys/kernel/notes",
	} {
		data, err := os.ReadFile(path)
		if err == nil && len(data) == 0 {
			err = fmt.Errorf("empty")
		}
		mustFail("read "+path, err)
	}
	for _, folder := range []string{params.Repo, "/work", "/root", "/home", "/var", "/srv"} {
		entries, err := os.ReadDir(folder)
		if err == nil && len(entries) == 0 {
			err = fmt.Errorf("empty")
		}
		mustFail("list "+folder, err)
	}
}

func secrets() {
	keys := []string{"SECRET_KEY", "DATABASE_URL", "CELERY_BROKER_URL", "REDIS_URL"}
	found := []string{}
	for _, variable := range os.Environ() {
		for _, key := range keys {
			if strings.Contains(variable, key) {
				found = append(found, variable)
			}
		}
	}
	for _, path := range []string{"/proc/self/environ", "/proc/1/environ"} {
		data, _ := os.ReadFile(path)
		for _, key := range keys {
			if strings.Contains(string(data), key) {
				found = append(found, key+" in "+path)
			}
		}
	}
	// every process this bot can see: itself (Go's threads are tasks of it, not processes)
	others := []string{}
	entries, _ := os.ReadDir("/proc")
	for _, entry := range entries {
		if name := entry.Name(); name[0] >= '0' && name[0] <= '9' && name != fmt.Sprint(os.Getpid()) {
			others = append(others, name)
		}
	}
	detail := fmt.Sprintf("secrets %v, pid %d, parent %d, other processes %v", found, os.Getpid(),
		os.Getppid(), others)
	if len(found) > 0 || len(others) > 0 || os.Getpid() != 1 || os.Getppid() != 0 {
		succeeded(detail)
	} else {
		blocked(detail)
	}
}

func writeOutside() {
	for _, target := range []string{
		"/bot/pwned", "/bot/bot", "/pwned", "/usr/pwned", "/usr/bin/true", "/etc/pwned",
		"/dev/shm/pwned", "/proc/sysrq-trigger", "/proc/sys/kernel/core_pattern",
		params.Dropbox + "/pwned", params.Repo + "/pwned",
	} {
		mustFail("write "+target, os.WriteFile(target, []byte("pwned"), 0o644))
	}
	mustFail("mkdir /bot/dir", os.Mkdir("/bot/dir", 0o755))
	mustFail("chmod /bot", os.Chmod("/bot", 0o777))
	os.WriteFile(params.HostTmpMarker, []byte("pwned"), 0o644) // the sandbox's own /tmp
	blocked("wrote the /tmp marker: private to the sandbox (the test checks the host)")
}

// Status 0 is "it ran": the attack got through.
func run(argv ...string) error {
	if err := exec.Command(argv[0], argv[1:]...).Run(); err != nil {
		return err
	}
	return nil
}

// Write a program (an ELF copy of /usr/bin/true, a #! script) into every writable folder and
// try to execute it: execve, the dynamic loader, mmap PROT_EXEC, a memfd.
func execWritten() {
	program, _ := os.ReadFile("/usr/bin/true")
	written := 0
	for _, folder := range []string{"/tmp", "/dev/shm", "/bot", "/", "/dev"} {
		elf, script := folder+"/x-elf", folder+"/x-script"
		if os.WriteFile(elf, program, 0o755) == nil && os.Chmod(elf, 0o755) == nil {
			written++
			mustFail("execve "+elf, run(elf))
			mustFail("ld.so "+elf, run("/lib64/ld-linux-x86-64.so.2", elf))
			file, _ := os.Open(elf)
			_, err := syscall.Mmap(int(file.Fd()), 0, 4096, syscall.PROT_READ|syscall.PROT_EXEC,
				syscall.MAP_PRIVATE)
			mustFail("mmap PROT_EXEC "+elf, err)
			file.Close()
		}
		if os.WriteFile(script, []byte("#!/bin/sh\nexit 0\n"), 0o755) == nil &&
			os.Chmod(script, 0o755) == nil {
			written++
			mustFail("execve "+script, run(script))
		}
	}
	const sysMemfdCreate = 319
	fd, _, errno := syscall.Syscall(sysMemfdCreate, cString("x"), 0, 0)
	if errno != 0 {
		blocked(fmt.Sprintf("memfd_create without MFD_NOEXEC_SEAL: %v", errno))
	} else {
		succeeded("memfd_create without MFD_NOEXEC_SEAL")
		path := fmt.Sprintf("/proc/self/fd/%d", fd)
		os.WriteFile(path, program, 0o755)
		mustFail("execve of a memfd", run(path))
	}
	if written == 0 {
		evidence("ERROR", "wrote no program anywhere")
	}
}

// Children of its own until refused; then it kills them (Go's runtime needs threads of its
// own, under the same process limit, to play on).
func forkBomb() {
	children := []int{}
	var err error
	for len(children) < 10000 {
		var pid int
		if pid, err = startChild(); err != nil {
			break
		}
		children = append(children, pid)
	}
	detail := fmt.Sprintf("fork refused after %d children: %v", len(children), err)
	for _, pid := range children {
		syscall.Kill(pid, syscall.SIGKILL)
		syscall.Wait4(pid, nil, 0, nil)
	}
	if err != nil && len(children) < 64 {
		blocked(detail)
	} else {
		succeeded(detail)
	}
}

// Goroutines each blocked in a read of a pipe nobody writes: each takes an OS thread of its
// own, until the task limit refuses one; Go's runtime cannot go on without it and ends.
func threadBomb() {
	pipe := make([]int, 2)
	if err := syscall.Pipe(pipe); err != nil {
		evidence("ERROR", "no pipe: "+err.Error())
		return
	}
	evidence("attempting", "goroutines blocked in read, a thread each")
	for i := 0; i < 10000; i++ {
		go func() {
			runtime.LockOSThread()
			syscall.Read(pipe[0], make([]byte, 1))
		}()
	}
	time.Sleep(3 * time.Second)
	succeeded("10000 threads and still running")
}

// Anonymous memory, written to, 16 MiB at a time until refused (mmap fails, as malloc in C;
// then it is released), or until a memory cgroup kills the bot.
func memoryBalloon() {
	held := [][]byte{}
	for len(held) < 4096 { // up to 64 GiB
		block, err := syscall.Mmap(-1, 0, 16<<20, syscall.PROT_READ|syscall.PROT_WRITE,
			syscall.MAP_ANON|syscall.MAP_PRIVATE)
		if err != nil {
			blocked(fmt.Sprintf("mmap refused after %d MiB: %v", 16*len(held), err))
			for _, b := range held {
				syscall.Munmap(b)
			}
			return
		}
		for i := 0; i < len(block); i += 4096 {
			block[i] = 1
		}
		held = append(held, block)
		evidence("attempting", fmt.Sprintf("holding %d MiB", 16*len(held)))
	}
	succeeded("allocated 64 GiB")
}

// Go's own heap until the runtime cannot grow it: it ends the process ("out of memory").
func heapBalloon() {
	held := [][]byte{}
	for {
		block := make([]byte, 16<<20)
		for i := 0; i < len(block); i += 4096 {
			block[i] = 1
		}
		held = append(held, block)
		evidence("attempting", fmt.Sprintf("holding %d MiB", 16*len(held)))
		if len(held) == 4096 {
			succeeded("held 64 GiB")
			return
		}
	}
}

func kill() {
	mustFail("kill the judge's pid", syscall.Kill(params.JudgePid, syscall.SIGKILL))
	if params.Name == "kill_all" {
		mustFail("kill -9 -1", syscall.Kill(-1, syscall.SIGKILL))
		mustFail("kill -STOP -1", syscall.Kill(-1, syscall.SIGSTOP))
	} else {
		syscall.Kill(os.Getppid(), syscall.SIGKILL) // 0: its own process group, of which it is pid 1
		blocked("kill -9 of its parent reached nobody but this bot, which as pid 1 ignores it")
	}
}

func ptrace() {
	const ptraceTraceme, ptraceSeize, sysProcessVmReadv = 0, 0x4206, 310
	mustFail("PTRACE_TRACEME", rawSyscall(syscall.SYS_PTRACE, ptraceTraceme))
	child, err := startChild()
	if err != nil {
		evidence("ERROR", "no child to trace: "+err.Error())
		return
	}
	mustFail("PTRACE_ATTACH child", syscall.PtraceAttach(child))
	mustFail("PTRACE_SEIZE child", rawSyscall(syscall.SYS_PTRACE, ptraceSeize, uintptr(child)))
	mustFail("process_vm_readv child", rawSyscall(sysProcessVmReadv, uintptr(child), 0, 0, 0, 0, 0))
	syscall.Kill(child, syscall.SIGKILL)
	syscall.Wait4(child, nil, 0, nil)
}

// in the program's read-only data, at the same address in every process of it (not PIE)
const secretOfTheChild = "tapis-child-secret"

// The memory of a child (its own program, started anew) through /proc/PID/mem: a file, out of
// seccomp's reach, read where the child surely has something (this program's data).
func procMem() {
	child, err := startChild()
	if err != nil {
		evidence("ERROR", "no child to read: "+err.Error())
		return
	}
	time.Sleep(100 * time.Millisecond)
	mem, err := os.Open(fmt.Sprintf("/proc/%d/mem", child))
	if err == nil {
		data := make([]byte, len(secretOfTheChild))
		text := secretOfTheChild
		address := (*reflect.StringHeader)(unsafe.Pointer(&text)).Data
		_, err = mem.ReadAt(data, int64(address))
		mem.Close()
		if err == nil && string(data) != string(secretOfTheChild) {
			err = fmt.Errorf("read something else: %q", data)
		}
	}
	mustFail("read /proc/child/mem", err)
	syscall.Kill(child, syscall.SIGKILL)
	syscall.Wait4(child, nil, 0, nil)
}

func attack() {
	switch params.Name {
	case "net_postgres", "net_redis", "net_public", "net_listener":
		network()
	case "read_project":
		readProject()
	case "read_secret_key", "read_proc1_environ", "read_parent_env":
		secrets()
	case "write_outside":
		writeOutside()
	case "exec_written":
		execWritten()
	case "fork_bomb":
		forkBomb()
	case "go_thread_bomb":
		threadBomb()
	case "memory_balloon":
		memoryBalloon()
	case "go_heap_balloon":
		heapBalloon()
	case "kill_parent", "kill_all":
		kill()
	case "ptrace":
		ptrace()
	case "proc_mem":
		procMem()
	}
}

// the protocol

type message struct {
	Type         string            `json:"type"`
	ID           json.RawMessage   `json:"id"`
	LegalActions []json.RawMessage `json:"legal_actions"`
}

// At the first act: misbehave instead of answering. Returns true if it did.
func misbehave(out io.Writer, m message) bool {
	switch params.Name {
	case "huge_line":
		fmt.Fprintf(out, `{"id":%s,"action":"`, m.ID)
		chunk := []byte(strings.Repeat("A", 1000000))
		for i := 0; i < 100; i++ {
			out.Write(chunk)
		}
		out.Write([]byte("\"}\n"))
	case "flood_stdout":
		chunk := []byte(strings.Repeat("x", 1<<20))
		for i := 0; i < 10; i++ {
			out.Write(chunk)
		}
	case "sleep_forever":
		evidence("attempting", "sleeping forever")
		for { // not select {}: with every goroutine blocked, Go ends the program (a deadlock)
			time.Sleep(time.Hour)
		}
	default:
		return false
	}
	return true
}

// The parameters; a child takes its name in init: the main goroutine then runs on the main
// thread, whose name is the process's.
func init() {
	data, err := os.ReadFile("/bot/params.json")
	if err == nil {
		err = json.Unmarshal(data, &params)
	}
	if err != nil {
		evidence("ERROR", "no /bot/params.json: "+err.Error())
	}
	if len(os.Args) > 1 && os.Args[1] == "child" {
		setName()
	}
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "child" {
		time.Sleep(time.Hour)
		return
	}
	in := bufio.NewReader(os.Stdin)
	acts := 0
	for {
		runtime.Gosched()
		line, err := in.ReadBytes('\n')
		if err != nil {
			return
		}
		var m message
		if json.Unmarshal(line, &m) != nil {
			continue
		}
		switch m.Type {
		case "hello":
			attack()
			os.Stdout.Write([]byte(`{"type":"ready","name":"attacker-go"}` + "\n"))
		case "act":
			acts++
			if acts == 1 && misbehave(os.Stdout, m) {
				continue
			}
			reply, _ := json.Marshal(map[string]json.RawMessage{"id": m.ID, "action": m.LegalActions[0]})
			os.Stdout.Write(append(reply, '\n'))
		case "bye":
			return
		}
	}
}
