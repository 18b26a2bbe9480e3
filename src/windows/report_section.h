/* How the launcher's --report names the program it started (platform_reports_for, platform.h):
   the launcher with pid L sets NVINTERPOSE_REPORT=L and writes its program's pid, a DWORD, at the
   start of the section of this name, which it holds open until the program ends. */
#pragma once

#define REPORT_SECTION_FORMAT L"Local\\nvinterpose-report-%lu"
#define REPORT_SECTION_NAME_MAX 64
