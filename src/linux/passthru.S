/* The hooks' entry points (their contract with the routes is route.h). Each asks the runtime (a C
   call) what to do with the load; unless it handled it, the stub jumps into the real function with
   the caller's own arguments and return address, so the loader sees the real caller: its RPATH and
   RUNPATH, its $ORIGIN, its namespace. A C wrapper cannot promise this: at -O0 it calls, and glibc
   then takes the wrapper for the caller. */

#if defined(__x86_64__)

/* HOOK(name, route, real): name(a, b, c) -> route(a, b, c, return address, &handle):
   ROUTE_HANDLED returns handle, ROUTE_PASS jumps to real(a, b, c). */
.macro HOOK name, route, real, args
	.text
	.globl \name
	.type \name, @function
	.globl preload_hook_\name
	.hidden preload_hook_\name
	.p2align 4
\name:
preload_hook_\name:
	.cfi_startproc
#ifdef __CET__
	endbr64                       /* an indirect-branch target under IBT */
#endif
	push %rdi
	.cfi_adjust_cfa_offset 8
	push %rsi
	.cfi_adjust_cfa_offset 8
	push %rdx
	.cfi_adjust_cfa_offset 8
	sub $16, %rsp                 /* the handle slot; keeps the stack 16-byte aligned */
	.cfi_adjust_cfa_offset 16
	.if \args == 2
	mov 40(%rsp), %rdx            /* the caller's return address */
	mov %rsp, %rcx
	.else
	mov 40(%rsp), %rcx
	mov %rsp, %r8
	.endif
	call \route
	cmp $1, %eax                  /* ROUTE_HANDLED */
	jne 1f
	mov (%rsp), %rax
	add $40, %rsp
	.cfi_adjust_cfa_offset -40
	ret
	.cfi_adjust_cfa_offset 40
1:	mov 16(%rsp), %rdx
	mov 24(%rsp), %rsi
	mov 32(%rsp), %rdi
	add $40, %rsp
	.cfi_adjust_cfa_offset -40
	jmp *\real(%rip)
	.cfi_endproc
	.size \name, .-\name
.endm

HOOK dlopen, route_dlopen, real_dlopen, 2
HOOK dlmopen, route_dlmopen, real_dlmopen, 3

.section .note.GNU-stack, "", @progbits

#ifdef __CET__
/* The stubs keep IBT (endbr64 above) and the shadow stack (they never touch a return address):
   say so, or linking them would drop the library's CET marking. */
	.section .note.gnu.property, "a"
	.p2align 3
	.long 4                       /* name size */
	.long 16                      /* descriptor size */
	.long 5                       /* NT_GNU_PROPERTY_TYPE_0 */
	.asciz "GNU"
	.long 0xc0000002              /* GNU_PROPERTY_X86_FEATURE_1_AND */
	.long 4
	.long 3                       /* IBT | SHSTK */
	.p2align 3
#endif

#else
#error "passthru.S: no tail-jump stub for this architecture yet (x86-64 only; aarch64 needs a tested one)"
#endif
