//! The generated code's own names, where the spec's names also stand, are the ones the
//! checker keeps spec names apart from (`ima_dsl::names`' lists, and the reserved names).
//! Each example and test spec that checks is generated, then read back: the Rust stubs by
//! `syn` (every unqualified type and value, pattern binding and item), the Python package
//! by `python3`'s `symtable` (what each scope binds and what it reads from the module or
//! the builtins), the CUDA's own text (ima.cuh and the bodies left out) by its tokens
//! (every function it calls by an unqualified name). A name neither derived from the spec nor in those lists is one a spec
//! could take and the checker would let through: a template that starts using `len`, or
//! a stub that binds a local `out`, fails here until the lists say so.

use ima_codegen::package::{CrateOptions, GeneratedFile, RuntimeDep, source_files};
use ima_dsl::ir;
use ima_dsl::names::{
    self, CUDA_NAMESPACE_CALLS, PYTHON_PACKAGE_NAMES, RUST_MODULE_TYPES, RUST_MODULE_VALUES,
    RUST_STUB_SEES,
};
use ima_dsl::reserved;
use std::collections::BTreeSet;
use syn::visit::{self, Visit};

/// Every spec of `specs/` and `tests/in/` that checks, with its module.
fn modules() -> Vec<ir::Module> {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let mut found = Vec::new();
    for dir in ["specs", "tests/in"] {
        let mut files: Vec<String> = std::fs::read_dir(format!("{root}/{dir}"))
            .expect("the spec directory")
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".ima"))
            .collect();
        files.sort();
        for file in files {
            let path = format!("{dir}/{file}");
            let text = std::fs::read_to_string(format!("{root}/{path}")).unwrap();
            if let Ok(m) = ima_dsl::compile(&ima_dsl::Source::new(path, text)) {
                found.push(m);
            }
        }
    }
    assert!(found.len() > 20, "only {} specs check", found.len());
    found
}

/// The files of `m`'s Python package, which holds its Rust crate.
fn files(m: &ir::Module) -> Vec<GeneratedFile> {
    let options = CrateOptions {
        runtime: RuntimeDep::Version("0.1.0".into()),
        archs: Vec::new(),
        python: true,
    };
    source_files(m, "", &options)
}

fn text<'a>(files: &'a [GeneratedFile], suffix: &str) -> &'a str {
    let f = files
        .iter()
        .find(|f| f.path.ends_with(suffix))
        .unwrap_or_else(|| panic!("no {suffix}"));
    std::str::from_utf8(&f.contents).unwrap()
}

/// The names `m`'s kernels give the generated code's values and parameters: its
/// constants, and each kernel's arguments (a quantized one's buffers, group size and K),
/// params and symbols.
fn spec_values(m: &ir::Module) -> BTreeSet<String> {
    let mut found: BTreeSet<String> = m.consts.iter().map(|(n, _)| n.clone()).collect();
    for k in &m.kernels {
        found.insert(names::rust_contract_static(&k.name));
        for a in &k.args {
            found.insert(a.name.clone());
            if let Some(q) = &a.quant {
                for b in q.buffers(&a.dims[0], &a.dims[1], a.dtype) {
                    found.insert(names::quant_buffer(&a.name, b.part));
                }
                found.insert(names::quant_group_size(&a.name));
                found.insert(names::quant_k(&a.name));
            }
        }
        found.extend(k.params.iter().map(|p| p.name.clone()));
        found.extend(k.symbols.iter().map(|s| s.name.clone()));
    }
    found
}

/// What a Rust file names unqualified, by namespace.
#[derive(Default)]
struct RustNames {
    /// Types, and the first segment of a longer path read in the type namespace.
    types: BTreeSet<String>,
    /// Values: single-segment expressions and patterns, and every binding.
    values: BTreeSet<String>,
    /// The module's constants and statics, which every `let` in it sees.
    item_values: BTreeSet<String>,
    /// Generic parameters, which the stubs derive from the arguments' names.
    generics: BTreeSet<String>,
}

impl RustNames {
    fn type_path(&mut self, path: &syn::Path) {
        if path.leading_colon.is_none() {
            self.types.insert(path.segments[0].ident.to_string());
        }
    }

