/* The run-time attacks of tests/judge/attacks/bots/*.py, in C: one program, the attack named
 * by params.h (written by the test next to this file, then built in the sandbox by the real
 * gcc). Never run it outside the sandbox.
 *
 * Like the Python bots, it writes its evidence on stderr: "ATTACK <name> blocked: ..." when
 * the sandbox stopped it, "ATTACK <name> SUCCEEDED: ..." when it got through, and otherwise
 * plays the first legal action of every decision.
 *
 * The collusion attacks (collude_*) run in two seats of one table (0 and 1), which try to reach
 * each other outside the judge: seat 0 sets a channel up at hello, seat 1 looks for it at each
 * of its first decisions, and seat 0 says at the game's end whether anything arrived.
 */
#define _GNU_SOURCE
#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <mqueue.h>
#include <pthread.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/msg.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/sysinfo.h>
#include <sys/uio.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "params.h" /* P_NAME, P_REPO, P_PORT, P_DROPBOX, P_HOST_TMP_MARKER, P_JUDGE_PID (and
                       P_JUDGE_PID_S, a string), P_WORKDIR, P_PROCESS_NAME */

#define LINE_MAX_BYTES (4 * 1024 * 1024)
#define IS(name) (strcmp(P_NAME, name) == 0)

static void evidence(const char *outcome, const char *detail) {
    fprintf(stderr, "ATTACK %s %s: %s\n", P_NAME, outcome, detail);
    fflush(stderr);
}

static void blocked(const char *detail) { evidence("blocked", detail); }
static void succeeded(const char *detail) { evidence("SUCCEEDED", detail); }

/* rc < 0 (errno set): blocked; otherwise it got through. */
static void must_fail(const char *label, long rc) {
    char detail[512];
    if (rc < 0) {
        snprintf(detail, sizeof detail, "%s: errno %d (%s)", label, errno, strerror(errno));
        blocked(detail);
    } else {
        snprintf(detail, sizeof detail, "%s: returned %ld", label, rc);
        succeeded(detail);
    }
}

static void set_name(void) { prctl(PR_SET_NAME, P_PROCESS_NAME, 0, 0, 0); }

static long connect_to(int family, const char *host, int port) {
    int fd = socket(family, SOCK_STREAM, 0);
    if (fd < 0) return -1;
    long rc;
    if (family == AF_INET) {
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
        inet_pton(AF_INET, host, &a.sin_addr);
        rc = connect(fd, (struct sockaddr *)&a, sizeof a);
    } else {
        struct sockaddr_in6 a = {.sin6_family = AF_INET6, .sin6_port = htons(port)};
        inet_pton(AF_INET6, host, &a.sin6_addr);
        rc = connect(fd, (struct sockaddr *)&a, sizeof a);
    }
    int saved = errno;
    close(fd);
    errno = saved;
    return rc;
}

static long read_file(const char *path) {
    char buffer[64];
    int fd = open(path, O_RDONLY);
    if (fd < 0) return -1;
    long n = read(fd, buffer, sizeof buffer);
    int saved = errno;
    close(fd);
    errno = saved;
    return n;
}

static long write_file(const char *path, const char *data, mode_t mode) {
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
    if (fd < 0) return -1;
    long n = write(fd, data, strlen(data));
    int saved = errno;
    close(fd);
    errno = saved;
    return n;
}

static void attack_network(void) {
    char label[128];
    const char *v4[] = {"127.0.0.1", "1.1.1.1", "8.8.8.8"};
    int ports[] = {5432, 6379, 443, P_PORT};
    for (int h = 0; h < 3; h++)
        for (int p = 0; p < 4; p++) {
            snprintf(label, sizeof label, "connect %s:%d", v4[h], ports[p]);
            must_fail(label, connect_to(AF_INET, v4[h], ports[p]));
        }
    must_fail("connect [::1]:5432", connect_to(AF_INET6, "::1", 5432));
    must_fail("udp socket", socket(AF_INET, SOCK_DGRAM, 0));
    must_fail("netlink socket", socket(AF_NETLINK, SOCK_RAW, 0));
    must_fail("vsock socket", socket(40, SOCK_STREAM, 0)); /* AF_VSOCK: the host of a VM */
}

static void attack_read_files(void) {
    const char *paths[] = {P_REPO "/pyproject.toml", P_REPO "/config/settings.py",
                           "/work/main/manage.py", "/etc/passwd", "/etc/shadow", "/root/.bashrc",
                           "/proc/" P_JUDGE_PID_S "/environ"};
    char label[256];
    for (size_t i = 0; i < sizeof paths / sizeof *paths; i++) {
        snprintf(label, sizeof label, "read %s", paths[i]);
        must_fail(label, read_file(paths[i]));
    }
}

static void attack_secrets(void) {
    extern char **environ;
    const char *keys[] = {"SECRET_KEY", "DATABASE_URL", "CELERY_BROKER_URL", "REDIS_URL"};
    int found = 0;
    for (char **e = environ; *e; e++)
        for (int k = 0; k < 4; k++)
            if (strstr(*e, keys[k])) found++;
    /* every process this bot can see: itself */
    DIR *proc = opendir("/proc");
    struct dirent *entry;
    int others = 0;
    while (proc && (entry = readdir(proc)))
        if (entry->d_name[0] >= '0' && entry->d_name[0] <= '9' && atoi(entry->d_name) != getpid())
            others++;
    if (proc) closedir(proc);
    char detail[128];
    snprintf(detail, sizeof detail, "%d secrets in the environment, %d other processes", found,
             others);
    if (found || others || getppid() != 0)
        succeeded(detail);
    else
        blocked(detail);
}

static char mark[14]; /* VICTIM-SECRET, made at run time: this very program is searched */

