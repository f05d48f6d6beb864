/*
 * winelib-guard: <timingfs/windows.h> beside a windows.h that declared
 * the types and kernel32's own functions first, as in a winelib build:
 * compiled only (t/t2400), with and without the Windows names mapped
 * (-DTIMINGFS_NO_WINDOWS_NAMES), as C and as C++.
 */
#define _WINDEF_ /* what windows.h (Wine's, mingw's) defines */
typedef int BOOL;
typedef unsigned short WORD;
typedef unsigned short USHORT;
typedef unsigned int DWORD;
typedef unsigned int ULONG;
typedef unsigned long long ULONG64;
typedef ULONG *PULONG;
typedef ULONG64 *PULONG64;
typedef void *HANDLE;
typedef struct _FILETIME {
	DWORD dwLowDateTime;
	DWORD dwHighDateTime;
} FILETIME, *LPFILETIME;
#ifdef __cplusplus
extern "C" {
#endif
BOOL QueryThreadCycleTime(HANDLE ThreadHandle, PULONG64 CycleTime);
HANDLE GetCurrentThread(void);
#ifdef __cplusplus
}
#endif

#include <timingfs/windows.h>

int guard_main(void);
int guard_main(void)
{
	ULONG64 c;

#ifdef TIMINGFS_NO_WINDOWS_NAMES
	/* kernel32's names are kernel32's; ours are prefixed. */
	return tfsQueryThreadCycleTime(tfsGetCurrentThread(), &c) &&
	       QueryThreadCycleTime(GetCurrentThread(), &c);
#else
	return QueryThreadCycleTime(GetCurrentThread(), &c);
#endif
}