    fn value_path(&mut self, path: &syn::Path) {
        if path.leading_colon.is_none() {
            let first = path.segments[0].ident.to_string();
            if path.segments.len() == 1 {
                self.values.insert(first);
            } else {
                self.types.insert(first);
            }
        }
    }
}

impl<'ast> Visit<'ast> for RustNames {
    fn visit_type_path(&mut self, t: &'ast syn::TypePath) {
        if t.qself.is_none() {
            self.type_path(&t.path);
        }
        visit::visit_type_path(self, t);
    }

    fn visit_expr_path(&mut self, e: &'ast syn::ExprPath) {
        self.value_path(&e.path);
        visit::visit_expr_path(self, e);
    }

    fn visit_expr_struct(&mut self, e: &'ast syn::ExprStruct) {
        self.type_path(&e.path);
        visit::visit_expr_struct(self, e);
    }

    fn visit_pat_struct(&mut self, p: &'ast syn::PatStruct) {
        self.type_path(&p.path);
        visit::visit_pat_struct(self, p);
    }

    fn visit_pat_tuple_struct(&mut self, p: &'ast syn::PatTupleStruct) {
        self.value_path(&p.path);
        visit::visit_pat_tuple_struct(self, p);
    }

    fn visit_pat_ident(&mut self, p: &'ast syn::PatIdent) {
        self.values.insert(p.ident.to_string());
        visit::visit_pat_ident(self, p);
    }

    fn visit_type_param(&mut self, p: &'ast syn::TypeParam) {
        self.generics.insert(p.ident.to_string());
        visit::visit_type_param(self, p);
    }

    fn visit_item_const(&mut self, i: &'ast syn::ItemConst) {
        self.item_values.insert(i.ident.to_string());
        visit::visit_item_const(self, i);
    }

    fn visit_item_static(&mut self, i: &'ast syn::ItemStatic) {
        self.item_values.insert(i.ident.to_string());
        visit::visit_item_static(self, i);
    }

    fn visit_item_struct(&mut self, i: &'ast syn::ItemStruct) {
        self.types.insert(i.ident.to_string());
        visit::visit_item_struct(self, i);
    }

    fn visit_use_name(&mut self, u: &'ast syn::UseName) {
        self.types.insert(u.ident.to_string());
    }

    fn visit_use_rename(&mut self, u: &'ast syn::UseRename) {
        self.types.insert(u.rename.to_string());
    }
}

fn rust_names(source: &str) -> RustNames {
    let file = syn::parse_file(source).expect("the generated Rust parses");
    let mut names = RustNames::default();
    names.visit_file(&file);
    names
}

/// The Rust stubs' types and values are the spec's, reserved, or in the checker's lists
/// of the module's own; of its values, a stub's `let` sees only those of
/// `RUST_STUB_SEES`. A type the spec could give starts with a capital (a kernel's `Attn`,
/// `AttnArgs`, an argument's generic parameter), so only those are held to a list.
#[test]
fn the_rust_stubs_name_only_the_lists_names() {
    for m in modules() {
        let files = files(&m);
        let stubs = rust_names(text(&files, "src/stubs.rs"));
        let root = rust_names(text(&files, "src/lib.rs"));
        let spec_types: BTreeSet<String> = m
            .kernels
            .iter()
            .flat_map(|k| {
                [
                    names::rust_kernel_type(&k.name),
                    names::rust_args_struct(&k.name),
                ]
            })
            .collect();
        let spec_values = spec_values(&m);
        for t in &stubs.types {
            let capital = t.starts_with(|c: char| c.is_ascii_uppercase());
            let own = !spec_types.contains(t) && !stubs.generics.contains(t) && t != "Self";
            assert!(
                !capital || !own || RUST_MODULE_TYPES.contains(&t.as_str()),
                "{}: the stubs name the type `{t}`, not in RUST_MODULE_TYPES",
                m.file
            );
        }
        let values = stubs
            .values
            .iter()
            .chain(&stubs.item_values)
            .chain(&root.item_values);
        for v in values {
            let own = !spec_values.contains(v) && reserved(v).is_none();
            assert!(
                !own || RUST_MODULE_VALUES.contains(&v.as_str()),
                "{}: the Rust module names the value `{v}`, not in RUST_MODULE_VALUES",
                m.file
            );
        }
        for v in &stubs.item_values {
            let own = !spec_values.contains(v) && reserved(v).is_none();
            assert!(
                !own || RUST_STUB_SEES.contains(&v.as_str()),
                "{}: the stubs' `let` sees the module's `{v}`, not in RUST_STUB_SEES",
                m.file
            );
        }
    }
}