static int search_mark(const char *root, int depth) {
    /* another bot's code, anywhere this bot can read */
    if (depth > 12) return 0;
    DIR *dir = opendir(root);
    if (!dir) return 0;
    int hits = 0;
    struct dirent *entry;
    while ((entry = readdir(dir))) {
        if (!strcmp(entry->d_name, ".") || !strcmp(entry->d_name, "..")) continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", strcmp(root, "/") ? root : "", entry->d_name);
        if (!strcmp(path, "/proc") || !strcmp(path, "/usr") || !strcmp(path, "/sys") ||
            !strcmp(path, "/dev"))
            continue;
        struct stat st;
        if (lstat(path, &st) != 0) continue;
        if (S_ISDIR(st.st_mode)) {
            hits += search_mark(path, depth + 1);
        } else if (S_ISREG(st.st_mode)) {
            int fd = open(path, O_RDONLY);
            if (fd < 0) continue;
            static char data[1 << 20];
            long n = read(fd, data, sizeof data - 1);
            close(fd);
            if (n > 0) {
                data[n] = 0;
                if (memmem(data, n, mark, 13)) hits++;
            }
        }
    }
    closedir(dir);
    return hits;
}

static void attack_read_other_bot(void) {
    const char *reversed = "TERCES-MITCIV";
    for (int i = 0; i < 13; i++) mark[i] = reversed[12 - i];
    int hits = search_mark("/", 0);
    if (read_file(P_WORKDIR "/seat1/main.py") >= 0) hits++;
    char detail[64];
    snprintf(detail, sizeof detail, "searched /: %d hits", hits);
    if (hits)
        succeeded(detail);
    else
        blocked(detail);
}

static void attack_write_outside(void) {
    const char *targets[] = {"/bot/pwned", "/bot/bot", "/pwned", "/usr/pwned", "/usr/bin/true",
                             "/etc/pwned", "/dev/shm/pwned", "/proc/sysrq-trigger",
                             "/proc/sys/kernel/core_pattern", P_DROPBOX "/pwned", P_REPO "/pwned"};
    char label[256];
    for (size_t i = 0; i < sizeof targets / sizeof *targets; i++) {
        snprintf(label, sizeof label, "write %s", targets[i]);
        must_fail(label, write_file(targets[i], "pwned", 0644));
    }
    must_fail("mkdir /bot/dir", mkdir("/bot/dir", 0755));
    must_fail("chmod /bot", chmod("/bot", 0777));
    write_file(P_HOST_TMP_MARKER, "pwned", 0644); /* the sandbox's own /tmp */
    blocked("wrote the /tmp marker: private to the sandbox (the test checks the host)");
}

static void attack_fill_tmp(void) {
    static char chunk[1 << 20];
    memset(chunk, 'x', sizeof chunk);
    long written = 0;
    for (int i = 0; i < 1024; i++) {
        char path[64];
        snprintf(path, sizeof path, "/tmp/fill%d", i);
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0) break;
        for (int k = 0; k < 4; k++) {
            long n = write(fd, chunk, sizeof chunk);
            if (n <= 0) {
                char detail[64];
                snprintf(detail, sizeof detail, "/tmp full after %ld MiB: errno %d", written >> 20,
                         errno);
                close(fd);
                blocked(detail);
                return;
            }
            written += n;
        }
        close(fd);
    }
    succeeded("filled /tmp without limit");
}

static void attack_fork_bomb(void) {
    int forked = 0, error = 0;
    while (forked < 10000) {
        pid_t pid = fork();
        if (pid < 0) {
            error = errno;
            break;
        }
        if (pid == 0) {
            set_name();
            while (fork() >= 0) {
            }
            sleep(3600);
            _exit(0);
        }
        forked++;
    }
    char detail[64];
    snprintf(detail, sizeof detail, "fork refused after %d children: errno %d", forked, error);
    if (error && forked < 64)
        blocked(detail);
    else
        succeeded(detail);
}

/* Threads that wait (on a pipe) until one is refused; then they end. */
static int release_pipe[2];

static void *wait_for_release(void *unused) {
    char byte;
    (void)unused;
    while (read(release_pipe[0], &byte, 1) < 0 && errno == EINTR) {
    }
    return NULL;
}

static void attack_thread_bomb(void) {
    static pthread_t threads[10000];
    int started = 0, error = 0;
    pipe(release_pipe);
    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    pthread_attr_setstacksize(&attributes, 64 << 10);
    while (started < 10000) {
        error = pthread_create(&threads[started], &attributes, wait_for_release, NULL);
        if (error) break;
        started++;
    }
    close(release_pipe[1]); /* every read returns 0 */
    for (int i = 0; i < started; i++) pthread_join(threads[i], NULL);
    char detail[96];
    snprintf(detail, sizeof detail, "thread refused after %d threads: error %d", started, error);
    if (error && started < 64)
        blocked(detail);
    else
        succeeded(detail);
}

static void attack_memory(void) {
    long held = 0;
    for (int i = 0; i < 4096; i++) { /* up to 64 GiB */
        char *block = malloc(16 << 20);
        if (!block) {
            char detail[64];
            snprintf(detail, sizeof detail, "malloc refused after %ld MiB", held >> 20);
            blocked(detail);
            return;
        }
        memset(block, 1, 16 << 20);
        held += 16 << 20;
    }
    succeeded("allocated 64 GiB");
}

static void attack_daemon(void) {
    if (fork() == 0) {
        setsid();
        if (fork() == 0) {
            set_name();
            close(0), close(1), close(2);
            for (;;) {
                write_file(P_DROPBOX "/daemon-alive", "alive", 0644);
                write_file(P_HOST_TMP_MARKER, "alive", 0644);
                usleep(50000);
            }
        }
        _exit(0);
    }
    wait(NULL);
    blocked("daemon started; the test checks that it died with the table");
}

