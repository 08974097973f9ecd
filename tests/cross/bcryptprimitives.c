/* Test scaffolding for Wine 8 only, never shipped: Wine 8 has no
 * bcryptprimitives.dll, whose ProcessPrng Rust's standard library imports
 * on Windows (a program exits with status 53 before main without it).
 * This stand-in fills the buffer from RtlGenRandom (advapi32), in chunks
 * that fit its ULONG length. scripts/cross-test builds it with mingw-w64
 * into the test Wine prefix's system32. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length); /* RtlGenRandom */

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length)
{
    while (length > 0) {
        ULONG chunk = length > 0x10000000 ? 0x10000000 : (ULONG)length;
        if (!SystemFunction036(data, chunk))
            return FALSE;
        data += chunk;
        length -= chunk;
    }
    return TRUE;
}