/// What `python3`'s symtable reads of a module, one line each: `bind NAME` for each name
/// its top level binds (assigned, imported, defined or annotated), `read NAME` for each
/// name any scope reads from the module or the builtins, and for each function defined at
/// the top level, `fn NAME`, then `local NAME` for its parameters and locals and `fnread
/// NAME` for what it reads from the module or the builtins.
const SYMTABLE: &str = r#"
import sys, symtable

for path in sys.argv[1:]:
    print("file", path)
    top = symtable.symtable(open(path).read(), path, "exec")
    for s in top.get_symbols():
        if s.is_assigned() or s.is_imported() or s.is_namespace() or s.is_annotated():
            print("bind", s.get_name())
        if s.is_referenced():
            print("read", s.get_name())

    def reads(t):
        for s in t.get_symbols():
            if s.is_referenced() and s.is_global():
                yield s.get_name()
        for c in t.get_children():
            yield from reads(c)

    for t in top.get_children():
        for name in reads(t):
            print("read", name)
        if t.get_type() == "function":
            print("fn", t.get_name())
            for s in t.get_symbols():
                if s.is_local() or s.is_parameter():
                    print("local", s.get_name())
            for name in reads(t):
                print("fnread", name)
"#;

/// The Python package's names are the spec's, reserved, or in `PYTHON_PACKAGE_NAMES`:
/// what its top level binds and what any scope reads from the builtins. A kernel's
/// functions (its function, shape function and custom ops) bind only the spec's names
/// and the package's private ones, and read from the module only those and the spec's
/// module-level names: a builtin they read, a parameter of the same name would hide.
#[test]
fn the_python_package_names_only_the_lists_names() {
    let dir = tempfile::tempdir().unwrap();
    let modules = modules();
    let mut paths = Vec::new();
    for (i, m) in modules.iter().enumerate() {
        let files = files(m);
        for suffix in ["__init__.py", "__init__.pyi"] {
            let path = dir.path().join(format!("{i}_{suffix}"));
            std::fs::write(&path, text(&files, suffix)).unwrap();
            paths.push(path);
        }
    }
    let ran = std::process::Command::new("python3")
        .arg("-c")
        .arg(SYMTABLE)
        .args(&paths)
        .output()
        .expect("running python3");
    assert!(
        ran.status.success(),
        "{}",
        String::from_utf8_lossy(&ran.stderr)
    );
    let out = String::from_utf8(ran.stdout).unwrap();
    let mut files = out.split("file ").skip(1);
    for m in &modules {
        let module_names: BTreeSet<String> = m
            .consts
            .iter()
            .map(|(n, _)| n.clone())
            .chain(m.kernels.iter().map(|k| k.name.clone()))
            .chain(
                m.kernels
                    .iter()
                    .map(|k| names::python_output_shapes(&k.name)),
            )
            .collect();
        let spec_values = spec_values(m);
        let free = |n: &str| reserved(n).is_none();
        for _ in 0..2 {
            let listing = files.next().expect("each file's listing");
            let lines: Vec<(&str, &str)> = listing
                .lines()
                .skip(1)
                .map(|l| l.split_once(' ').expect("KIND NAME"))
                .collect();
            let bound: BTreeSet<&str> = lines
                .iter()
                .filter(|(kind, _)| *kind == "bind")
                .map(|(_, n)| *n)
                .collect();
            let package_own = |n: &str| PYTHON_PACKAGE_NAMES.contains(&n);
            let mut function = "";
            for &(kind, name) in &lines {
                let what = format!("{} ({}): `{name}`", m.file, listing.lines().next().unwrap());
                match kind {
                    "bind" => assert!(
                        !free(name) || module_names.contains(name) || package_own(name),
                        "{what}, bound at the top level, is not in PYTHON_PACKAGE_NAMES"
                    ),
                    "read" if !bound.contains(name) => assert!(
                        !free(name) || package_own(name),
                        "{what}, a builtin the package reads, is not in PYTHON_PACKAGE_NAMES"
                    ),
                    "fn" => function = name,
                    // The package's own functions (set_checked) take none of the spec's names.
                    _ if !free(function) && !function.starts_with('_') => {}
                    "local" => assert!(
                        !free(name) || spec_values.contains(name),
                        "{what}, a local of `{function}`, is not the spec's"
                    ),
                    "fnread" => assert!(
                        !free(name) || module_names.contains(name),
                        "{what}, which `{function}` reads, is not the spec's"
                    ),
                    _ => {}
                }
            }
        }
    }
}