static void attack_kill(void) {
    must_fail("kill the judge's pid", kill(P_JUDGE_PID, SIGKILL));
    if (IS("kill_all")) {
        must_fail("kill -9 -1", kill(-1, SIGKILL));
        must_fail("kill -STOP -1", kill(-1, SIGSTOP));
    } else {
        kill(getppid(), SIGKILL); /* 0: its own process group, of which it is pid 1 */
        blocked("kill -9 of its parent reached nobody but this bot, which as pid 1 ignores it");
    }
}

static void attack_ptrace(void) {
    must_fail("PTRACE_TRACEME", ptrace(PTRACE_TRACEME, 0, 0, 0));
    pid_t child = fork();
    if (child == 0) {
        sleep(30);
        _exit(0);
    }
    must_fail("PTRACE_ATTACH child", ptrace(PTRACE_ATTACH, child, 0, 0));
    must_fail("PTRACE_SEIZE child", ptrace(PTRACE_SEIZE, child, 0, 0));
    must_fail("process_vm_readv child", syscall(SYS_process_vm_readv, child, 0, 0, 0, 0, 0));
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/mem", child);
    int mem = open(path, O_RDONLY);
    char byte;
    must_fail("read /proc/child/mem", mem < 0 ? -1 : pread(mem, &byte, 1, 0));
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
}

/* The memory of a forked child through /proc/PID/mem: a file, out of seccomp's reach, read
 * where the child surely has something (the attack.c ptrace reads offset 0, never mapped). */
static const char secret_of_the_child[] = "tapis-child-secret";

static void attack_proc_mem(void) {
    pid_t child = fork();
    if (child == 0) {
        sleep(30);
        _exit(0);
    }
    char path[64], data[sizeof secret_of_the_child] = "";
    snprintf(path, sizeof path, "/proc/%d/mem", child);
    int mem = open(path, O_RDONLY);
    long n = mem < 0 ? -1 : pread(mem, data, sizeof data, (off_t)(uintptr_t)secret_of_the_child);
    if (n >= 0 && memcmp(data, secret_of_the_child, sizeof data) != 0) {
        errno = EINVAL;
        n = -1;
    }
    must_fail("read /proc/child/mem", n);
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
}

