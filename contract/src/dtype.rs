//! Element types, as spelled in specs.

/// Element types, as spelled in specs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DType {
    F16,
    BF16,
    F32,
    F64,
    I8,
    U8,
    I16,
    U16,
    I32,
    U32,
    I64,
    U64,
    /// fp8 storage types.
    E4M3,
    E5M2,
}

impl DType {
    /// Every element type, in declaration order.
    pub const ALL: [DType; 14] = [
        DType::F16,
        DType::BF16,
        DType::F32,
        DType::F64,
        DType::I8,
        DType::U8,
        DType::I16,
        DType::U16,
        DType::I32,
        DType::U32,
        DType::I64,
        DType::U64,
        DType::E4M3,
        DType::E5M2,
    ];

    /// The type a spec spells `name`.
    pub fn parse(name: &str) -> Option<DType> {
        DType::ALL.into_iter().find(|d| d.name() == name)
    }

    /// The spelling used in specs and messages.
    pub const fn name(self) -> &'static str {
        match self {
            DType::F16 => "f16",
            DType::BF16 => "bf16",
            DType::F32 => "f32",
            DType::F64 => "f64",
            DType::I8 => "i8",
            DType::U8 => "u8",
            DType::I16 => "i16",
            DType::U16 => "u16",
            DType::I32 => "i32",
            DType::U32 => "u32",
            DType::I64 => "i64",
            DType::U64 => "u64",
            DType::E4M3 => "e4m3",
            DType::E5M2 => "e5m2",
        }
    }

    /// Size of one element in bytes.
    pub const fn size(self) -> usize {
        match self {
            DType::I8 | DType::U8 | DType::E4M3 | DType::E5M2 => 1,
            DType::F16 | DType::BF16 | DType::I16 | DType::U16 => 2,
            DType::F32 | DType::I32 | DType::U32 => 4,
            DType::F64 | DType::I64 | DType::U64 => 8,
        }
    }

    /// Integer types can appear in constraints.
    pub const fn is_integer(self) -> bool {
        self.int_range().is_some()
    }

    /// The least and greatest value of an integer type; `None` for the others.
    pub const fn int_range(self) -> Option<(i128, i128)> {
        Some(match self {
            DType::I8 => (i8::MIN as i128, i8::MAX as i128),
            DType::U8 => (0, u8::MAX as i128),
            DType::I16 => (i16::MIN as i128, i16::MAX as i128),
            DType::U16 => (0, u16::MAX as i128),
            DType::I32 => (i32::MIN as i128, i32::MAX as i128),
            DType::U32 => (0, u32::MAX as i128),
            DType::I64 => (i64::MIN as i128, i64::MAX as i128),
            DType::U64 => (0, u64::MAX as i128),
            _ => return None,
        })
    }

    /// Whether `v` is a value of this type (never, for a float type).
    pub const fn holds(self, v: i64) -> bool {
        match self.int_range() {
            Some((lo, hi)) => lo <= v as i128 && v as i128 <= hi,
            None => false,
        }
    }
}

impl std::fmt::Display for DType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::DType;

    #[test]
    fn every_name_parses_back() {
        for d in DType::ALL {
            assert_eq!(DType::parse(d.name()), Some(d));
            assert_eq!(d.to_string(), d.name());
        }
        assert_eq!(DType::parse("f8"), None);
    }

    #[test]
    fn integer_ranges_are_the_rust_types() {
        assert_eq!(DType::I8.int_range(), Some((-128, 127)));
        assert_eq!(DType::U32.int_range(), Some((0, 4_294_967_295)));
        assert_eq!(DType::F16.int_range(), None);
        assert!(DType::I32.holds(-1) && !DType::U32.holds(-1) && DType::U64.holds(i64::MAX));
        assert!(!DType::U8.holds(256) && !DType::F32.holds(0));
    }
}
