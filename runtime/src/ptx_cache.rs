//! The PTX and SASS that [`crate::Module::compile`] gets from NVRTC, kept so that a module's
//! source is compiled once a process and once a machine: in memory, and on disk in the
//! user's cache directory. NVRTC takes tens of seconds on the larger generated modules (a
//! minute for specs/gemm_tma.ima's), which every process that loads them paid again; and
//! the SASS spares the driver compiling the PTX again when it loads it.
//!
//! An entry is found only by exact comparison of everything the PTX depends on (the
//! source, the file name that line info carries, the architecture, NVRTC's version and this
//! format's options), never by a hash alone, and the cache is best effort: an entry that
//! cannot be read, or is not the one asked for, is compiled again, and one that cannot be
//! written is left out (but for [`fill`], [`crate::Module::precompile`]'s, whose entry is
//! all it makes). Writes go to a temporary file renamed into place, so that processes that
//! share the directory never read a partial entry.
//!
//! `IMA_PTX_CACHE` names the directory; `off` (or an empty value) keeps the cache in
//! memory only. By default it is `$XDG_CACHE_HOME/imac/ptx`, else `$HOME/.cache/imac/ptx`.

use std::collections::HashMap;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

use crate::compile::Compiled;
use crate::error::Error;

/// What a module's PTX and SASS depend on besides NVRTC's fixed options (`compile_cuda`'s,
/// which [`FORMAT`] stands for).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Key<'a> {
    pub source: &'a str,
    pub file: &'a str,
    pub arch: &'a str,
    pub nvrtc: (i32, i32),
}

/// The entries' format and `compile_cuda`'s options: change it when either changes.
const FORMAT: &str = "imac-ptx-cache 2";

/// `key`'s PTX, SASS and NVRTC log: from memory, else from `dir`, else from `compile`, whose
/// result is then kept in both (a failed compile is not kept).
pub(crate) fn compiled(
    key: &Key<'_>,
    dir: Option<&Path>,
    compile: impl FnOnce() -> Result<Compiled, Error>,
) -> Result<Compiled, Error> {
    let id = key.id();
    if let Some(hit) = memory()
        .lock()
        .ok()
        .and_then(|m| m.get(&id).and_then(|e| e.get(key)))
    {
        return Ok(hit);
    }
    let stored = dir.and_then(|d| read(&d.join(entry_name(id)), key));
    let compiled = match stored {
        Some(c) => c,
        None => {
            let c = compile()?;
            if let Some(d) = dir {
                // Best effort: a process that cannot write the cache still loads its module.
                let _ = write(d, id, key, &c);
            }
            c
        }
    };
    if let Ok(mut m) = memory().lock() {
        m.insert(id, Entry::new(key, &compiled));
    }
    Ok(compiled)
}

/// Makes sure `dir` holds `key`'s entry, from `compile` where it does not, for another
/// process to read (so not from memory): the entry's path, or why it could not be written.
pub(crate) fn fill(
    key: &Key<'_>,
    dir: &Path,
    compile: impl FnOnce() -> Result<Compiled, Error>,
) -> Result<PathBuf, Error> {
    let id = key.id();
    let path = dir.join(entry_name(id));
    if read(&path, key).is_none() {
        write(dir, id, key, &compile()?).map_err(|e| Error::CacheWrite {
            file: key.file.to_string(),
            dir: dir.to_path_buf(),
            message: e.to_string(),
        })?;
    }
    Ok(path)
}

/// The directory `IMA_PTX_CACHE` names, or the default under the user's cache directory;
/// None where the cache is off or no directory is known.
pub(crate) fn dir() -> Option<PathBuf> {
    dir_from(|name| std::env::var_os(name))
}

fn dir_from(var: impl Fn(&str) -> Option<std::ffi::OsString>) -> Option<PathBuf> {
    match var("IMA_PTX_CACHE") {
        Some(v) if v.is_empty() || v == "off" => None,
        Some(v) => Some(PathBuf::from(v)),
        None => var("XDG_CACHE_HOME")
            .filter(|v| !v.is_empty())
            .map(|v| PathBuf::from(v).join("imac/ptx"))
            .or_else(|| var("HOME").map(|h| PathBuf::from(h).join(".cache/imac/ptx"))),
    }
}

/// An entry in memory: its key, owned, and its result.
struct Entry {
    source: String,
    file: String,
    arch: String,
    nvrtc: (i32, i32),
    compiled: Compiled,
}

