"""The sandbox's starter: makes every writable mount ``noexec``, drops its privileges, becomes
the bot.

Not imported by the judge: bubblewrap runs its text as ``/usr/bin/python3 -S -I -c SOURCE FD
-- ARGV...`` (judge/sandbox/bwrap.py), as pid 1 of the sandbox, before any of the bot's code.
bubblewrap has no ``noexec`` option for its ``--tmpfs``, so the starter is given
``CAP_SYS_ADMIN`` in the sandbox's user namespace and a seccomp filter that allows ``unshare``
and ``mount``, and it:

1. makes a mount namespace of its own (the sandbox's mounts, copied), and there bind-remounts
   every mount that is writable and not yet ``noexec`` (``/tmp``) with ``MS_NOEXEC`` added to
   the flags it has (in a user namespace the others are locked);
2. drops every capability (bounding set, with the ``CAP_SETPCAP`` it is given for that;
   permitted, effective, inheritable, hence ambient), keeps
   ``no_new_privs`` and loads the bot's own seccomp filter, read from descriptor ``FD`` (the
   same filter as a bot's started without a starter: ``mount`` denied again);
3. restores the signal dispositions the interpreter changed (``SIGPIPE``, ``SIGXFSZ``: ignored
   dispositions survive ``exec``), makes a process group of its own (the sandbox shares the
   judge's session, docs/sandbox.md: ``kill(0)`` from the bot must not reach bubblewrap) and
   executes ``ARGV`` (looked up in ``PATH`` as bubblewrap would), the bot, which stays pid 1.

Any failure ends the starter with status 126 and a line on stderr that names it: the bot never
runs in a sandbox whose writable places can execute.
"""

import ctypes
import os
import signal
import sys

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 0x1, 0x2, 0x4, 0x8
MS_REMOUNT, MS_BIND = 0x20, 0x1000
CLONE_NEWNS = 0x00020000
MS_NOATIME, MS_NODIRATIME, MS_RELATIME, MS_STRICTATIME = 0x400, 0x800, 0x200000, 0x1000000
# A mount's options in /proc/self/mountinfo (field 6) as flags; in a user namespace a remount
# must keep them (the kernel locks them), so each is given back.
OPTION_FLAGS = {
    "ro": MS_RDONLY,
    "nosuid": MS_NOSUID,
    "nodev": MS_NODEV,
    "noexec": MS_NOEXEC,
    "noatime": MS_NOATIME,
    "nodiratime": MS_NODIRATIME,
    "relatime": MS_RELATIME,
    "strictatime": MS_STRICTATIME,
}
LINUX_CAPABILITY_VERSION_3 = 0x20080522
PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2
PR_CAPBSET_DROP, CAP_LAST = 24, 63
FAILED = 126


class SockFprog(ctypes.Structure):
    _fields_ = (("len", ctypes.c_ushort), ("filter", ctypes.c_void_p))


def unescape(field: str) -> str:
    r"""A path of /proc/self/mountinfo: space, tab, newline and backslash are octal escapes.

    >>> unescape("/tmp/a\\040b")
    '/tmp/a b'
    """
    parts = field.split("\\")
    out = parts[0]
    for part in parts[1:]:
        out += chr(int(part[:3], 8)) + part[3:]
    return out


def writable_mounts(mountinfo: str) -> list[tuple[str, int]]:
    """(mount point, its flags) of every mount that is writable and executable.

    Only a folder is a place to write files into: bubblewrap's ``/dev/null``, ``/dev/zero``
    and the like are the host's device nodes bound one by one (writing to them writes to the
    device, and only a regular file can be executed), and the kernel refuses to remount them.

    >>> writable_mounts(
    ...     "1 0 0:1 / / ro,nosuid,relatime - tmpfs tmpfs ro\\n"
    ...     "2 1 0:2 / /proc rw,nosuid,nodev,noexec,relatime - proc proc rw\\n"
    ...     "3 1 0:3 /null /dev/null rw,nosuid,relatime - devtmpfs udev rw\\n"
    ...     "4 1 0:4 / /tmp rw,nosuid,nodev,relatime - tmpfs tmpfs rw,size=16384k\\n"
    ... )
    [('/tmp', 2097158)]
    """
    found = []
    for line in mountinfo.splitlines():
        fields = line.split()
        if len(fields) < 6:
            continue
        options = fields[5].split(",")
        if "ro" in options or "noexec" in options:
            continue
        point = unescape(fields[4])
        if not os.path.isdir(point):
            continue
        flags = 0
        for option in options:
            flags |= OPTION_FLAGS.get(option, 0)
        found.append((point, flags))
    return found


def check(result: int, what: str) -> None:
    if result != 0:
        code = ctypes.get_errno()
        raise OSError(code, f"{what}: {os.strerror(code)}")


def main() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    filter_fd, separator, *argv = sys.argv[1:]
    if separator != "--" or not argv:
        raise ValueError("usage: FD -- ARGV...")
    # bubblewrap's --disable-userns runs this in a user namespace nested in the one that owns
    # the sandbox's mounts, where CAP_SYS_ADMIN does not reach them: a mount namespace of its
    # own (a copy of the sandbox's, owned by that user namespace) can be changed.
    check(libc.unshare(CLONE_NEWNS), "unshare the mount namespace")
    with open("/proc/self/mountinfo") as stream:
        mounts = writable_mounts(stream.read())
    for point, flags in mounts:
        remount = MS_REMOUNT | MS_BIND | MS_NOEXEC | flags
        check(libc.mount(None, point.encode(), None, remount, None), f"remount {point} noexec")
    with open("/proc/self/mountinfo") as stream:
        left = writable_mounts(stream.read())
    if left:
        raise OSError(f"still executable: {', '.join(point for point, _ in left)}")
    with open(int(filter_fd), "rb") as stream:
        program = stream.read()
    for capability in range(CAP_LAST + 1):  # EINVAL past the kernel's last one
        if libc.prctl(PR_CAPBSET_DROP, capability, 0, 0, 0) != 0 and ctypes.get_errno() != 22:
            check(-1, f"dropping capability {capability} from the bounding set")
    header = (ctypes.c_uint32 * 2)(LINUX_CAPABILITY_VERSION_3, 0)
    check(libc.capset(header, (ctypes.c_uint32 * 6)()), "capset")
    check(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
    buffer = ctypes.create_string_buffer(program, len(program))
    fprog = SockFprog(len(program) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    check(libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0), "seccomp")
    for signum in (signal.SIGPIPE, signal.SIGXFSZ):
        signal.signal(signum, signal.SIG_DFL)
    os.setpgid(0, 0)  # not bubblewrap's group: kill(0) from the bot reaches the sandbox only
    sys.stdout.flush()
    os.execvp(argv[0], argv)  # a name without a slash is looked up in PATH, as bubblewrap does


if __name__ == "__main__":
    try:
        main()
    except Exception as exc:  # whatever it is, the bot must not run
        sys.stderr.write(f"tapis sandbox: cannot start the bot: {exc}\n")
        sys.stderr.flush()
        os._exit(FAILED)
