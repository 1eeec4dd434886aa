/* Writes a minidump of a running process, for the Windows tests under Wine (scripts/windows/minidump.py):
 *
 *   minidump.exe <pid> full|normal <file>
 *
 * full:   MiniDumpWithFullMemory with handle data, full memory info, thread info and unloaded
 *         modules: the set HotSpot's own crash dump (hs_err_pid<pid>.mdmp) asks for, falling back
 *         to MiniDumpWithFullMemory alone when dbghelp refuses the set, as HotSpot does;
 *         procdump -ma and Task Manager's "Create dump file" write full-memory dumps too.
 * normal: MiniDumpNormal (threads, their stacks, the module list; no other memory), the kind a
 *         dump without full memory is.
 *
 * The target is not suspended (as with procdump without -r): the dump is not a consistent
 * snapshot of a running JVM. Exit status 0 when the dump was written. */
#include <windows.h>
#include <dbghelp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc != 4 || (strcmp(argv[2], "full") != 0 && strcmp(argv[2], "normal") != 0)) {
        fprintf(stderr, "usage: minidump.exe <pid> full|normal <file>\n");
        return 2;
    }
    DWORD pid = (DWORD)strtoul(argv[1], NULL, 10);
    int full = strcmp(argv[2], "full") == 0;
    HANDLE process = OpenProcess(PROCESS_QUERY_INFORMATION | PROCESS_VM_READ | PROCESS_DUP_HANDLE,
                                 FALSE, pid);
    if (process == NULL) {
        fprintf(stderr, "OpenProcess(%lu): error %lu\n", pid, GetLastError());
        return 1;
    }
    HANDLE file = CreateFileA(argv[3], GENERIC_READ | GENERIC_WRITE, 0, NULL, CREATE_ALWAYS,
                              FILE_ATTRIBUTE_NORMAL, NULL);
    if (file == INVALID_HANDLE_VALUE) {
        fprintf(stderr, "CreateFile(%s): error %lu\n", argv[3], GetLastError());
        return 1;
    }
    MINIDUMP_TYPE type = MiniDumpNormal;
    if (full)
        type = (MINIDUMP_TYPE)(MiniDumpWithFullMemory | MiniDumpWithHandleData |
                               MiniDumpWithFullMemoryInfo | MiniDumpWithThreadInfo |
                               MiniDumpWithUnloadedModules);
    BOOL ok = MiniDumpWriteDump(process, pid, file, type, NULL, NULL, NULL);
    if (!ok && full) {
        SetFilePointer(file, 0, NULL, FILE_BEGIN);
        SetEndOfFile(file);
        type = MiniDumpWithFullMemory;
        ok = MiniDumpWriteDump(process, pid, file, type, NULL, NULL, NULL);
    }
    if (!ok) {
        fprintf(stderr, "MiniDumpWriteDump(%lu, type %#x): error %lu\n", pid, (unsigned)type,
                GetLastError());
        CloseHandle(file);
        return 1;
    }
    CloseHandle(file);
    CloseHandle(process);
    printf("wrote %s dump (type %#x) of process %lu\n", argv[2], (unsigned)type, pid);
    return 0;
}
