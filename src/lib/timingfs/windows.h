/*
 * timingfs/windows.h: the Windows timing APIs on Linux, answered from a
 * timingfs mount (libtimingfs), for code ported from Windows.
 *
 * The functions have the signatures and semantics of kernel32's:
 * QueryThreadCycleTime, QueryProcessCycleTime, QueryIdleProcessorCycleTime
 * (the caller's group), QueryIdleProcessorCycleTimeEx, GetProcessTimes,
 * GetThreadTimes, GetActiveProcessorGroupCount, GetCurrentProcess,
 * GetCurrentThread, OpenProcess, OpenThread, CloseHandle, GetLastError.
 * They return FALSE (NULL, 0) on failure with the reason in the calling
 * thread's GetLastError(): ERROR_INVALID_HANDLE for a closed, unknown or
 * wrong kind of handle, ERROR_ACCESS_DENIED for a task the caller may
 * not see, ERROR_INVALID_PARAMETER for no such task or group, and
 * ERROR_INSUFFICIENT_BUFFER with the size needed in *BufferLength (bytes)
 * when the buffer is NULL or too small.
 *
 * A HANDLE is an open directory of the task in the mount, so it names
 * that task instance as a Windows handle does: after it exits, its final
 * times and exit time (for as long as the daemon keeps them), never
 * those of a task that took its number. The mount is $TIMINGFS_MOUNT,
 * else /run/timingfs, opened at the first call.
 *
 * The symbols are tfs-prefixed (tfsQueryThreadCycleTime, ...); this
 * header maps the Windows names to them unless TIMINGFS_NO_WINDOWS_NAMES
 * is defined (winelib code that keeps kernel32's). The Windows types are
 * declared only where no windows.h did; include this header after it.
 */
#ifndef TIMINGFS_WINDOWS_H
#define TIMINGFS_WINDOWS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if !defined(_WINDEF_) && !defined(_WINNT_) && !defined(_MINWINDEF_) && \
	!defined(__WINESRC__) && !defined(_WINDOWS_) &&                 \
	!defined(TIMINGFS_WINDOWS_TYPES)
#define TIMINGFS_WINDOWS_TYPES 1
typedef int BOOL;
typedef unsigned char BYTE;
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
} FILETIME, *PFILETIME, *LPFILETIME;
#ifndef WINAPI
#define WINAPI
#endif
#ifndef TRUE
#define TRUE 1
#endif
#ifndef FALSE
#define FALSE 0
#endif
#endif

#ifndef ERROR_SUCCESS
#define ERROR_SUCCESS 0L
#endif
#ifndef ERROR_FILE_NOT_FOUND
#define ERROR_FILE_NOT_FOUND 2L
#endif
#ifndef ERROR_TOO_MANY_OPEN_FILES
#define ERROR_TOO_MANY_OPEN_FILES 4L
#endif
#ifndef ERROR_ACCESS_DENIED
#define ERROR_ACCESS_DENIED 5L
#endif
#ifndef ERROR_INVALID_HANDLE
#define ERROR_INVALID_HANDLE 6L
#endif
#ifndef ERROR_NOT_ENOUGH_MEMORY
#define ERROR_NOT_ENOUGH_MEMORY 8L
#endif
#ifndef ERROR_GEN_FAILURE
#define ERROR_GEN_FAILURE 31L
#endif
#ifndef ERROR_INVALID_PARAMETER
#define ERROR_INVALID_PARAMETER 87L
#endif
#ifndef ERROR_INSUFFICIENT_BUFFER
#define ERROR_INSUFFICIENT_BUFFER 122L
#endif
#ifndef PROCESS_QUERY_INFORMATION
#define PROCESS_QUERY_INFORMATION 0x0400
#endif
#ifndef PROCESS_QUERY_LIMITED_INFORMATION
#define PROCESS_QUERY_LIMITED_INFORMATION 0x1000
#endif
#ifndef THREAD_QUERY_INFORMATION
#define THREAD_QUERY_INFORMATION 0x0040
#endif
#ifndef THREAD_QUERY_LIMITED_INFORMATION
#define THREAD_QUERY_LIMITED_INFORMATION 0x0800
#endif

#if defined(__GNUC__) && defined(TIMINGFS_BUILDING)
#define TFS_WINAPI __attribute__((visibility("default")))
#else
#define TFS_WINAPI
#endif

TFS_WINAPI BOOL tfsQueryThreadCycleTime(HANDLE ThreadHandle,
					PULONG64 CycleTime);
TFS_WINAPI BOOL tfsQueryProcessCycleTime(HANDLE ProcessHandle,
					 PULONG64 CycleTime);
TFS_WINAPI BOOL tfsQueryIdleProcessorCycleTime(PULONG BufferLength,
					       PULONG64 ProcessorIdleCycleTime);
TFS_WINAPI BOOL tfsQueryIdleProcessorCycleTimeEx(
	USHORT Group, PULONG BufferLength, PULONG64 ProcessorIdleCycleTime);
TFS_WINAPI BOOL tfsGetProcessTimes(HANDLE hProcess, LPFILETIME lpCreationTime,
				   LPFILETIME lpExitTime,
				   LPFILETIME lpKernelTime,
				   LPFILETIME lpUserTime);
TFS_WINAPI BOOL tfsGetThreadTimes(HANDLE hThread, LPFILETIME lpCreationTime,
				  LPFILETIME lpExitTime,
				  LPFILETIME lpKernelTime,
				  LPFILETIME lpUserTime);
TFS_WINAPI WORD tfsGetActiveProcessorGroupCount(void);
TFS_WINAPI HANDLE tfsGetCurrentProcess(void);
TFS_WINAPI HANDLE tfsGetCurrentThread(void);
TFS_WINAPI HANDLE tfsOpenProcess(DWORD dwDesiredAccess, BOOL bInheritHandle,
				 DWORD dwProcessId);
TFS_WINAPI HANDLE tfsOpenThread(DWORD dwDesiredAccess, BOOL bInheritHandle,
				DWORD dwThreadId);
TFS_WINAPI BOOL tfsCloseHandle(HANDLE hObject);
TFS_WINAPI DWORD tfsGetLastError(void);
TFS_WINAPI void tfsSetLastError(DWORD dwErrCode);

#ifndef TIMINGFS_NO_WINDOWS_NAMES
#define QueryThreadCycleTime tfsQueryThreadCycleTime
#define QueryProcessCycleTime tfsQueryProcessCycleTime
#define QueryIdleProcessorCycleTime tfsQueryIdleProcessorCycleTime
#define QueryIdleProcessorCycleTimeEx tfsQueryIdleProcessorCycleTimeEx
#define GetProcessTimes tfsGetProcessTimes
#define GetThreadTimes tfsGetThreadTimes
#define GetActiveProcessorGroupCount tfsGetActiveProcessorGroupCount
#define GetCurrentProcess tfsGetCurrentProcess
#define GetCurrentThread tfsGetCurrentThread
#define OpenProcess tfsOpenProcess
#define OpenThread tfsOpenThread
#define CloseHandle tfsCloseHandle
#define GetLastError tfsGetLastError
#define SetLastError tfsSetLastError
#endif

#ifdef __cplusplus
}
#endif

#endif
