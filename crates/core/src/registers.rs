//! The registers a stack walk starts from when a thread has no frame anchor (it was stopped
//! while running Java code): its pc, stack pointer, frame pointer and the interpreter's bcp
//! register, decoded from the kernel's general-purpose register set of a thread.
//!
//! Both sources hand over the same layout, the kernel's `user_regs_struct`:
//! `PTRACE_GETREGS` of a live thread held in ptrace-stop, and the `pr_reg` field of an
//! `NT_PRSTATUS` note (`struct elf_prstatus`, `include/uapi/linux/elfcore.h`) of a core.
//!
//! * x86_64 (`arch/x86/include/asm/user_64.h`): 27 words `r15 r14 r13 r12 rbp rbx r11 r10 r9
//!   r8 rax rcx rdx rsi rdi orig_rax rip cs eflags rsp ss fs_base gs_base ds es fs gs`. HotSpot's
//!   template interpreter keeps the bcp in `r13` (`rbcp`, `cpu/x86/register_x86.hpp`
//!   `interpreter`/`templateTable_x86.cpp`) and the frame pointer in `rbp`.
//! * aarch64 (`arch/arm64/include/uapi/asm/ptrace.h` `user_pt_regs`): 34 words `x0..x30 sp pc
//!   pstate`; the frame pointer is `x29`, the link register `x30`, and the interpreter's bcp is
//!   `x22` (`rbcp`, `cpu/aarch64/register_aarch64.hpp`).
//!
//! A Windows minidump gives each thread's `CONTEXT` instead (Microsoft's `winnt.h`, the AMD64
//! `CONTEXT` that `GetThreadContext` fills and `MiniDumpWriteDump` stores in the
//! `ThreadListStream`; the `minidump` crate's `CONTEXT_AMD64`): `Rip`, `Rsp`, `Rbp`, `R13`, the
//! same registers by name (HotSpot's x86_64 interpreter keeps its bcp in `r13` on Windows too).

use goblin::elf::header::{EM_AARCH64, EM_X86_64};

/// The target's CPU architecture: it decides the registers' names and the frame layouts
/// HotSpot's tables do not export (`cpu/x86/frame_x86.hpp`, `cpu/aarch64/frame_aarch64.hpp`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum Arch {
    /// x86-64 (Linux, Windows).
    X86_64,
    /// AArch64 (Linux).
    Aarch64,
}

impl Arch {
    /// The architecture this build runs on: a live target's (`None` on another CPU).
    pub fn host() -> Option<Arch> {
        if cfg!(target_arch = "x86_64") {
            Some(Arch::X86_64)
        } else if cfg!(target_arch = "aarch64") {
            Some(Arch::Aarch64)
        } else {
            None
        }
    }

    /// The architecture of an ELF `e_machine` (`EM_X86_64`, `EM_AARCH64`); `None` for others.
    pub fn from_elf_machine(machine: u16) -> Option<Arch> {
        match machine {
            EM_X86_64 => Some(Arch::X86_64),
            EM_AARCH64 => Some(Arch::Aarch64),
            _ => None,
        }
    }
}

/// The registers of one stopped thread that a Java stack walk uses. Addresses in the target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub struct ThreadRegisters {
    /// The program counter (`rip`, `pc`).
    pub pc: u64,
    /// The stack pointer (`rsp`, `sp`).
    pub sp: u64,
    /// The frame pointer (`rbp`, `x29`).
    pub fp: u64,
    /// The template interpreter's bytecode pointer register (`r13`, `x22`): the current bcp of
    /// an interpreted top frame (the frame's bcp slot is only written at calls).
    pub bcp: u64,
    /// The link register (`x30`) on aarch64; `None` on x86_64, whose return address is on the
    /// stack.
    pub lr: Option<u64>,
}