/* Run path (with one argument) in a child: its exit status, 100 + errno if execve failed. */
static int run_program(const char *path, const char *argument) {
    pid_t child = fork();
    if (child == 0) {
        char *argv[] = {(char *)path, (char *)argument, NULL};
        execv(path, argv);
        _exit(100 + errno);
    }
    int status = 0;
    waitpid(child, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void expect_no_run(const char *label, int status) {
    char detail[256];
    snprintf(detail, sizeof detail, "%s: status %d", label, status);
    if (status == 0)
        succeeded(detail);
    else
        blocked(detail);
}

static long copy_file(const char *from, const char *to) {
    int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0755);
    if (in < 0 || out < 0) return -1;
    char buffer[65536];
    long n, total = 0;
    while ((n = read(in, buffer, sizeof buffer)) > 0) total += write(out, buffer, n);
    close(in), close(out);
    chmod(to, 0755);
    return total;
}

/* Write a program (an ELF copy of /usr/bin/true, a #! script) into every writable folder and
 * try to execute it: execve, through the dynamic loader, mmap PROT_EXEC, a memfd. */
static void attack_exec_written(void) {
    const char *folders[] = {"/tmp", "/dev/shm", "/bot", "/", "/dev"};
    int written = 0;
    for (size_t i = 0; i < sizeof folders / sizeof *folders; i++) {
        char elf[256], script[256], label[300];
        snprintf(elf, sizeof elf, "%s/x-elf", folders[i]);
        snprintf(script, sizeof script, "%s/x-script", folders[i]);
        if (copy_file("/usr/bin/true", elf) > 0) {
            written++;
            snprintf(label, sizeof label, "execve %s", elf);
            expect_no_run(label, run_program(elf, NULL));
            snprintf(label, sizeof label, "ld.so %s", elf);
            expect_no_run(label, run_program("/lib64/ld-linux-x86-64.so.2", elf));
            int fd = open(elf, O_RDONLY);
            void *map = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
            snprintf(label, sizeof label, "mmap PROT_EXEC %s", elf);
            must_fail(label, map == MAP_FAILED ? -1 : 0);
            close(fd);
        }
        if (write_file(script, "#!/bin/sh\nexit 0\n", 0755) > 0) {
            chmod(script, 0755);
            written++;
            snprintf(label, sizeof label, "execve %s", script);
            expect_no_run(label, run_program(script, NULL));
        }
    }
    long memfd = syscall(SYS_memfd_create, "x", 0);
    must_fail("memfd_create without MFD_NOEXEC_SEAL", memfd);
    if (memfd >= 0) {
        char path[64];
        snprintf(path, sizeof path, "/proc/self/fd/%ld", memfd);
        copy_file("/usr/bin/true", path);
        expect_no_run("execve of a memfd", run_program(path, NULL));
    }
    if (!written) evidence("ERROR", "wrote no program anywhere");
}

static void attack_keyctl(void) {
    must_fail("keyctl GET_KEYRING_ID", syscall(SYS_keyctl, 0, -3, 1));
    must_fail("add_key", syscall(SYS_add_key, "user", "tapis", "x", 1, -4));
    must_fail("request_key", syscall(SYS_request_key, "user", "tapis", 0, 0));
}

static void attack_escape_syscalls(void) {
    must_fail("unshare(CLONE_NEWUSER)", syscall(SYS_unshare, 0x10000000));
    must_fail("unshare(CLONE_NEWNS|CLONE_NEWNET)", syscall(SYS_unshare, 0x00020000 | 0x40000000));
    must_fail("setns", syscall(SYS_setns, 0, 0));
    must_fail("mount", syscall(SYS_mount, 0, 0, 0, 0, 0));
    must_fail("remount /tmp exec", syscall(SYS_mount, 0, "/tmp", 0, 0x20 | 0x1000, 0));
    must_fail("umount2 /tmp", syscall(SYS_umount2, "/tmp", 0));
    must_fail("pivot_root", syscall(SYS_pivot_root, 0, 0));
    must_fail("bpf", syscall(SYS_bpf, 0, 0, 0));
    must_fail("io_uring_setup", syscall(SYS_io_uring_setup, 8, 0));
    must_fail("perf_event_open", syscall(SYS_perf_event_open, 0, 0, -1, -1, 0));
    must_fail("userfaultfd", syscall(SYS_userfaultfd, 0));
    must_fail("personality", syscall(SYS_personality, 0x0400000)); /* READ_IMPLIES_EXEC */
    must_fail("kexec_load", syscall(SYS_kexec_load, 0, 0, 0, 0));
    must_fail("init_module", syscall(SYS_init_module, 0, 0, 0));
}

static void attack_setuid_root(void) {
    must_fail("setuid(0)", setuid(0));
    must_fail("setgid(0)", setgid(0));
    must_fail("read /etc/shadow", read_file("/etc/shadow"));
}

static void attack_x32(void) {
    evidence("attempting", "x32 getpid");
    long rc = syscall(0x40000000 | 39);
    char detail[64];
    snprintf(detail, sizeof detail, "x32 getpid returned %ld", rc);
    succeeded(detail);
}

static void attack_int80(void) {
    long rc;
    __asm__ volatile("int $0x80" : "=a"(rc) : "a"(20) : "memory"); /* getpid, 32-bit ABI */
    succeeded("int 0x80 returned");
}


/* Two seats of one table: the channels of tests/judge/attacks/bots/collude_*.py, and those
 * only C reaches (System V semaphores, POSIX message queues, sigqueue, pidfd_open). */
static int seat = -1; /* from hello */
static int tries;     /* seat 1's looks so far */
static char channel[128];
#define COLLUDE_KEY 0x7A915
#define COLLUDE_TRIES 10

static void collude_name(char *out, size_t size, const char *prefix, int for_seat) {
    if (for_seat < 0)
        snprintf(out, size, "%stapis-collude-%s", prefix, P_TOKEN);
    else
        snprintf(out, size, "%stapis-collude-%s-%d", prefix, P_TOKEN, for_seat);
}

static struct sockaddr_un unix_address(int abstract, socklen_t *length) {
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    char name[100];
    collude_name(name, sizeof name, abstract ? "" : "/tmp/", -1);
    /* abstract: a NUL first, then the name (not NUL-terminated) */
    memcpy(a.sun_path + abstract, name, strlen(name));
    *length = offsetof(struct sockaddr_un, sun_path) + abstract + strlen(name);
    return a;
}

static int servers[2] = {-1, -1};
static volatile sig_atomic_t signals_received;
static void count_signal(int sig) { (void)sig, signals_received++; }
static const char *NOTE_FOLDERS[] = {"/tmp", "/dev/shm", "/var/tmp", "/bot"};
/* files every seat sees, the same inodes: its own program (one build for identical sources),
 * /usr (the host's, in every sandbox); seat 1 never opens WATCHED itself */
static const char *LOCKED[] = {"/bot/bot", "/usr/bin/true"};
static const char *WATCHED = "/usr/bin/false";
static int watch = -1; /* seat 1's inotify */

/* Host-wide channels (collude_counters, collude_figures, collude_cache): seat 0 moves, seat 1
 * reads, as the Python bots of the same names. */
#define CARDS 13
#define PAGE 4096
#define CACHE_FIRST 4 /* the probed pages start here */
static const int CACHE_BITS[16] = {1, 0, 1, 1, 0, 0, 1, 0, 1, 1, 1, 0, 0, 1, 0, 1};
#define NBITS 16

static long read_counter(const char *path) {
    char text[64] = "";
    int fd = open(path, O_RDONLY);
    if (fd < 0) return -1;
    long n = read(fd, text, sizeof text - 1);
    close(fd);
    return n > 0 ? atol(text) : -1;
}

static void counters_move(void) {
    int opened = 0;
    while (opened < CARDS && posix_openpt(O_RDWR | O_NOCTTY) >= 0) opened++;
    char detail[128];
    if (opened < CARDS) {
        snprintf(detail, sizeof detail, "opened %d ptys: errno %d", opened, errno);
        blocked(detail);
    }
    unsigned long context = 0;
    if (syscall(SYS_io_setup, CARDS, &context) != 0) {
        snprintf(detail, sizeof detail, "io_setup: errno %d", errno);
        blocked(detail);
    }
}

static void counters_read(void) {
    long pty = read_counter("/proc/sys/kernel/pty/nr"), aio = read_counter("/proc/sys/fs/aio-nr");
    char detail[128];
    snprintf(detail, sizeof detail, "pty/nr %ld, aio-nr %ld", pty, aio);
    if (pty >= CARDS || aio >= CARDS)
        succeeded(detail);
    else if (tries == COLLUDE_TRIES)
        blocked(detail);
}

static int in_child_setsid(void) {
    pid_t child = fork();
    if (child == 0) _exit(setsid() < 0);
    int status = 1;
    waitpid(child, &status, 0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static void figures_read(void) {
    char detail[512] = "";
    size_t used = 0;
    struct {
        long uptime;
        unsigned long loads[3], totalram, freeram, sharedram, bufferram, totalswap, freeswap;
        unsigned short procs;
        char pad[64];
    } info;
    if (syscall(SYS_sysinfo, &info) == 0)
        used += snprintf(detail + used, sizeof detail - used, "sysinfo procs %u; ", info.procs);
    const char *files[] = {"/proc/stat", "/proc/loadavg", "/proc/meminfo", "/proc/vmstat",
                           "/proc/locks"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++)
        if (read_file(files[i]) > 0)
            used += snprintf(detail + used, sizeof detail - used, "%s; ", files[i]);
    if (in_child_setsid()) used += snprintf(detail + used, sizeof detail - used, "setsid; ");
    long pidfd = syscall(SYS_pidfd_open, getpid(), 0);
    struct stat st;
    if (pidfd >= 0 && fstat(pidfd, &st) == 0)
        used += snprintf(detail + used, sizeof detail - used, "pidfd inode %lu; ",
                         (unsigned long)st.st_ino);
    if (used)
        succeeded(detail);
    else
        blocked("no host-wide figure readable");
}

static void cache_evict(void) {
    int fd = open(P_RARE_FILE, O_RDONLY);
    static char pages[(CACHE_FIRST + NBITS) * PAGE];
    pread(fd, pages, sizeof pages, 0); /* every page cached */
    int refused = 0;
    for (int i = 0; i < NBITS; i++)
        if (CACHE_BITS[i] &&
            posix_fadvise(fd, (CACHE_FIRST + i) * PAGE, PAGE, POSIX_FADV_DONTNEED) != 0)
            refused = 1;
    if (refused) blocked("posix_fadvise DONTNEED refused");
    close(fd);
}

static void cache_report(const char *label, const int *bits, int error) {
    char detail[128];
    if (error) {
        snprintf(detail, sizeof detail, "%s: errno %d", label, error);
        blocked(detail);
    } else if (!memcmp(bits, CACHE_BITS, sizeof CACHE_BITS)) {
        snprintf(detail, sizeof detail, "read the partner's %d bits through %s", NBITS, label);
        succeeded(detail);
    } else {
        snprintf(detail, sizeof detail, "%s: not the partner's bits", label);
        blocked(detail);
    }
}

static void cache_probe(void) {
    int fd = open(P_RARE_FILE, O_RDONLY), bits[NBITS], error = 0;
    size_t size = (CACHE_FIRST + NBITS) * PAGE;
    void *map = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
    unsigned char vector[CACHE_FIRST + NBITS];
    error = mincore(map, size, vector) ? errno : 0;
    for (int i = 0; i < NBITS; i++) bits[i] = !(vector[CACHE_FIRST + i] & 1);
    munmap(map, size);
    cache_report("mincore", bits, error);
    error = 0;
    for (int i = 0; i < NBITS; i++) {
        unsigned long range[2] = {(CACHE_FIRST + i) * PAGE, PAGE}, stat[5] = {0};
        if (syscall(451 /* cachestat */, fd, range, stat, 0) != 0) error = errno;
        bits[i] = !stat[0];
    }
    cache_report("cachestat", bits, error);
    error = 0;
    for (int i = NBITS - 1; i >= 0; i--) { /* backwards: readahead goes forwards */
        char byte;
        struct iovec io = {&byte, 1};
        long n = preadv2(fd, &io, 1, (CACHE_FIRST + i) * PAGE, RWF_NOWAIT);
        bits[i] = n < 0 && errno == EAGAIN;
        if (n < 0 && errno != EAGAIN) error = errno;
    }
    cache_report("preadv2 RWF_NOWAIT", bits, error);
    close(fd);
}

/* collude_futex: a futex without FUTEX_PRIVATE_FLAG on a shared mapping of a /usr file is keyed
 * by the file: seat 1 waits on it in a thread, seat 0 wakes it. */
static uint32_t *futex_word;
static volatile int futex_woken, futex_last_error;

static void *futex_waiter(void *unused) {
    (void)unused;
    uint32_t value = *futex_word;
    for (int i = 0; i < 200; i++) {
        struct timespec timeout = {0, 100000000};
        if (syscall(SYS_futex, futex_word, 0 /* FUTEX_WAIT */, value, &timeout, NULL, 0) == 0) {
            futex_woken++;
        } else {
            futex_last_error = errno;
            if (errno != ETIMEDOUT) usleep(20000); /* refused or at once: no spin */
        }
    }
    return NULL;
}

static void futex_start(void) {
    int fd = open("/usr/bin/true", O_RDONLY);
    futex_word = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    pthread_t thread;
    if (seat == 1) pthread_create(&thread, NULL, futex_waiter, NULL);
}

static void futex_act(void) {
    char detail[128];
    if (seat == 1) {
        snprintf(detail, sizeof detail, "woken %d times; last error %d", futex_woken,
                 futex_last_error);
        if (futex_woken)
            succeeded(detail);
        else if (tries == COLLUDE_TRIES)
            blocked(detail);
        return;
    }
    long rc = syscall(SYS_futex, futex_word, 1 /* FUTEX_WAKE */, 1, NULL, NULL, 0);
    snprintf(detail, sizeof detail, "shared futex wake: %ld (errno %d)", rc, rc < 0 ? errno : 0);
    if (rc > 0)
        succeeded(detail);
    else if ((rc < 0 && tries == 1) || tries == COLLUDE_TRIES)
        blocked(detail);
}

/* collude_numbers: what cannot be closed on a shared kernel (a known hole): eventfd ids (the
 * lowest free of the host, in /proc/self/fdinfo) and whether a page of a shared file is mapped
 * by another process too (Shared_Clean in /proc/self/smaps). Seat 0 holds, seat 1 reads. */
static void *numbers_map(void) {
    int fd = open(P_RARE_FILE, O_RDONLY);
    volatile char *page = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    (void)page[0]; /* mapped in */
    return (void *)page;
}

static long numbers_eventfd_id(void) {
    int fd = eventfd(0, 0);
    char path[64], text[512] = "";
    snprintf(path, sizeof path, "/proc/self/fdinfo/%d", fd);
    int info = open(path, O_RDONLY);
    long n = info < 0 ? -1 : read(info, text, sizeof text - 1);
    close(info), close(fd);
    char *id = n > 0 ? strstr(text, "eventfd-id:") : NULL;
    return id ? atol(id + strlen("eventfd-id:")) : -1;
}

static long numbers_shared_clean(void) {
    void *page = numbers_map();
    static char smaps[1 << 20];
    int fd = open("/proc/self/smaps", O_RDONLY);
    long n = 0, got;
    while (fd >= 0 && n < (long)sizeof smaps - 1 && (got = read(fd, smaps + n, sizeof smaps - 1 - n)) > 0)
        n += got;
    close(fd);
    smaps[n] = 0;
    munmap(page, PAGE);
    char *block = strstr(smaps, P_RARE_FILE), *shared = block ? strstr(block, "Shared_Clean:") : NULL;
    return shared ? atol(shared + strlen("Shared_Clean:")) : -1;
}

static void numbers_read(void) {
    long id = numbers_eventfd_id(), shared = numbers_shared_clean();
    char detail[128];
    snprintf(detail, sizeof detail, "eventfd id %ld, Shared_Clean %ld kB", id, shared);
    if (id >= CARDS || shared > 0)
        succeeded(detail);
    else
        blocked(detail);
}

/* collude_pagecache: two tables one after the other on one machine, as the Python bot: the
 * first reads the pages of its bits of a rarely read file (into the page cache), the second
 * reads every page and counts its major faults; MADV_RANDOM: no read-ahead. */
static long major_faults(void) {
    char text[1024];
    int fd = open("/proc/self/stat", O_RDONLY);
    ssize_t n = read(fd, text, sizeof text - 1);
    close(fd);
    text[n > 0 ? n : 0] = 0;
    char *p = strrchr(text, ')');
    long value = -1;
    for (int field = 0; p && field < 10; field++) p = strchr(p + 1, ' ');
    if (p) value = strtol(p + 1, NULL, 10);
    return value;
}

static void pagecache_attack(void) {
#ifdef P_ROLE
    size_t size = (CACHE_FIRST + NBITS) * PAGE;
    int fd = open(P_RARE_FILE, O_RDONLY);
    char detail[256];
    if (fd < 0) {
        snprintf(detail, sizeof detail, "open %s: errno %d", P_RARE_FILE, errno);
        blocked(detail);
        return;
    }
    volatile unsigned char *map = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (map == MAP_FAILED) {
        blocked("mmap refused");
        return;
    }
    madvise((void *)map, size, MADV_RANDOM);
    int bits[NBITS], sum = 0;
    if (!strcmp(P_ROLE, "write")) {
        for (int i = 0; i < NBITS; i++)
            if (CACHE_BITS[i]) sum += map[(CACHE_FIRST + i) * PAGE];
        snprintf(detail, sizeof detail, "wrote its bits (sum %d): the next table's bot tells", sum);
        blocked(detail);
        return;
    }
    for (int i = 0; i < NBITS; i++) {
        long before = major_faults();
        sum += map[(CACHE_FIRST + i) * PAGE];
        bits[i] = major_faults() == before;
    }
    cache_report("major faults", bits, 0);
#endif
}

static void collude_start(void) {
    char path[256];
    if (IS("collude_numbers") && seat == 0) {
        for (int i = 0; i < CARDS; i++) eventfd(0, 0);
        numbers_map();
        return;
    }
    if (IS("collude_futex")) {
        futex_start();
    } else if (IS("collude_counters") && seat == 0) {
        counters_move();
    } else if (IS("collude_figures") && seat == 0) {
        int moved = 0;
        for (int i = 0; i < CARDS; i++) moved += in_child_setsid();
        if (!moved) blocked("setsid refused: no autogroup moved");
    } else if (IS("collude_figures")) {
        figures_read();
    } else if (IS("collude_cache") && seat == 0) {
        cache_evict();
    } else if (IS("collude_pagecache") && seat == 0) {
        pagecache_attack();
    } else if (IS("collude_socket") && seat == 0) {
        for (int abstract = 0; abstract < 2; abstract++) {
            socklen_t length;
            struct sockaddr_un a = unix_address(abstract, &length);
            int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
            if (fd < 0 || bind(fd, (struct sockaddr *)&a, length) || listen(fd, 8))
                evidence("ERROR", abstract ? "cannot listen on an abstract socket"
                                           : "cannot listen on a socket in /tmp");
            servers[abstract] = fd;
        }
    } else if (IS("collude_shm") && seat == 0) {
        collude_name(channel, sizeof channel, "/", -1);
        must_fail("POSIX shm_open create", shm_open(channel, O_CREAT | O_RDWR, 0666));
        must_fail("System V shmget create", shmget(COLLUDE_KEY, 4096, IPC_CREAT | 0666));
        must_fail("System V msgget create", msgget(COLLUDE_KEY, IPC_CREAT | 0666));
        struct mq_attr attr = {.mq_maxmsg = 1, .mq_msgsize = 64};
        must_fail("POSIX mq_open create", mq_open(channel, O_CREAT | O_RDWR, 0666, &attr));
        /* allowed, in the seat's own IPC namespace: the partner must not find it */
        if (semget(COLLUDE_KEY, 1, IPC_CREAT | 0666) < 0)
            evidence("ERROR", "cannot make a System V semaphore");
    } else if (IS("collude_tmp")) {
        for (size_t i = 0; i < sizeof NOTE_FOLDERS / sizeof *NOTE_FOLDERS; i++) {
            char name[100];
            collude_name(name, sizeof name, "", seat);
            snprintf(path, sizeof path, "%s/%s", NOTE_FOLDERS[i], name);
            write_file(path, "my hand: ...", 0644);
            snprintf(path, sizeof path, "%s/%s.fifo", NOTE_FOLDERS[i], name);
            mkfifo(path, 0666);
        }
    } else if (IS("collude_lock") && seat == 0) {
        /* a lock on a file both seats see: their own program, and one of /usr */
        for (size_t i = 0; i < sizeof LOCKED / sizeof *LOCKED; i++) {
            int fd = open(LOCKED[i], O_RDONLY);
            if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) != 0) {
                snprintf(path, sizeof path, "cannot lock %s: errno %d", LOCKED[i], errno);
                blocked(path);
            }
        }
    } else if (IS("collude_lock")) {
        watch = inotify_init1(IN_NONBLOCK);
        if (watch < 0 || inotify_add_watch(watch, WATCHED, IN_OPEN | IN_CLOSE) < 0)
            blocked("no inotify watch");
    } else if (IS("collude_signals") && seat == 0) {
        struct sigaction action = {.sa_handler = count_signal};
        sigaction(SIGUSR1, &action, NULL);
        sigaction(SIGRTMIN, &action, NULL);
    } else if (IS("collude_signals")) {
        int sent = 0, first = 0;
        union sigval value = {.sival_int = 42};
        for (pid_t pid = 1; pid < 4096; pid++) {
            if (pid == getpid()) continue;
            int reached = kill(pid, SIGUSR1) == 0;
            reached |= sigqueue(pid, SIGRTMIN, value) == 0;
            long pidfd = syscall(SYS_pidfd_open, pid, 0);
            if (pidfd >= 0) reached |= syscall(SYS_pidfd_send_signal, pidfd, SIGUSR1, 0, 0) == 0;
            if (reached && !sent++) first = pid;
        }
        must_fail("kill -USR1 -1", kill(-1, SIGUSR1));
        char detail[128];
        snprintf(detail, sizeof detail, "kill, sigqueue, pidfd_send_signal: %d pids reached (first %d)",
                 sent, first);
        if (sent)
            succeeded(detail);
        else
            blocked(detail);
    }
}

static void collude_act(void) {
    if (IS("collude_socket") && seat == 0) {
        for (int i = 0; i < 2; i++) {
            int fd = servers[i] < 0 ? -1 : accept(servers[i], NULL, NULL);
            if (fd >= 0) succeeded(i ? "a partner connected (abstract)" : "a partner connected (/tmp)");
        }
        return;
    }
    /* the notes: both seats look for the other's; every other channel: seat 1 for seat 0's */
    if ((seat == 0 && !IS("collude_tmp") && !IS("collude_lock") && !IS("collude_futex")) ||
        tries >= COLLUDE_TRIES)
        return;
    tries++;
    char detail[512] = "";
    if (IS("collude_socket")) {
        for (int abstract = 0; abstract < 2; abstract++) {
            socklen_t length;
            struct sockaddr_un a = unix_address(abstract, &length);
            int fd = socket(AF_UNIX, SOCK_STREAM, 0);
            if (connect(fd, (struct sockaddr *)&a, length) == 0) {
                succeeded(abstract ? "connected to the partner's abstract socket"
                                   : "connected to the partner's socket in /tmp");
            } else if (tries == COLLUDE_TRIES) {
                snprintf(detail, sizeof detail, "%s socket: %d tries, errno %d",
                         abstract ? "abstract" : "/tmp", tries, errno);
                blocked(detail);
            }
            close(fd);
        }
    } else if (IS("collude_shm")) {
        collude_name(channel, sizeof channel, "/", -1);
        const char *found[5] = {0};
        int n = 0;
        if (shm_open(channel, O_RDWR, 0) >= 0) found[n++] = "POSIX shm";
        if (shmget(COLLUDE_KEY, 0, 0) >= 0) found[n++] = "System V shm";
        if (msgget(COLLUDE_KEY, 0) >= 0) found[n++] = "System V msg";
        if (semget(COLLUDE_KEY, 0, 0) >= 0) found[n++] = "System V semaphore";
        if (mq_open(channel, O_RDONLY) != (mqd_t)-1) found[n++] = "POSIX mq";
        if (n) {
            snprintf(detail, sizeof detail, "found the partner's %s", found[0]);
            succeeded(detail);
        } else if (tries == COLLUDE_TRIES) {
            blocked("10 tries: no shared memory, queue or semaphore of the partner");
        }
    } else if (IS("collude_lock")) {
        if (seat == 0) {
            close(open(WATCHED, O_RDONLY)); /* what the partner's inotify would see */
            if (tries == COLLUDE_TRIES) blocked("opened /usr/bin/false at each decision");
            return;
        }
        for (size_t i = 0; i < sizeof LOCKED / sizeof *LOCKED; i++) {
            int fd = open(LOCKED[i], O_RDONLY);
            if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK) {
                snprintf(detail, sizeof detail, "the partner's lock on %s", LOCKED[i]);
                succeeded(detail);
            }
            close(fd);
        }
        char events[4096];
        long n = watch < 0 ? -1 : read(watch, events, sizeof events);
        if (n > 0) {
            snprintf(detail, sizeof detail, "inotify saw %ld bytes of events on %s", n, WATCHED);
            succeeded(detail);
        }
        if (tries == COLLUDE_TRIES && !detail[0]) blocked("10 tries: no lock or open of the partner seen");
    } else if (IS("collude_futex")) {
        futex_act();
    } else if (IS("collude_counters")) {
        counters_read();
    } else if (IS("collude_numbers")) {
        if (tries == 1) numbers_read();
    } else if (IS("collude_cache")) {
        if (tries == 1) cache_probe();
    } else if (IS("collude_tmp")) {
        char name[100], path[256];
        collude_name(name, sizeof name, "", 1 - seat);
        for (size_t i = 0; i < sizeof NOTE_FOLDERS / sizeof *NOTE_FOLDERS; i++) {
            snprintf(path, sizeof path, "%s/%s", NOTE_FOLDERS[i], name);
            struct stat st;
            if (stat(path, &st) == 0) {
                snprintf(detail, sizeof detail, "read the partner's note %s", path);
                succeeded(detail);
            }
            snprintf(path, sizeof path, "%s/%s.fifo", NOTE_FOLDERS[i], name);
            if (stat(path, &st) == 0) {
                snprintf(detail, sizeof detail, "found the partner's pipe %s", path);
                succeeded(detail);
            }
        }
        if (tries == COLLUDE_TRIES && !detail[0]) blocked("10 tries: no note from the partner");
    }
}

