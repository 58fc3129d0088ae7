"""A 32-bit system call (int 0x80) from native code: getpid, then setuid(0) if it survived."""

import ctypes
import mmap

from _attack import Attacker, evidence, main, succeeded

CODE = bytes([0xB8, 0x14, 0, 0, 0, 0xCD, 0x80, 0xC3])  # mov eax, 20 (getpid); int 0x80; ret


class Int80(Attacker):
    def attack(self):
        page = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
        page.write(CODE)
        function = ctypes.CFUNCTYPE(ctypes.c_int)(ctypes.addressof(ctypes.c_char.from_buffer(page)))
        evidence("attempting", "int 0x80")
        succeeded(f"int 0x80 returned {function()}")


main(Int80())
