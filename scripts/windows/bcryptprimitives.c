/*
 * bcryptprimitives.dll!ProcessPrng for Wine 8.0 (Debian 12), which lacks it.
 *
 * Rust's std (>= 1.78) on Windows gets random bytes (HashMap keys) from ProcessPrng; an exe that
 * imports it exits with code 53 before main under a Wine without it. This DLL fills the buffer
 * with RtlGenRandom (advapi32!SystemFunction036), as ProcessPrng does on Windows. Only for
 * testing under Wine: scripts/windows/setup.sh builds it into the test prefix's system32.
 */
#include <windows.h>
#define SystemFunction036 NTAPI SystemFunction036
#include <ntsecapi.h>
#undef SystemFunction036

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len)
{
    while (len > 0) {
        ULONG n = len > 0x10000000 ? 0x10000000 : (ULONG)len;
        if (!RtlGenRandom(data, n))
            return FALSE;
        data += n;
        len -= n;
    }
    return TRUE;
}