impl Entry {
    fn new(key: &Key<'_>, compiled: &Compiled) -> Entry {
        Entry {
            source: key.source.to_string(),
            file: key.file.to_string(),
            arch: key.arch.to_string(),
            nvrtc: key.nvrtc,
            compiled: compiled.clone(),
        }
    }

    /// The result, if the entry is `key`'s (the id alone may collide).
    fn get(&self, key: &Key<'_>) -> Option<Compiled> {
        let mine = Key {
            source: &self.source,
            file: &self.file,
            arch: &self.arch,
            nvrtc: self.nvrtc,
        };
        (mine == *key).then(|| self.compiled.clone())
    }
}

fn memory() -> &'static Mutex<HashMap<u64, Entry>> {
    static MEMORY: OnceLock<Mutex<HashMap<u64, Entry>>> = OnceLock::new();
    MEMORY.get_or_init(Default::default)
}

/// FNV-1a over `parts`, each one's length first.
fn fnv(parts: &[&[u8]]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for &b in (part.len() as u64).to_le_bytes().iter().chain(*part) {
            h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    h
}

impl Key<'_> {
    /// A name for the entry's file and its slot in memory, not a proof that an entry is
    /// this key's.
    fn id(&self) -> u64 {
        fnv(&[
            FORMAT.as_bytes(),
            self.source.as_bytes(),
            self.file.as_bytes(),
            self.arch.as_bytes(),
            &self.nvrtc.0.to_le_bytes(),
            &self.nvrtc.1.to_le_bytes(),
        ])
    }
}

fn entry_name(id: u64) -> String {
    format!("{id:016x}.ptxc")
}

/// An entry's bytes: a header line with the format, NVRTC's version, a check of the log,
/// PTX and SASS (which the key cannot verify) and the lengths of the fields, then the fields
/// (file, arch, source, log, PTX, SASS) back to back.
fn encode(key: &Key<'_>, c: &Compiled) -> Vec<u8> {
    let fields: [&[u8]; 6] = [
        key.file.as_bytes(),
        key.arch.as_bytes(),
        key.source.as_bytes(),
        c.log.as_bytes(),
        c.ptx.as_bytes(),
        &c.cubin,
    ];
    let check = fnv(&fields[3..]);
    let mut header = format!("{FORMAT} {} {} {check}", key.nvrtc.0, key.nvrtc.1);
    for f in fields {
        header += &format!(" {}", f.len());
    }
    header.push('\n');
    let mut out = header.into_bytes();
    for f in fields {
        out.extend_from_slice(f);
    }
    out
}

/// The entry in `bytes`, if it is `key`'s.
fn decode(bytes: &[u8], key: &Key<'_>) -> Option<Compiled> {
    let end = bytes.iter().position(|&b| b == b'\n')?;
    let (header, mut rest) = (std::str::from_utf8(&bytes[..end]).ok()?, &bytes[end + 1..]);
    let header = header.strip_prefix(FORMAT)?.strip_prefix(' ')?;
    let numbers: Vec<u64> = header
        .split(' ')
        .map(|n| n.parse().ok())
        .collect::<Option<_>>()?;
    let [major, minor, check, lengths @ ..] = numbers.as_slice() else {
        return None;
    };
    let nvrtc = (i32::try_from(*major).ok()?, i32::try_from(*minor).ok()?);
    if lengths.len() != 6 || nvrtc != key.nvrtc {
        return None;
    }
    let mut fields = Vec::with_capacity(6);
    for &len in lengths {
        let len = usize::try_from(len).ok()?;
        let (field, after) = (rest.get(..len)?, rest.get(len..)?);
        fields.push(field);
        rest = after;
    }
    let [file, arch, source, log, ptx, cubin] = fields.as_slice() else {
        return None;
    };
    let whole = rest.is_empty() && fnv(&fields[3..]) == *check;
    let mine = *file == key.file.as_bytes()
        && *arch == key.arch.as_bytes()
        && *source == key.source.as_bytes();
    if !(whole && mine) {
        return None;
    }
    Some(Compiled {
        ptx: String::from_utf8(ptx.to_vec()).ok()?,
        cubin: cubin.to_vec(),
        log: String::from_utf8(log.to_vec()).ok()?,
    })
}

fn read(path: &Path, key: &Key<'_>) -> Option<Compiled> {
    decode(&fs::read(path).ok()?, key)
}

