/* ELF constants newer than some C libraries' elf.h (glibc 2.36 has them, 2.32 does not): the
   runtime's reader of files and the inspector's libelf reader both check them. */
#ifndef NVI_LOADER_ELF_NEWER_H
#define NVI_LOADER_ELF_NEWER_H

#include <elf.h>

#ifndef DT_RELR
#define DT_RELRSZ 35
#define DT_RELR 36
#endif
#ifndef PT_GNU_PROPERTY
#define PT_GNU_PROPERTY 0x6474e553
#endif

#endif
