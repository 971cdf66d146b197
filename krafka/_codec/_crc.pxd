# CRC32C of a C buffer for the compiled codec. Small buffers (a batch of a few records) go
# through the CPU's CRC32C instruction right here: calling the `crc32c` package costs a
# memoryview, an argument tuple and its parsing, several times the checksum itself. Larger
# buffers, and CPUs or compilers without that instruction, use the package (`fallback`), whose
# interleaved loop is faster on long inputs.
from libc.stdint cimport int64_t, uint8_t, uint32_t

cdef extern from *:
    """
    #include <stdint.h>
    #include <string.h>
    #if (defined(__x86_64__) || defined(_M_X64)) && (defined(__GNUC__) || defined(__clang__))
    #include <cpuid.h>
    #define KRAFKA_CRC32C_HW 1
    static int krafka_crc32c_hw_state = -1;  /* -1: not probed yet, 0: absent, 1: present */

    static int krafka_crc32c_hw_probe(void) {
        unsigned int a, b, c, d;
        if (!__get_cpuid(1, &a, &b, &c, &d)) return 0;
        return (c & bit_SSE4_2) != 0;
    }

    __attribute__((target("sse4.2")))
    static uint32_t krafka_crc32c_hw(const uint8_t *p, size_t n) {
        uint64_t c = 0xFFFFFFFFu;
        uint32_t c32;
        while (n >= 8) {
            uint64_t v;
            memcpy(&v, p, 8);
            c = __builtin_ia32_crc32di(c, v);
            p += 8;
            n -= 8;
        }
        c32 = (uint32_t)c;
        while (n--) c32 = __builtin_ia32_crc32qi(c32, *p++);
        return c32 ^ 0xFFFFFFFFu;
    }
    #endif

    #define KRAFKA_CRC32C_INLINE_MAX 2048

    /* 1 and the CRC32C of p[0:n] in *out, or 0 when the caller must use the package */
    static int krafka_crc32c_inline(const uint8_t *p, Py_ssize_t n, uint32_t *out) {
    #ifdef KRAFKA_CRC32C_HW
        if (n <= KRAFKA_CRC32C_INLINE_MAX) {
            if (krafka_crc32c_hw_state < 0) krafka_crc32c_hw_state = krafka_crc32c_hw_probe();
            if (krafka_crc32c_hw_state) {
                *out = krafka_crc32c_hw(p, (size_t)n);
                return 1;
            }
        }
    #endif
        (void)p; (void)n; (void)out;
        return 0;
    }
    """
    int krafka_crc32c_inline(const uint8_t* p, Py_ssize_t n, uint32_t* out) noexcept nogil
    object PyMemoryView_FromMemory(char* mem, Py_ssize_t size, int flags)
    int PyBUF_READ


cdef inline int64_t crc32c_of(object fallback, const uint8_t* p, Py_ssize_t n) except -1:
    """CRC32C of `p[0:n]`; `fallback` is the `crc32c.crc32c` function."""
    cdef uint32_t crc
    if krafka_crc32c_inline(p, n, &crc):
        return crc
    return fallback(PyMemoryView_FromMemory(<char*>p, n, PyBUF_READ))