/// The generated CUDA's tokens, ima.cuh's text and the spec's bodies left out (their
/// lines run from a `#line` naming the spec to the next `#line`, which names it again for
/// the generated closing brace), and its comments and string literals.
fn cuda_tokens(m: &ir::Module) -> Vec<String> {
    let cuda = ima_codegen::cuda::generate(m, "module.cu");
    let header = ima_codegen::cuda::IMA_CUH.trim_end();
    let (_, own) = cuda.split_once(header).expect("the module holds ima.cuh");
    let body_start = format!("\"{}\"", m.file);
    let mut in_body = false;
    let mut tokens = Vec::new();
    for line in own.lines() {
        if line.starts_with("#line") {
            // A body's first line names the spec, and so does its closing brace's.
            in_body = line.ends_with(&body_start) && !in_body;
            continue;
        }
        let code = line.split("//").next().unwrap();
        if in_body || code.trim_start().starts_with('#') {
            continue;
        }
        tokens.extend(tokenize(code));
    }
    tokens
}

/// `code`'s tokens: names, numbers, `->`, `::` and single characters; string literals and
/// spaces left out.
fn tokenize(code: &str) -> Vec<String> {
    let mut tokens = Vec::new();
    let mut rest = code;
    while let Some(c) = rest.chars().next() {
        let len = if c.is_ascii_alphanumeric() || c == '_' {
            rest.find(|c: char| !c.is_ascii_alphanumeric() && c != '_')
                .unwrap_or(rest.len())
        } else if c == '"' {
            1 + rest[1..].find('"').expect("a closed string") + 1
        } else if rest.starts_with("->") || rest.starts_with("::") {
            2
        } else {
            c.len_utf8()
        };
        let token = &rest[..len];
        if !token.trim().is_empty() && !token.starts_with('"') {
            tokens.push(token.to_string());
        }
        rest = &rest[len..];
    }
    tokens
}

/// The functions the generated CUDA calls by an unqualified name, outside ima.cuh and the
/// bodies, are reserved or in `CUDA_NAMESPACE_CALLS`: each kernel's namespace holds the
/// spec's constants, and the entry points `using` it see them too. A call of a name that a
/// declaration around it names (a member function, a parameter, a local) finds that first.
#[test]
fn the_generated_cuda_calls_only_the_lists_functions() {
    for m in modules() {
        // The entry points' own names (`attn_i32`), declared after `__launch_bounds__(..)`.
        let entries: BTreeSet<String> = m
            .kernels
            .iter()
            .flat_map(|k| {
                ["i32", "i64", "i32_checked", "i64_checked"].map(|s| format!("{}_{s}", k.name))
            })
            .collect();
        let tokens = cuda_tokens(&m);
        let unlisted: Vec<&str> = unqualified_calls(&tokens)
            .into_iter()
            .filter(|c| !entries.contains(*c) && reserved(c).is_none())
            .filter(|c| !CUDA_NAMESPACE_CALLS.contains(c))
            .collect();
        assert!(
            unlisted.is_empty(),
            "{}: the generated CUDA calls {unlisted:?}, not in CUDA_NAMESPACE_CALLS",
            m.file
        );
    }
}

