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
  keeps them: cargo and go lock their caches in the build's own ``/tmp``;
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
# fcntl() commands that lock a file, read another process's lock, take a lease or watch a
# folder (F_GETLK, F_SETLK, F_SETLKW, F_OFD_GETLK, F_OFD_SETLK, F_OFD_SETLKW, F_SETLEASE,
# F_GETLEASE, F_NOTIFY): refused with flock (see the module's docstring).
_FCNTL_LOCKS: tuple[int, ...] = (5, 6, 7, 36, 37, 38, 1024, 1025, 1026)
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


ZYGOTE_SYSCALLS: frozenset[str] = frozenset({"unshare", "setns", "mount"})
"""What a zygote's filter allows beyond a bot's: making each table's namespaces and mounts
(judge/sdk/_tapis_zygote.py), before it loads the bot's filter on the table's process."""

BUILD_SYSCALLS: frozenset[str] = frozenset(
    {"flock", "fcntl", "inotify_init", "inotify_init1", "inotify_add_watch"}
)
"""What a build's filter allows beyond a bot's: file locks (``fcntl`` here means its lock
commands) and file events, which compilers' caches use (judge/launchers/runtimes.py)."""


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
                raise SeccompError(f"libseccomp does not know the system call {name!r}")
            array = (_ArgCmp * max(1, len(cmps)))(*(_ArgCmp(*cmp) for cmp in cmps))
            _check(lib.seccomp_rule_add_array(ctx, action, nr, len(cmps), array), f"rule {name}")

        eperm = _act_errno(errno.EPERM)
        for name in DENIED_SYSCALLS:
            if name not in allowed:
                rule(eperm, name)
        for flag in _CLONE_NAMESPACE_FLAGS:
            rule(eperm, "clone", (0, _SCMP_CMP_MASKED_EQ, flag, flag))
        rule(_act_errno(errno.ENOSYS), "clone3")
        # A memfd is a file the bot writes: only a sealed non-executable one (Linux 6.3+).
        rule(eperm, "memfd_create", (1, _SCMP_CMP_MASKED_EQ, _MFD_NOEXEC_SEAL, 0))
        rule(eperm, "memfd_create", (1, _SCMP_CMP_MASKED_EQ, _MFD_EXEC, _MFD_EXEC))
        if "fcntl" not in allowed:
            for command in _FCNTL_LOCKS:
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
