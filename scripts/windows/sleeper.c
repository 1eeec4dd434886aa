/* A process that is not a JVM, for the Windows tests under Wine: prints its Windows pid
 * ("PID <n>"), then sleeps until its standard input closes (or 120 s). */
#include <stdio.h>
#include <windows.h>

int main(void)
{
    printf("PID %lu\n", GetCurrentProcessId());
    fflush(stdout);
    DWORD got;
    char c;
    HANDLE in = GetStdHandle(STD_INPUT_HANDLE);
    DWORD start = GetTickCount();
    while (ReadFile(in, &c, 1, &got, NULL) && got == 1 && GetTickCount() - start < 120000)
        ;
    return 0;
}