/// The functions a CUDA text calls by an unqualified name that no declaration around the
/// call names: each call with the brace scopes it stands in, and the names each scope
/// declares after a type (a function, member function, parameter or local, which a call
/// finds before the namespace's constants; a parameter in the scope its function's brace
/// opens). A `>` closes a type only where it closes a `<` that follows a name in the same
/// statement (`ImaVec<float, 4> f(`), not as an operator (`k >> f(`).
fn unqualified_calls(tokens: &[String]) -> BTreeSet<&str> {
    let word = |t: &str| t.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_');
    // Each scope's parent and declared names; scope 0 is the file.
    let mut parent: Vec<usize> = vec![0];
    let mut declared: Vec<BTreeSet<&str>> = vec![BTreeSet::new()];
    let mut open = vec![0];
    let mut parameters = BTreeSet::new();
    let (mut parens, mut angles) = (0, Vec::new());
    let mut closes_type = vec![false; tokens.len()];
    let mut calls = Vec::new();
    for (i, t) in tokens.iter().enumerate() {
        let before = if i == 0 { "" } else { tokens[i - 1].as_str() };
        let next = tokens.get(i + 1).map_or("", |t| t.as_str());
        match t.as_str() {
            "(" => parens += 1,
            ")" => parens -= 1,
            "<" if word(before) => angles.push(i),
            ">" => closes_type[i] = angles.pop().is_some(),
            ";" => {
                angles.clear();
                if parens == 0 {
                    parameters.clear();
                }
            }
            "{" => {
                parent.push(*open.last().unwrap());
                declared.push(std::mem::take(&mut parameters));
                open.push(declared.len() - 1);
                angles.clear();
            }
            "}" => {
                open.pop();
                angles.clear();
            }
            name if word(name) => {
                let typed = word(before) && !matches!(before, "return" | "else" | "case");
                let type_close = |j: usize| j > 0 && closes_type[j];
                let declares = match next {
                    "(" => {
                        typed
                            || type_close(i - 1)
                            || matches!(before, "&" | "*") && type_close(i - 2)
                    }
                    "," | ")" | "=" | ";" | "[" => {
                        typed || type_close(i - 1) || matches!(before, "&" | "*")
                    }
                    _ => false,
                };
                if declares && parens > 0 {
                    parameters.insert(name);
                } else if declares {
                    declared[*open.last().unwrap()].insert(name);
                } else if next == "(" && !matches!(before, "." | "->" | "::") {
                    // A trailing return type sees its function's parameters:
                    // `auto g(F& f) -> decltype(f(0)) {`.
                    if !parameters.contains(name) {
                        calls.push((name, *open.last().unwrap()));
                    }
                }
            }
            _ => {}
        }
    }
    let visible = |name: &str, mut scope: usize| loop {
        if declared[scope].contains(name) {
            return true;
        }
        if scope == 0 {
            return false;
        }
        scope = parent[scope];
    };
    calls
        .into_iter()
        .filter(|&(name, scope)| !visible(name, scope))
        .map(|(name, _)| name)
        .collect()
}

/// The scopes of `unqualified_calls`, on hand-written code: a parameter, a member function
/// and a local excuse calls in their scopes only, a trailing return type sees its
/// parameters, and `>>` closes no type.
#[test]
fn a_call_is_excused_only_by_a_declaration_around_it() {
    let calls = |code: &str| {
        let tokens = tokenize(code);
        // Keywords (`for (`) are reserved, as in the test above.
        unqualified_calls(&tokens)
            .into_iter()
            .filter(|c| reserved(c).is_none())
            .map(String::from)
            .collect::<Vec<_>>()
    };
    assert_eq!(calls("int g(int k) { return k >> f(k); }"), ["f"]);
    assert_eq!(calls("int g(int k) { return k > f(k); }"), ["f"]);
    assert_eq!(
        calls("Vec<int> f(int k) { return f(k - 1); }"),
        Vec::<String>::new()
    );
    assert_eq!(
        calls("struct S { int h() { return ok(1); } bool ok(int); }; int u() { return ok(2); }"),
        ["ok"]
    );
    assert_eq!(
        calls("auto u(F& f) -> decltype(f(0)) { return f(1); } void v() { f(2); }"),
        ["f"]
    );
    assert_eq!(
        calls("void v() { for (int i = 0; i < 4; ++i) { min(i, 2); } }"),
        ["min"]
    );
}