static void collude_end(void) {
    if (seat != 0) return;
    if (IS("collude_socket")) {
        blocked("nobody ever connected");
    } else if (IS("collude_signals")) {
        char detail[64];
        snprintf(detail, sizeof detail, "received %d signals", (int)signals_received);
        if (signals_received)
            succeeded(detail);
        else
            blocked(detail);
    }
}

/* the protocol */
static char *line;

static void send_text(const char *text) {
    fputs(text, stdout);
    fflush(stdout);
}

static void answer(const cJSON *message, const cJSON *action, int id_delta) {
    cJSON *reply = cJSON_CreateObject();
    cJSON_AddNumberToObject(reply, "id", cJSON_GetObjectItem(message, "id")->valuedouble + id_delta);
    cJSON_AddItemToObject(reply, "action", cJSON_Duplicate(action, 1));
    char *text = cJSON_PrintUnformatted(reply);
    printf("%s\n", text);
    fflush(stdout);
    free(text);
    cJSON_Delete(reply);
}

static void attack(void) {
    if (IS("net_postgres") || IS("net_redis") || IS("net_public") || IS("net_listener"))
        attack_network();
    else if (IS("read_project")) attack_read_files();
    else if (IS("read_secret_key") || IS("read_proc1_environ") || IS("read_parent_env"))
        attack_secrets();
    else if (IS("read_other_bot")) attack_read_other_bot();
    else if (IS("write_outside")) attack_write_outside();
    else if (IS("fill_tmp")) attack_fill_tmp();
    else if (IS("fork_bomb")) attack_fork_bomb();
    else if (IS("thread_bomb")) attack_thread_bomb();
    else if (IS("memory_balloon")) attack_memory();
    else if (IS("daemon")) attack_daemon();
    else if (IS("kill_parent") || IS("kill_all")) attack_kill();
    else if (IS("ptrace")) attack_ptrace();
    else if (IS("proc_mem")) attack_proc_mem();
    else if (IS("exec_written")) attack_exec_written();
    else if (IS("int80")) attack_int80();
    else if (IS("x32")) attack_x32();
    else if (IS("keyctl")) attack_keyctl();
    else if (IS("escape_syscalls")) attack_escape_syscalls();
    else if (IS("setuid_root")) attack_setuid_root();
}

