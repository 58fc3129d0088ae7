"""The kernel keyring (not namespaced): read the session keyring, add a key, request one."""

import ctypes

from _attack import Attacker, main, must_fail, syscall

KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, KEY_SPEC_USER_KEYRING = 0, -3, -4


class Keyctl(Attacker):
    def attack(self):
        must_fail(
            "keyctl GET_KEYRING_ID",
            lambda: syscall(250, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 1),
        )
        kind, desc, data = (
            ctypes.c_char_p(b"user"),
            ctypes.c_char_p(b"tapis"),
            ctypes.c_char_p(b"x"),
        )
        pointer = ctypes.cast
        must_fail(
            "add_key",
            lambda: syscall(
                248,
                pointer(kind, ctypes.c_void_p).value,
                pointer(desc, ctypes.c_void_p).value,
                pointer(data, ctypes.c_void_p).value,
                1,
                KEY_SPEC_USER_KEYRING,
            ),
        )
        must_fail(
            "request_key",
            lambda: syscall(
                249,
                pointer(kind, ctypes.c_void_p).value,
                pointer(desc, ctypes.c_void_p).value,
                0,
                0,
            ),
        )


main(Keyctl())
