/* The forwarder's dlopen and dlmopen: one indirect jump into libc's, with the caller's own
   arguments and return address (so the loader sees the real caller, as with the runtime's stubs). */

#if defined(__x86_64__)

.macro FORWARD name, real
	.text
	.globl \name
	.type \name, @function
	.p2align 4
\name:
	.cfi_startproc
#ifdef __CET__
	endbr64
#endif
	jmp *\real(%rip)
	.cfi_endproc
	.size \name, .-\name
.endm

FORWARD dlopen, forwarder_real_dlopen
FORWARD dlmopen, forwarder_real_dlmopen

.section .note.GNU-stack, "", @progbits

#else
#error "forwarder.S: x86-64 only"
#endif