/* At the first act: misbehave instead of answering. Returns 1 if it did. */
static int misbehave(const cJSON *message) {
    const cJSON *legal = cJSON_GetObjectItem(message, "legal_actions");
    if (IS("flood_stdout")) {
        static char chunk[1 << 20];
        memset(chunk, 'x', sizeof chunk);
        for (int i = 0; i < 10; i++) fwrite(chunk, 1, sizeof chunk, stdout);
        fflush(stdout);
    } else if (IS("huge_line")) {
        printf("{\"id\":%d,\"action\":\"", cJSON_GetObjectItem(message, "id")->valueint);
        for (int i = 0; i < 100; i++) {
            static char chunk[1000000];
            memset(chunk, 'A', sizeof chunk);
            fwrite(chunk, 1, sizeof chunk, stdout);
        }
        send_text("\"}\n");
    } else if (IS("invalid_utf8")) {
        printf("{\"id\":%d,\"action\":\"\xff\xfe\xc3\x28\"}\n",
               cJSON_GetObjectItem(message, "id")->valueint);
        fflush(stdout);
    } else if (IS("illegal_card")) {
        cJSON *bogus = cJSON_CreateString("ZZ");
        answer(message, bogus, 0);
        cJSON_Delete(bogus);
    } else if (IS("wrong_id")) {
        answer(message, cJSON_GetArrayItem(legal, 0), 1000);
    } else if (IS("cpu_spin")) {
        evidence("attempting", "spinning");
        for (volatile unsigned long i = 0;; i++) {
        }
    } else if (IS("sleep_forever")) {
        evidence("attempting", "sleeping forever");
        for (;;) sleep(3600);
    } else {
        return 0;
    }
    return 1;
}

