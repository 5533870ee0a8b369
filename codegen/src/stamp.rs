//! `imac.stamp`: what generated a crate (imac's version, the spec and its hash, the
//! options), so that `imac check --vendored` can tell when a copy has drifted.
//!
//! The file is a few `key = "value"` lines, valid TOML, written and read here.

use crate::runtime_dep::RuntimeDep;

/// The stamp's file name, at the generated crate's root.
pub const FILE: &str = "imac.stamp";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stamp {
    pub imac: String,
    /// The spec as named on the command line.
    pub spec: String,
    pub spec_hash: String,
    pub runtime: RuntimeDep,
    /// Architectures whose PTX the crate carries.
    pub archs: Vec<String>,
    /// Whether the crate is a Python package too (`--python`); a stamp says so only then.
    pub python: bool,
    /// Every file the generation wrote, this one too, so that the next one removes those
    /// it does not write (`package::write_crate`); empty in a stamp of an imac before it.
    pub files: Vec<String>,
}

/// FNV-1a, 64 bits: stable across platforms and Rust versions, unlike std's hashers.
pub fn hash(text: &str) -> String {
    let h = text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("fnv1a64:{h:016x}")
}

impl Stamp {
    pub fn render(&self) -> String {
        let (runtime_key, runtime) = match &self.runtime {
            RuntimeDep::Path(p) => ("runtime-path", p),
            RuntimeDep::Version(v) => ("runtime-version", v),
        };
        format!(
            "# Written by imac: what generated this crate. `imac check --vendored DIR SPEC`\n\
             # compares it, and the crate's files, with the spec.\n\
             imac = {:?}\n\
             spec = {:?}\n\
             spec-hash = {:?}\n\
             {runtime_key} = {runtime:?}\n\
             arch = {:?}\n\
             {}\
             files = {:?}\n",
            self.imac,
            self.spec,
            self.spec_hash,
            self.archs.join(","),
            if self.python {
                "python = \"yes\"\n"
            } else {
                ""
            },
            self.files.join(","),
        )
    }

    /// Reads a stamp that [`Stamp::render`] wrote.
    pub fn parse(text: &str) -> Result<Stamp, String> {
        let mut values = std::collections::HashMap::new();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let (key, value) = line
                .split_once(" = ")
                .and_then(|(k, v)| Some((k, unquote(v)?)))
                .ok_or_else(|| format!("line {}: expected `key = \"value\"`", n + 1))?;
            values.insert(key, value);
        }
        let python = match values.remove("python").as_deref() {
            None => false,
            Some("yes") => true,
            Some(other) => {
                return Err(format!("`python = {other:?}`: expected \"yes\" or no line"));
            }
        };
        let files = (values.remove("files").unwrap_or_default().split(','))
            .filter(|f| !f.is_empty())
            .map(str::to_string)
            .collect();
        let mut take = |key: &str| values.remove(key).ok_or_else(|| format!("no `{key}`"));
        let runtime = match (take("runtime-path"), take("runtime-version")) {
            (Ok(p), _) => RuntimeDep::Path(p),
            (_, Ok(v)) => RuntimeDep::Version(v),
            _ => return Err("no `runtime-path` or `runtime-version`".into()),
        };
        Ok(Stamp {
            imac: take("imac")?,
            spec: take("spec")?,
            spec_hash: take("spec-hash")?,
            runtime,
            archs: take("arch")?
                .split(',')
                .filter(|a| !a.is_empty())
                .map(str::to_string)
                .collect(),
            python,
            files,
        })
    }
}

/// The string of a `"..."` literal as `{:?}` writes it: `\\`, `\"`, `\'`, `\n`, `\r`,
/// `\t`, `\0` and `\u{...}` (a path's no-break space is written so); `None` for anything
/// else.
fn unquote(literal: &str) -> Option<String> {
    let inner = literal.strip_prefix('"')?.strip_suffix('"')?;
    let mut out = String::new();
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.push(match chars.next()? {
                c @ ('\\' | '"' | '\'') => c,
                'n' => '\n',
                'r' => '\r',
                't' => '\t',
                '0' => '\0',
                'u' => {
                    let rest = chars.as_str().strip_prefix('{')?;
                    let (hex, after) = rest.split_once('}')?;
                    let c = char::from_u32(u32::from_str_radix(hex, 16).ok()?)?;
                    chars = after.chars();
                    c
                }
                _ => return None,
            }),
            '"' => return None,
            c => out.push(c),
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rendered_stamp_parses_back() {
        let stamp = Stamp {
            imac: "0.1.0".into(),
            // A no-break space, which `{:?}` writes as `\u{a0}`.
            spec: "specs/a \"b\"\\c\u{a0}d.ima".into(),
            spec_hash: hash("kernel"),
            runtime: RuntimeDep::Path("../../runtime".into()),
            archs: vec!["sm_80".into(), "sm_90".into()],
            python: false,
            files: vec!["Cargo.toml".into(), "imac.stamp".into()],
        };
        assert_eq!(Stamp::parse(&stamp.render()), Ok(stamp.clone()));
        let python = Stamp {
            python: true,
            ..stamp
        };
        assert!(python.render().ends_with(
            "arch = \"sm_80,sm_90\"\npython = \"yes\"\nfiles = \"Cargo.toml,imac.stamp\"\n"
        ));
        assert_eq!(Stamp::parse(&python.render()), Ok(python));
        // A stamp of an imac that listed no files lists none.
        let before = "imac = \"0.1.0\"\nspec = \"k.ima\"\nspec-hash = \"h\"\nruntime-version = \"0.1\"\narch = \"\"\n";
        assert_eq!(Stamp::parse(before).map(|s| s.files), Ok(Vec::new()));
    }

    #[test]
    fn a_stamp_missing_a_key_is_an_error() {
        let err = Stamp::parse("imac = \"0.1.0\"\nruntime-version = \"0.1\"\n").unwrap_err();
        assert_eq!(err, "no `spec`");
    }
}