/// Writes the entry through a file of this call's own (the process's id and a count),
/// renamed into place; a failure leaves the cache as it was.
fn write(dir: &Path, id: u64, key: &Key<'_>, c: &Compiled) -> std::io::Result<()> {
    static WRITES: AtomicU64 = AtomicU64::new(0);
    let n = WRITES.fetch_add(1, Ordering::Relaxed);
    let tmp = dir.join(format!("{}.{}.{n}.tmp", entry_name(id), std::process::id()));
    let written = fs::create_dir_all(dir)
        .and_then(|()| fs::File::create(&tmp))
        .and_then(|mut f| f.write_all(&encode(key, c)))
        .and_then(|()| fs::rename(&tmp, dir.join(entry_name(id))));
    if written.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    written
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use proptest::prelude::*;

    use super::*;

    fn key<'a>(source: &'a str, file: &'a str) -> Key<'a> {
        Key {
            source,
            file,
            arch: "sm_90a",
            nvrtc: (13, 0),
        }
    }

    /// A result whose SASS has a newline, a NUL and bytes that are not UTF-8.
    fn result(ptx: &str) -> Compiled {
        Compiled {
            ptx: ptx.to_string(),
            cubin: b"\x7fELF\n\0\xff\xfe sass".to_vec(),
            log: "a warning\nover two lines".to_string(),
        }
    }

    #[test]
    fn an_entry_decodes_to_its_key_only() {
        let k = key("__global__ void f() {}\n", "a.ima");
        let bytes = encode(&k, &result(".entry f"));
        assert_eq!(decode(&bytes, &k), Some(result(".entry f")));
        for other in [
            key("__global__ void g() {}\n", "a.ima"),
            key("__global__ void f() {}\n", "b.ima"),
            Key {
                arch: "sm_80",
                ..k.clone()
            },
            Key {
                nvrtc: (12, 9),
                ..k.clone()
            },
        ] {
            assert_eq!(decode(&bytes, &other), None, "{other:?}");
        }
    }

    #[test]
    fn a_damaged_entry_is_a_miss() {
        let k = key("src", "a.ima");
        let bytes = encode(&k, &result(".entry f"));
        for cut in [0, 5, bytes.len() / 2, bytes.len() - 1] {
            assert_eq!(decode(&bytes[..cut], &k), None, "cut at {cut}");
        }
        let mut longer = bytes.clone();
        longer.push(b'x');
        assert_eq!(decode(&longer, &k), None);
        assert_eq!(decode(b"imac-ptx-cache 1 13 0 1 5 6 3 0 8\n", &k), None);
        // The PTX or the SASS changed in place, its length kept: the check refuses it.
        for (from, to) in [(&b".entry f"[..], &b".entry g"[..]), (b"sass", b"SASS")] {
            let at = bytes.windows(from.len()).position(|w| w == from).unwrap();
            let mut changed = bytes.clone();
            changed[at..at + to.len()].copy_from_slice(to);
            assert_eq!(decode(&changed, &k), None);
        }
    }

    #[test]
    fn a_module_compiles_once_a_directory_then_once_in_memory() {
        let dir = tempfile::tempdir().unwrap();
        let calls = Cell::new(0);
        let compile = || {
            calls.set(calls.get() + 1);
            Ok(result(".entry once"))
        };
        // A source of this test's own, so that no other test's entry in memory answers.
        let k = key(
            "// a_module_compiles_once_a_directory_then_once_in_memory\n",
            "t.ima",
        );
        assert_eq!(
            compiled(&k, Some(dir.path()), compile).unwrap(),
            result(".entry once")
        );
        assert_eq!(
            compiled(&k, Some(dir.path()), compile).unwrap(),
            result(".entry once")
        );
        assert_eq!(calls.get(), 1);
        // Another process: nothing in memory, the entry on disk.
        memory().lock().unwrap().clear();
        assert_eq!(
            compiled(&k, Some(dir.path()), compile).unwrap(),
            result(".entry once")
        );
        assert_eq!(calls.get(), 1);
        let names: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(
            names,
            [std::ffi::OsString::from(entry_name(k.id()))],
            "no temporary file left"
        );
    }

    #[test]
    fn a_failed_compile_is_not_kept() {
        let dir = tempfile::tempdir().unwrap();
        let k = key("// a_failed_compile_is_not_kept\n", "t.ima");
        let failed = || {
            Err(Error::Nvrtc {
                file: "t.ima".into(),
                log: "error".into(),
            })
        };
        assert!(compiled(&k, Some(dir.path()), failed).is_err());
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);
        assert_eq!(
            compiled(&k, Some(dir.path()), || Ok(result(".entry"))).unwrap(),
            result(".entry")
        );
    }

    #[test]
    fn an_unwritable_directory_still_compiles() {
        let dir = tempfile::tempdir().unwrap();
        // A file where the directory should be: create_dir_all fails.
        let blocked = dir.path().join("blocked");
        fs::write(&blocked, b"").unwrap();
        let k = key("// an_unwritable_directory_still_compiles\n", "t.ima");
        assert_eq!(
            compiled(&k, Some(&blocked.join("ptx")), || Ok(result(".entry"))).unwrap(),
            result(".entry")
        );
    }

    #[test]
    fn a_filled_entry_is_read_by_another_process_without_compiling() {
        let dir = tempfile::tempdir().unwrap();
        let calls = Cell::new(0);
        let compile = || {
            calls.set(calls.get() + 1);
            Ok(result(".entry ahead"))
        };
        let k = key(
            "// a_filled_entry_is_read_by_another_process_without_compiling\n",
            "t.ima",
        );
        let path = fill(&k, dir.path(), compile).unwrap();
        assert_eq!(path, dir.path().join(entry_name(k.id())));
        // Filled already: not compiled again.
        assert_eq!(fill(&k, dir.path(), compile).unwrap(), path);
        assert_eq!(calls.get(), 1);
        // The process that loads it: nothing in memory, never compiled.
        memory().lock().unwrap().clear();
        let loaded = compiled(&k, Some(dir.path()), || -> Result<Compiled, Error> {
            panic!("compiled again")
        });
        assert_eq!(loaded.unwrap(), result(".entry ahead"));
    }

    #[test]
    fn a_fill_that_cannot_write_says_where() {
        let dir = tempfile::tempdir().unwrap();
        let blocked = dir.path().join("blocked");
        fs::write(&blocked, b"").unwrap();
        let k = key("// a_fill_that_cannot_write_says_where\n", "t.ima");
        let err = fill(&k, &blocked.join("ptx"), || Ok(result(".entry"))).unwrap_err();
        assert!(
            matches!(&err, Error::CacheWrite { file, dir, .. } if file == "t.ima" && *dir == blocked.join("ptx")),
            "{err}"
        );
        let message = err.to_string();
        assert!(
            message.starts_with("cannot write the PTX and SASS of t.ima into ")
                && message.contains("blocked/ptx: "),
            "{message}"
        );
    }

    #[test]
    fn the_directory_follows_the_environment() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, v)| (*v).into())
            }
        };
        assert_eq!(
            dir_from(env(&[("IMA_PTX_CACHE", "/c"), ("HOME", "/h")])),
            Some("/c".into())
        );
        assert_eq!(
            dir_from(env(&[("IMA_PTX_CACHE", "off"), ("HOME", "/h")])),
            None
        );
        assert_eq!(
            dir_from(env(&[("IMA_PTX_CACHE", ""), ("HOME", "/h")])),
            None
        );
        assert_eq!(
            dir_from(env(&[("XDG_CACHE_HOME", "/x"), ("HOME", "/h")])),
            Some("/x/imac/ptx".into())
        );
        assert_eq!(
            dir_from(env(&[("XDG_CACHE_HOME", ""), ("HOME", "/h")])),
            Some("/h/.cache/imac/ptx".into())
        );
        assert_eq!(dir_from(env(&[])), None);
    }

    proptest! {
        /// An entry decodes to what was encoded, whatever its fields hold (the SASS any
        /// bytes); every shorter prefix of it is a miss.
        #[test]
        fn an_entry_round_trips_and_its_prefixes_are_misses(
            source in ".{0,40}",
            log in ".{0,40}",
            ptx in ".{0,40}",
            cubin in prop::collection::vec(any::<u8>(), 0..64),
            cut in any::<prop::sample::Index>(),
        ) {
            let k = key(&source, "t.ima");
            let c = Compiled { ptx, cubin, log };
            let bytes = encode(&k, &c);
            prop_assert_eq!(decode(&bytes, &k), Some(c));
            let cut = cut.index(bytes.len());
            prop_assert_eq!(decode(&bytes[..cut], &k), None);
        }

        /// A file that starts like an entry but holds anything after (lengths past the
        /// end, lengths near u64::MAX, bytes that are not UTF-8) decodes without panicking.
        #[test]
        fn any_bytes_after_the_format_decode_without_panicking(
            numbers in prop::collection::vec(prop_oneof![0u64..64, any::<u64>()], 0..10),
            body in prop::collection::vec(any::<u8>(), 0..128),
        ) {
            let mut bytes = FORMAT.as_bytes().to_vec();
            for n in numbers {
                bytes.extend_from_slice(format!(" {n}").as_bytes());
            }
            bytes.push(b'\n');
            bytes.extend_from_slice(&body);
            let _ = decode(&bytes, &key("src", "a.ima"));
        }
    }
}