int main(void) {
    if (IS("exit_at_once")) {
        evidence("attempting", "exiting");
        return 0;
    }
    line = malloc(LINE_MAX_BYTES);
    int acts = 0;
    while (fgets(line, LINE_MAX_BYTES, stdin)) {
        cJSON *message = cJSON_Parse(line);
        const char *type = cJSON_GetStringValue(cJSON_GetObjectItem(message, "type"));
        if (type && !strcmp(type, "hello")) {
            seat = cJSON_GetObjectItem(message, "seat")->valueint;
            attack();
            collude_start();
            /* one write: the early answer is surely there before the first request */
            send_text(IS("answer_early") ? "{\"type\":\"ready\",\"name\":\"attacker-c\"}\n"
                                           "{\"id\":1,\"action\":\"2C\"}\n"
                                         : "{\"type\":\"ready\",\"name\":\"attacker-c\"}\n");
            if (IS("close_stdout")) {
                close(1);
                evidence("attempting", "stdout closed");
            }
            if (IS("flood_stderr")) {
                static char chunk[1 << 16];
                memset(chunk, 'e', sizeof chunk - 1);
                for (int i = 0; i < 160; i++) fprintf(stderr, "%s\n", chunk);
            }
        } else if (type && !strcmp(type, "act")) {
            /* an illegal card or a wrong id at every act, as in Python: the seat is replaced */
            int again = IS("illegal_card") || IS("wrong_id");
            collude_act();
            if (!((acts++ == 0 || again) && misbehave(message)))
                answer(message, cJSON_GetArrayItem(cJSON_GetObjectItem(message, "legal_actions"), 0),
                       0);
        } else if (type && !strcmp(type, "game_end")) {
            collude_end();
        } else if (type && !strcmp(type, "bye")) {
            cJSON_Delete(message);
            break;
        }
        cJSON_Delete(message);
    }
    return 0;
}
