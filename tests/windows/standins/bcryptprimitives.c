/* Stand-in for bcryptprimitives.dll!ProcessPrng, for Wine 8 only.
 *
 * Rust's standard library (1.78 and later) draws its random numbers from ProcessPrng, exported by
 * bcryptprimitives.dll on every Windows 10 and 11. cryptography's Rust extension therefore imports
 * it, and Wine 8's builtin bcryptprimitives.dll lacks that export, so `import cryptography` fails.
 * This DLL exports ProcessPrng over RtlGenRandom (advapi32!SystemFunction036), the same system CSPRNG
 * Wine serves every other caller. Real Windows needs none of this: its own DLL has the export.
 */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length)
{
    while (length > 0) {
        ULONG chunk = length > 0x40000000 ? 0x40000000 : (ULONG)length;
        if (!SystemFunction036(data, chunk))
            return FALSE;
        data += chunk;
        length -= chunk;
    }
    return TRUE;
}
