//! What a cubin's ELF header says about the device that can run it, read before the
//! driver is asked to load it: a cubin it refuses costs a failed driver call
//! (CUDA_ERROR_NO_BINARY_FOR_GPU), which compute-sanitizer reports as an API error even
//! though [`crate::Module`] then falls back to the PTX beside it.

/// `e_machine` of a CUDA ELF image.
const EM_CUDA: u16 = 190;
/// `e_ident[EI_OSABI]` and `[EI_ABIVERSION]` of the ABI whose `e_flags` hold the SM in bits
/// 0 to 7 (CUDA 12's NVRTC, below sm_100).
const ABI_V1: (u8, u8) = (0x33, 7);
/// The same of the ABI whose `e_flags` hold the SM in bits 8 to 15 (CUDA 13's NVRTC for
/// every SM, CUDA 12's from sm_100).
const ABI_V2: (u8, u8) = (0x41, 8);

/// The SM a cubin's SASS was assembled for (`90` for sm_90 and sm_90a), or None where the
/// bytes are no 64-bit little-endian CUDA ELF header of a known ABI version.
pub(crate) fn sass_sm(cubin: &[u8]) -> Option<u32> {
    let header = cubin.get(..64)?;
    let is_elf64_le = header[..4] == *b"\x7fELF" && header[4] == 2 && header[5] == 1;
    let machine = u16::from_le_bytes([header[18], header[19]]);
    if !is_elf64_le || machine != EM_CUDA {
        return None;
    }
    let flags = u32::from_le_bytes(header[48..52].try_into().ok()?);
    match (header[7], header[8]) {
        ABI_V1 => Some(flags & 0xff),
        ABI_V2 => Some((flags >> 8) & 0xff),
        _ => None,
    }
}

/// False where the cubin's header shows that a device of compute capability
/// `(major, minor)` cannot run it: SASS of sm_XY runs on devices X.Z with Z >= Y only.
/// True otherwise, also where the header cannot be read: the driver then decides (an
/// architecture-specific sm_XYa or family image is held to its own rule there).
pub(crate) fn may_run_on(cubin: &[u8], (major, minor): (i32, i32)) -> bool {
    let Some(sm) = sass_sm(cubin) else {
        return true;
    };
    let (Ok(major), Ok(minor)) = (u32::try_from(major), u32::try_from(minor)) else {
        return true;
    };
    sm / 10 == major && sm % 10 <= minor
}

#[cfg(test)]
mod tests {
    use super::{may_run_on, sass_sm};
    use crate::compile::compile_cuda;

    /// A 64-byte ELF header of a CUDA cubin, with the ABI version and flags given (and the
    /// OS ABI byte NVRTC writes with that version: 0x33 with 7, 0x41 with 8).
    fn header(abi_version: u8, flags: u32) -> Vec<u8> {
        let osabi = if abi_version == 7 { 0x33 } else { 0x41 };
        let mut h = vec![0u8; 64];
        h[..9].copy_from_slice(&[0x7f, b'E', b'L', b'F', 2, 1, 1, osabi, abi_version]);
        h[16..18].copy_from_slice(&2u16.to_le_bytes()); // ET_EXEC
        h[18..20].copy_from_slice(&190u16.to_le_bytes());
        h[48..52].copy_from_slice(&flags.to_le_bytes());
        h
    }

    #[test]
    fn the_sm_is_read_where_each_abi_version_keeps_it() {
        // CUDA 13's NVRTC for sm_90: ABI 8, the SM (0x5a) in bits 8 to 15.
        assert_eq!(sass_sm(&header(8, 0x0600_5a04)), Some(90));
        // CUDA 12.9's for sm_90: OS ABI 0x33, ABI 7, the SM in bits 0 to 7, the virtual SM
        // in 16 to 23.
        assert_eq!(sass_sm(&header(7, 0x005a_055a)), Some(90));
        assert_eq!(sass_sm(&header(8, 0x0600_5004)), Some(80));
    }

    #[test]
    fn what_is_not_a_cuda_elf_header_is_not_read() {
        assert_eq!(sass_sm(&header(9, 0x0600_5a04)), None);
        // An OS ABI byte that is not its version's.
        let mut mixed = header(7, 0x005a_055a);
        mixed[7] = 0x41;
        assert_eq!(sass_sm(&mixed), None);
        assert_eq!(sass_sm(&header(8, 0x0600_5a04)[..63]), None);
        assert_eq!(sass_sm(b""), None);
        let mut x86 = header(8, 0x0600_5a04);
        x86[18..20].copy_from_slice(&62u16.to_le_bytes());
        assert_eq!(sass_sm(&x86), None);
        let mut big_endian = header(8, 0x0600_5a04);
        big_endian[5] = 2;
        assert_eq!(sass_sm(&big_endian), None);
    }

    #[test]
    fn sass_runs_on_its_major_version_at_its_minor_or_later() {
        let sm80 = header(8, 0x0600_5004);
        let sm86 = header(8, 0x0600_5604);
        assert!(may_run_on(&sm80, (8, 0)));
        assert!(may_run_on(&sm80, (8, 9)));
        assert!(!may_run_on(&sm86, (8, 0)));
        assert!(!may_run_on(&sm80, (9, 0)));
        assert!(!may_run_on(&header(8, 0x0600_5a04), (10, 0)));
        // Unreadable: the driver decides.
        assert!(may_run_on(b"not a cubin", (9, 0)));
    }

    /// The SM NVRTC was asked for is the one read back, for each ABI layout CUDA 13 writes
    /// (below and from sm_100). NVRTC only, no GPU; fails (never skips) without a toolkit,
    /// as runtime/tests/nvrtc.rs does.
    #[test]
    fn nvrtc_cubins_name_the_sm_they_were_compiled_for() {
        let source = "extern \"C\" __global__ void f(float *x) { x[threadIdx.x] += 1.0f; }";
        for (arch, sm) in [
            ("sm_80", 80),
            ("sm_86", 86),
            ("sm_90", 90),
            ("sm_90a", 90),
            ("sm_100", 100),
            ("sm_120", 120),
        ] {
            let compiled = compile_cuda(source, "f.cu", arch).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(sass_sm(&compiled.cubin), Some(sm), "{arch}");
        }
    }
}
