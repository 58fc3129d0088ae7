"""The seccomp filter of the bot sandbox, built with libseccomp and exported as BPF.

The filter is a deny list on top of bubblewrap's namespaces: everything a Python
bot needs is allowed; the system calls that have served kernel exploits or
sandbox escapes, and that no card-playing bot needs, fail with ``EPERM``:

- ``ptrace``, ``process_vm_readv``/``process_vm_writev``: reading or steering
  another process;
- ``keyctl``, ``add_key``, ``request_key``: the kernel keyring is not namespaced;
- ``bpf``, ``perf_event_open``, ``userfaultfd``, ``io_uring_*``: large kernel
  attack surfaces, frequent in privilege escalations;
- ``mount``, the new mount API, ``pivot_root``, ``chroot``, ``unshare``,
  ``setns`` and ``clone`` with namespace flags: rebuilding a sandbox from the
  inside; ``clone3`` fails with ``ENOSYS`` (its flags cannot be inspected), so
  the C library falls back to ``clone``, whose flags are checked;
- ``personality`` (e.g. ``READ_IMPLIES_EXEC``), ``kexec_*``, module loading,
  ``reboot``, ``swapon``, clocks, ``syslog``, ``acct``, ``quotactl``, ...:
  refused to an unprivileged user anyway; denied here so that a kernel bug in a
  capability check is not enough;
- ``shmget``/``shmat``/... and ``msgget``/``msgsnd``/...: System V shared memory
  and message queues hold kernel memory that no rlimit counts (a detached
  segment keeps its pages until the IPC namespace dies);
- ``memfd_create`` without ``MFD_NOEXEC_SEAL`` (or with ``MFD_EXEC``): a memfd is a file the
  bot writes, and one that may execute (``execveat`` of its descriptor) would get round the
  ``noexec`` of ``/tmp`` (judge/sandbox/_starter.py); before Linux 6.3, which has no such
  seal, no memfd at all;
- ``ioctl(TIOCSTI)``/``ioctl(TIOCLINUX)``: pushing keystrokes into a terminal;
- file locks (``flock``, ``fcntl``'s ``F_*LK*`` record locks, leases and ``F_NOTIFY``) and
  ``inotify``: every sandbox sees the same files of ``/usr`` (and two seats of one build the same
  ``/bot``), the same inodes, and namespaces separate neither locks nor file events, so two bots
  anywhere on the host could signal each other through them. A build (:data:`BUILD_SYSCALLS`)
  keeps the locks (cargo and go lock their caches in the build's own ``/tmp``), not the events;
- host-wide figures and the page cache (docs/sandbox.md, "Host-wide channels"): legacy AIO,
  ``sysinfo``, ``setsid`` (the autogroup number), ``pidfd_open`` and ``clone(CLONE_PIDFD)``
  (pidfs inode numbers); evicting pages (``fadvise`` ``DONTNEED``, ``madvise`` ``COLD``,
  ``PAGEOUT``, ``MERGEABLE``, ``process_madvise``, ``PR_SET_MEMORY_MERGE``) and probing the
  cache (``mincore``, ``cachestat``, ``readahead``, ``preadv2``/``pwritev2`` with
  ``RWF_NOWAIT``): one sandbox sets them, another anywhere on the host reads them exactly;
- ``socket`` for any family other than ``AF_UNIX`` (``EAFNOSUPPORT``): a bot has
  no network, not even the loopback of its namespace, where IP traffic would
  leave counters and connection states behind for the next table of a zygote
  (judge/launchers/zygote.py); ``AF_VSOCK`` in particular is not network-namespaced and
  would reach the host of a virtual machine, and netlink, packet and the rest
  are kernel surface nobody needs.

Only the native architecture is in the filter: a system call made through
another ABI (a 32-bit ``int 0x80`` or ``sysenter`` on x86-64, or an x32 call,
whose number carries the ``0x40000000`` bit) kills the process (``SIGSYS``).
The compat entry points have a separate syscall table, and a deny list written
for one ABI does not cover the other.

The program is built once per process (:func:`filter_program`) and handed to
bubblewrap on a file descriptor (``bwrap --seccomp FD``), which loads it after
``PR_SET_NO_NEW_PRIVS``, right before executing the bot.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import functools
import os
import platform
from collections.abc import Callable

__all__ = [
    "BUILD_SYSCALLS",
    "DENIED_SOCKET_FAMILIES",
    "DENIED_SYSCALLS",
    "ZYGOTE_SYSCALLS",
    "SeccompError",
    "filter_fd",
    "filter_program",
]


class SeccompError(RuntimeError):
    """libseccomp is missing or refused to build the filter."""


# Refused with EPERM, whatever their arguments.
DENIED_SYSCALLS: tuple[str, ...] = (
    # other processes
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "kcmp",
    "pidfd_getfd",
    # kernel keyring (not namespaced)
    "keyctl",
    "add_key",
    "request_key",
    # big kernel attack surfaces
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "fanotify_init",
    "lookup_dcookie",
    "open_by_handle_at",
    "name_to_handle_at",
    "mbind",
    "migrate_pages",
    "move_pages",
    "set_mempolicy",
    # System V shared memory and message queues: kernel memory outside
    # RLIMIT_AS (a detached segment keeps its pages)
    "shmget",
    "shmat",
    "shmdt",
    "shmctl",
    "msgget",
    "msgsnd",
    "msgrcv",
    "msgctl",
    # namespaces and mounts
    "unshare",
    "setns",
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "move_mount",
    "open_tree",
    "mount_setattr",
    # the execution domain and the kernel itself
    "personality",
    "modify_ldt",
    "iopl",
    "ioperm",
    "uselib",
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "reboot",
    "swapon",
    "swapoff",
    "syslog",
    "acct",
    "quotactl",
    "quotactl_fd",
    "vhangup",
    "settimeofday",
    "clock_settime",
    "clock_adjtime",
    "adjtimex",
    "sethostname",
    "setdomainname",
    # a channel between sandboxes: locks and file events on the files they all see (/usr)
    "flock",
    "inotify_init",
    "inotify_init1",
    "inotify_add_watch",
    # host-wide counters and figures that one sandbox moves and another reads (docs/sandbox.md,
    # "Host-wide channels"): legacy AIO (/proc/sys/fs/aio-nr), sysinfo (the host's process
    # count, free memory), setsid (the autogroup number of /proc/self/autogroup), pidfds
    # (their pidfs inode number is a host-wide pid counter)
    "io_setup",
    "io_destroy",
    "io_submit",
    "io_cancel",
    "io_getevents",
    "io_pgetevents",
    "sysinfo",
    "setsid",
    "pidfd_open",
    "process_madvise",
    # the page cache's state of the files every sandbox shares (/usr): probed and evicted
    "mincore",
    "cachestat",
    "readahead",
)

# clone() flags that would create namespaces (CLONE_NEWTIME shares its bit with
# the exit signal in clone() and is only accepted by clone3 and unshare).
_CLONE_NAMESPACE_FLAGS: tuple[int, ...] = (
    0x00020000,  # CLONE_NEWNS
    0x02000000,  # CLONE_NEWCGROUP
    0x04000000,  # CLONE_NEWUTS
    0x08000000,  # CLONE_NEWIPC
    0x10000000,  # CLONE_NEWUSER
    0x20000000,  # CLONE_NEWPID
    0x40000000,  # CLONE_NEWNET
)
_CLONE_PIDFD = 0x00001000  # a pidfd: its inode number is a host-wide counter
# fcntl() commands that lock a file or read another process's lock (F_GETLK, F_SETLK,
# F_SETLKW, F_OFD_GETLK, F_OFD_SETLK, F_OFD_SETLKW), refused with flock (see the module's
# docstring); and those that take a lease or watch a folder (F_SETLEASE, F_GETLEASE,
# F_NOTIFY), refused to builds as well.
_FCNTL_LOCKS: tuple[int, ...] = (5, 6, 7, 36, 37, 38)
_FCNTL_EVENTS: tuple[int, ...] = (1024, 1025, 1026)
# Page-cache eviction: fadvise64's POSIX_FADV_DONTNEED; madvise's MADV_MERGEABLE, MADV_COLD,
# MADV_PAGEOUT; prctl's PR_SET_MEMORY_MERGE; preadv2/pwritev2's RWF_NOWAIT (a probe).
_FADV_DONTNEED = 4
_MADV_EVICT: tuple[int, ...] = (12, 20, 21)
_PR_SET_MEMORY_MERGE = 67
_RWF_NOWAIT = 0x8
# System calls newer than some libseccomp releases know, by their x86-64 number.
_SYSCALL_NUMBERS = {
    "cachestat": 451,
    "futex_waitv": 449,
    "futex_wake": 454,
    "futex_wait": 455,
    "futex_requeue": 456,
    "io_pgetevents": 333,
}
# A futex without FUTEX_PRIVATE_FLAG on a shared mapping of a file is keyed by the file: a wait
# in one sandbox is woken by a wake in another. Such a wait returns at once (EAGAIN: the value
# changed, look again; glibc's pthread_join waits so on a thread's exit, and spins), every other
# shared operation is EINVAL (which glibc's wakes tolerate); the futex2 calls, whose flags may
# be in memory, ENOSYS.
_FUTEX_PRIVATE, _FUTEX_WAITS = 128, (0, 9)  # FUTEX_WAIT, FUTEX_WAIT_BITSET
_FUTEX_OTHERS = (1, 3, 4, 5, 6, 7, 8, 10, 11, 12, 13)  # FUTEX_WAKE ... FUTEX_LOCK_PI2
_FUTEX2 = ("futex_waitv", "futex_wake", "futex_wait", "futex_requeue")
_TIOCSTI = 0x5412
_TIOCLINUX = 0x541C

# socket(family, ...) is refused for every family but these.
_ALLOWED_SOCKET_FAMILIES: frozenset[int] = frozenset({1})  # AF_UNIX
_AF_MAX = 64  # families at or above this are refused by one range rule
DENIED_SOCKET_FAMILIES: tuple[int, ...] = tuple(
    family for family in range(_AF_MAX) if family not in _ALLOWED_SOCKET_FAMILIES
)

# libseccomp constants (include/seccomp.h, libseccomp 2.5)
_SCMP_ACT_KILL_PROCESS = 0x80000000
_SCMP_ACT_ALLOW = 0x7FFF0000
_SCMP_FLTATR_ACT_BADARCH = 2
_MFD_NOEXEC_SEAL, _MFD_EXEC = 0x0008, 0x0010  # <linux/memfd.h>
_SCMP_CMP_EQ = 4
_SCMP_CMP_GE = 5
_SCMP_CMP_MASKED_EQ = 7


def _act_errno(code: int) -> int:
    return 0x00050000 | (code & 0xFFFF)


class _ArgCmp(ctypes.Structure):
    _fields_ = (
        ("arg", ctypes.c_uint),
        ("op", ctypes.c_int),
        ("datum_a", ctypes.c_uint64),
        ("datum_b", ctypes.c_uint64),
    )


@functools.cache
def _libseccomp() -> ctypes.CDLL:
    name = ctypes.util.find_library("seccomp") or "libseccomp.so.2"
    try:
        lib = ctypes.CDLL(name, use_errno=True)
    except OSError as exc:
        raise SeccompError(
            f"libseccomp is not installed ({exc}); apt-get install libseccomp2"
        ) from exc
    lib.seccomp_init.argtypes = (ctypes.c_uint32,)
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_release.argtypes = (ctypes.c_void_p,)
    lib.seccomp_release.restype = None
    lib.seccomp_attr_set.argtypes = (ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32)
    lib.seccomp_attr_set.restype = ctypes.c_int
    lib.seccomp_syscall_resolve_name.argtypes = (ctypes.c_char_p,)
    lib.seccomp_syscall_resolve_name.restype = ctypes.c_int
    lib.seccomp_rule_add_array.argtypes = (
        ctypes.c_void_p,
        ctypes.c_uint32,
        ctypes.c_int,
        ctypes.c_uint,
        ctypes.POINTER(_ArgCmp),
    )
    lib.seccomp_rule_add_array.restype = ctypes.c_int
    lib.seccomp_export_bpf.argtypes = (ctypes.c_void_p, ctypes.c_int)
    lib.seccomp_export_bpf.restype = ctypes.c_int
    return lib


def _check(rc: int, what: str) -> None:
    if rc < 0:
        raise SeccompError(f"libseccomp: {what} failed: {os.strerror(-rc)}")


ZYGOTE_SYSCALLS: frozenset[str] = frozenset({"unshare", "setns", "mount", "pidfd_open"})
"""What a zygote's filter allows beyond a bot's: making each table's namespaces and mounts
(judge/sdk/_tapis_zygote.py), and a pidfd of each table's bot for the judge, before it loads
the bot's filter on the table's process."""

BUILD_SYSCALLS: frozenset[str] = frozenset({"flock", "fcntl", "sysinfo", "setsid"})
"""What a build's filter allows beyond a bot's: file locks (``fcntl`` here means its lock
commands, not leases nor ``F_NOTIFY``), which compilers' caches use
(judge/launchers/runtimes.py); ``sysinfo``, from which compilers size their memory (GCC's
collector through ``sysconf(_SC_PHYS_PAGES)``), and ``setsid`` (make, shells). A build reads no
hand: what it could read there, a bot could not write."""


@functools.cache
def filter_program(allowed: frozenset[str] = frozenset()) -> bytes:
    """The BPF program (``struct sock_filter`` array) of the sandbox, for x86-64; the system
    calls in ``allowed`` are left out of the deny list (only :data:`ZYGOTE_SYSCALLS` and
    :data:`BUILD_SYSCALLS`).

    >>> program = filter_program()
    >>> len(program) % 8 == 0 and len(program) > 8
    True
    >>> len(filter_program(ZYGOTE_SYSCALLS)) < len(program)
    True
    """
    if not allowed <= ZYGOTE_SYSCALLS | BUILD_SYSCALLS:
        allowable = sorted(ZYGOTE_SYSCALLS | BUILD_SYSCALLS)
        raise SeccompError(f"only {allowable} may be allowed, not {sorted(allowed)}")
    if platform.machine() != "x86_64":
        # The deny list and the 32-bit/x32 reasoning are written for x86-64.
        raise SeccompError(f"the seccomp filter supports x86_64 only, not {platform.machine()}")
    lib = _libseccomp()
    ctx = lib.seccomp_init(_SCMP_ACT_ALLOW)  # the native architecture only
    if not ctx:
        raise SeccompError("libseccomp: seccomp_init failed")
    try:
        _check(
            lib.seccomp_attr_set(ctx, _SCMP_FLTATR_ACT_BADARCH, _SCMP_ACT_KILL_PROCESS),
            "setting the bad-architecture action",
        )

        def rule(action: int, name: str, *cmps: tuple[int, int, int, int]) -> None:
            nr = lib.seccomp_syscall_resolve_name(name.encode())
            if nr < 0:
                nr = _SYSCALL_NUMBERS.get(name, nr)
            if nr < 0:
                raise SeccompError(f"libseccomp does not know the system call {name!r}")
            array = (_ArgCmp * max(1, len(cmps)))(*(_ArgCmp(*cmp) for cmp in cmps))
            _check(lib.seccomp_rule_add_array(ctx, action, nr, len(cmps), array), f"rule {name}")

        eperm = _act_errno(errno.EPERM)
        for name in DENIED_SYSCALLS:
            if name not in allowed:
                rule(eperm, name)
        for flag in _CLONE_NAMESPACE_FLAGS:
            rule(eperm, "clone", (0, _SCMP_CMP_MASKED_EQ, flag, flag))
        rule(eperm, "clone", (0, _SCMP_CMP_MASKED_EQ, _CLONE_PIDFD, _CLONE_PIDFD))
        rule(_act_errno(errno.ENOSYS), "clone3")
        _page_cache_rules(rule, eperm)
        _futex_rules(rule)
        # A memfd is a file the bot writes: only a sealed non-executable one (Linux 6.3+).
        rule(eperm, "memfd_create", (1, _SCMP_CMP_MASKED_EQ, _MFD_NOEXEC_SEAL, 0))
        rule(eperm, "memfd_create", (1, _SCMP_CMP_MASKED_EQ, _MFD_EXEC, _MFD_EXEC))
        refused = _FCNTL_EVENTS if "fcntl" in allowed else (*_FCNTL_LOCKS, *_FCNTL_EVENTS)
        for command in refused:
            # the command is an int: its upper 32 bits are ignored by the kernel
            rule(eperm, "fcntl", (1, _SCMP_CMP_MASKED_EQ, 0xFFFFFFFF, command))
        for request in (_TIOCSTI, _TIOCLINUX):
            rule(eperm, "ioctl", (1, _SCMP_CMP_MASKED_EQ, 0xFFFFFFFF, request))
        no_family = _act_errno(errno.EAFNOSUPPORT)
        for family in DENIED_SOCKET_FAMILIES:
            rule(no_family, "socket", (0, _SCMP_CMP_EQ, family, 0))
        rule(no_family, "socket", (0, _SCMP_CMP_GE, _AF_MAX, 0))

        fd = os.memfd_create("tapis-seccomp-export", os.MFD_CLOEXEC)
        try:
            _check(lib.seccomp_export_bpf(ctx, fd), "exporting the BPF program")
            size = os.lseek(fd, 0, os.SEEK_END)
            program = os.pread(fd, size, 0)
        finally:
            os.close(fd)
    finally:
        lib.seccomp_release(ctx)
    if not program or len(program) % 8:
        raise SeccompError(f"libseccomp exported a malformed program ({len(program)} bytes)")
    return program


def _page_cache_rules(rule: Callable[..., None], eperm: int) -> None:
    """Refuse evicting pages of a shared file from the page cache, and probing whether they
    are there without loading them: with /usr in every sandbox, a storage channel between
    sandboxes that outlives them (docs/sandbox.md, "Host-wide channels")."""
    rule(eperm, "fadvise64", (3, _SCMP_CMP_MASKED_EQ, 0xFFFFFFFF, _FADV_DONTNEED))
    for advice in _MADV_EVICT:
        rule(eperm, "madvise", (2, _SCMP_CMP_MASKED_EQ, 0xFFFFFFFF, advice))
    rule(eperm, "prctl", (0, _SCMP_CMP_MASKED_EQ, 0xFFFFFFFF, _PR_SET_MEMORY_MERGE))
    for name in ("preadv2", "pwritev2"):
        rule(eperm, name, (5, _SCMP_CMP_MASKED_EQ, _RWF_NOWAIT, _RWF_NOWAIT))


def _futex_rules(rule: Callable[..., None]) -> None:
    """Only private futexes wait or wake (see _FUTEX_PRIVATE)."""
    mask = 0x7F | _FUTEX_PRIVATE  # the command and the private flag (not FUTEX_CLOCK_REALTIME)
    for command in _FUTEX_WAITS:
        rule(_act_errno(errno.EAGAIN), "futex", (1, _SCMP_CMP_MASKED_EQ, mask, command))
    for command in _FUTEX_OTHERS:
        rule(_act_errno(errno.EINVAL), "futex", (1, _SCMP_CMP_MASKED_EQ, mask, command))
    for name in _FUTEX2:
        rule(_act_errno(errno.ENOSYS), name)


def filter_fd(allowed: frozenset[str] = frozenset()) -> int:
    """A new memfd holding :func:`filter_program` (of ``allowed``), positioned at 0.

    The descriptor is not inheritable: pass it with ``pass_fds``. The caller
    closes it once bubblewrap is started.
    """
    program = filter_program(allowed)
    fd = os.memfd_create("tapis-seccomp", os.MFD_CLOEXEC)
    try:
        os.write(fd, program)
        os.lseek(fd, 0, os.SEEK_SET)
    except BaseException:
        os.close(fd)
        raise
    return fd