impl ThreadRegisters {
    /// Decodes a `user_regs_struct` of machine `machine` (`EM_X86_64` or `EM_AARCH64`) given as
    /// its 64-bit words in order; `None` for another machine or too few words.
    pub fn from_user_regs(machine: u16, words: &[u64]) -> Option<Self> {
        match machine {
            EM_X86_64 if words.len() >= 27 => Some(ThreadRegisters {
                pc: words[16],
                sp: words[19],
                fp: words[4],
                bcp: words[2],
                lr: None,
            }),
            EM_AARCH64 if words.len() >= 34 => Some(ThreadRegisters {
                pc: words[32],
                sp: words[31],
                fp: words[29],
                bcp: words[22],
                lr: Some(words[30]),
            }),
            _ => None,
        }
    }
}

/// `CONTEXT_AMD64` in a `CONTEXT`'s `ContextFlags` (`winnt.h`): the record is an x64 one.
const CONTEXT_AMD64: u32 = 0x0010_0000;
/// `CONTEXT_CONTROL` (`winnt.h`, x64): `SegSs`, `Rsp`, `SegCs`, `Rip` and `EFlags` are valid.
const CONTEXT_CONTROL: u32 = CONTEXT_AMD64 | 0x1;
/// `CONTEXT_INTEGER` (`winnt.h`, x64): `Rax` to `R15`, `Rbp` among them, are valid.
const CONTEXT_INTEGER: u32 = CONTEXT_AMD64 | 0x2;

impl ThreadRegisters {
    /// Decodes an x64 `CONTEXT` (Microsoft's `winnt.h`; the `minidump` crate's `CONTEXT_AMD64`)
    /// as `GetThreadContext` and a minidump's `ThreadListStream` give it; `None` unless its
    /// `ContextFlags` say the control and integer registers were captured (`CONTEXT_CONTROL |
    /// CONTEXT_INTEGER`).
    pub fn from_amd64_context(ctx: &minidump::format::CONTEXT_AMD64) -> Option<Self> {
        let needed = CONTEXT_CONTROL | CONTEXT_INTEGER;
        (ctx.context_flags & needed == needed).then_some(ThreadRegisters {
            pc: ctx.rip,
            sp: ctx.rsp,
            fp: ctx.rbp,
            bcp: ctx.r13,
            lr: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn x86_64_user_regs_name_their_slots() {
        let words: Vec<u64> = (0..27).collect();
        let r = ThreadRegisters::from_user_regs(EM_X86_64, &words).unwrap();
        assert_eq!((r.pc, r.sp, r.fp, r.bcp, r.lr), (16, 19, 4, 2, None));
    }

    #[test]
    fn aarch64_user_regs_name_their_slots() {
        let words: Vec<u64> = (0..34).collect();
        let r = ThreadRegisters::from_user_regs(EM_AARCH64, &words).unwrap();
        assert_eq!((r.pc, r.sp, r.fp, r.bcp, r.lr), (32, 31, 29, 22, Some(30)));
    }

    #[test]
    fn amd64_contexts_name_their_registers_and_need_control_and_integer() {
        let mut ctx = minidump::format::CONTEXT_AMD64 {
            context_flags: 0x0010_0003,
            rip: 1,
            rsp: 2,
            rbp: 3,
            r13: 4,
            r12: 5,
            rax: 6,
            ..Default::default()
        };
        let r = ThreadRegisters::from_amd64_context(&ctx).unwrap();
        assert_eq!((r.pc, r.sp, r.fp, r.bcp, r.lr), (1, 2, 3, 4, None));
        for partial in [0x0010_0001, 0x0010_0002, 0x3, 0] {
            ctx.context_flags = partial;
            assert_eq!(ThreadRegisters::from_amd64_context(&ctx), None);
        }
    }

    #[test]
    fn short_or_foreign_register_sets_are_refused() {
        assert_eq!(ThreadRegisters::from_user_regs(EM_X86_64, &[0; 26]), None);
        assert_eq!(ThreadRegisters::from_user_regs(EM_AARCH64, &[0; 33]), None);
        assert_eq!(ThreadRegisters::from_user_regs(3, &[0; 40]), None);
    }
}
