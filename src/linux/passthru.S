/* The hooks' entry points (their contract with the routes is route.h). Each asks the runtime (a C
   call) what to do with the load; unless it handled it, the stub jumps into the real function with
   the caller's own arguments and return address, so the loader sees the real caller: its RPATH and
   RUNPATH, its $ORIGIN, its namespace. A C wrapper cannot promise this: at -O0 it calls, and glibc
   then takes the wrapper for the caller. */

/* PROPERTY_NOTE(type, features): the GNU property note (NT_GNU_PROPERTY_TYPE_0) that says which of
   the machine's branch protections the stubs keep; without it, linking them would drop the
   library's marking. */
.macro PROPERTY_NOTE type, features
	.section .note.gnu.property, "a"
	.p2align 3
	.long 4                       /* name size */
	.long 16                      /* descriptor size */
	.long 5                       /* NT_GNU_PROPERTY_TYPE_0 */
	.asciz "GNU"
	.long \type
	.long 4
	.long \features
	.p2align 3
.endm

#if defined(__x86_64__)

/* HOOK(name, route, real, args, glance): name(a, b, c) -> route(a, b, c, return address, &handle):
   ROUTE_HANDLED returns handle, ROUTE_PASS jumps to real(a, b, c). With a glance, glance(a) is
   asked first, and false jumps to real(a, b, c) at once: a call it turns away never pays for the
   route's frame. */
.macro HOOK name, route, real, args, glance
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
	.ifnb \glance
	call \glance                  /* %rdi is still a */
	test %al, %al                 /* bool: only the low byte is defined */
	jz 1f
	mov 24(%rsp), %rsi
	mov 32(%rsp), %rdi
	.endif
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

HOOK dlopen, route_dlopen, real_dlopen, 2, route_dlopen_glance
HOOK dlmopen, route_dlmopen, real_dlmopen, 3

.section .note.GNU-stack, "", @progbits

#ifdef __CET__
/* The stubs keep IBT (endbr64 above) and the shadow stack (they never touch a return address). */
PROPERTY_NOTE 0xc0000002, 3       /* GNU_PROPERTY_X86_FEATURE_1_AND: IBT | SHSTK */
#endif

#elif defined(__aarch64__)

/* HOOK(name, route, real, args, glance): name(a, b, c) -> route(a, b, c, return address, &handle),
   glance(a) asked first where there is one, as on x86-64. The caller's
   x0-x2 and the frame record (x29, x30) are saved; on a decline they are restored, so LR is the
   caller's return address again, and the stub branches to the real function through x16. The
   return address is never signed (PAC: nothing to authenticate, nothing changed), and x16 is a
   register through which `br` may enter a `bti c` landing pad, as libc's functions have under BTI. */
.macro HOOK name, route, real, args, glance
	.text
	.globl \name
	.type \name, %function
	.globl preload_hook_\name
	.hidden preload_hook_\name
	.p2align 4
\name:
preload_hook_\name:
	.cfi_startproc
	hint 34                       /* bti c: an indirect-call target under BTI (a no-op without) */
	stp x29, x30, [sp, #-48]!     /* frame record; x0-x2 and the handle slot above it */
	.cfi_def_cfa_offset 48
	.cfi_offset x29, -48
	.cfi_offset x30, -40
	mov x29, sp
	stp x0, x1, [sp, #16]
	str x2, [sp, #32]
	.ifnb \glance
	bl \glance                    /* x0 is still a */
	tst w0, #0xff                 /* bool: only the low byte is defined */
	b.eq 1f
	ldp x0, x1, [sp, #16]
	.endif
	.if \args == 2
	ldr x2, [sp, #8]              /* the caller's return address, as saved (bl changed x30) */
	add x3, sp, #40
	.else
	ldr x3, [sp, #8]
	add x4, sp, #40
	.endif
	bl \route
	tst w0, #0xff                 /* bool: only the low byte is defined */
	b.eq 1f
	ldr x0, [sp, #40]
	ldp x29, x30, [sp], #48
	.cfi_remember_state
	.cfi_def_cfa_offset 0
	.cfi_restore x29
	.cfi_restore x30
	ret
	.cfi_restore_state
1:	ldp x0, x1, [sp, #16]
	ldr x2, [sp, #32]
	ldp x29, x30, [sp], #48
	.cfi_def_cfa_offset 0
	.cfi_restore x29
	.cfi_restore x30
	adrp x16, \real
	ldr x16, [x16, #:lo12:\real]
	br x16
	.cfi_endproc
	.size \name, .-\name
.endm

HOOK dlopen, route_dlopen, real_dlopen, 2, route_dlopen_glance
HOOK dlmopen, route_dlmopen, real_dlmopen, 3

.section .note.GNU-stack, "", %progbits

#if defined(__ARM_FEATURE_BTI_DEFAULT) || defined(__ARM_FEATURE_PAC_DEFAULT)
/* The stubs keep BTI (bti c above, br through x16) and PAC (the return address is never touched):
   with -mbranch-protection, say so, or linking them would drop the library's marking. */
#if defined(__ARM_FEATURE_BTI_DEFAULT)
#define STUB_FEATURE_BTI 1
#else
#define STUB_FEATURE_BTI 0
#endif
#if defined(__ARM_FEATURE_PAC_DEFAULT)
#define STUB_FEATURE_PAC 2
#else
#define STUB_FEATURE_PAC 0
#endif
PROPERTY_NOTE 0xc0000000, STUB_FEATURE_BTI | STUB_FEATURE_PAC /* GNU_PROPERTY_AARCH64_FEATURE_1_AND */
#endif

#else
#error "passthru.S: no tail-jump stub for this architecture (x86-64 and aarch64 only)"
#endif
