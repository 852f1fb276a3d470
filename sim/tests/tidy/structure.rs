//! The structural house rules: no module cycles inside a crate, no `#[path]` that reaches into another
//! crate (where the dependency rules cannot see it), and no source file over 800 lines outside tests.
//! Each checker is a plain function of the files it is given, so that a planted violation (written to a
//! scratch directory by the tests below) proves it can fail.
//!
//! A module's dependencies are read from its text: every `crate::`, `super::` and `self::` path in `use`
//! declarations and in code, resolved to the module file that defines the item (following `pub use`
//! re-exports, so that importing through a parent's re-export is not a dependency on the parent). A
//! file's test modules (`#[cfg(test)] mod tests;` and `#[cfg(test)] mod tests { ... }`, wherever they
//! stand) are left out, and nothing else: tests may look at anything.
//!
//! Cycles are looked for at every level of a crate's tree: two modules that depend on each other are a
//! cycle, and so are two sibling folders (or a folder and a sibling file) when something inside one
//! depends on something inside the other, both ways. A folder is a layer; layers only depend downwards.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The longest a source file may be before it is cut along its seams.
pub const MAX_LINES: usize = 800;

/// One crate's library modules: module path (`["registry", "store"]`) to its file's text.
pub struct Crate {
    pub modules: BTreeMap<Vec<String>, (PathBuf, String)>,
}

impl Crate {
    /// Reads the library sources under `src` (`lib.rs` and its modules; binaries and test modules apart).
    pub fn read(src: &Path) -> Crate {
        let mut modules = BTreeMap::new();
        let mut files = Vec::new();
        collect(src, &mut files);
        for file in files {
            let rel = file.strip_prefix(src).unwrap();
            let parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
            if parts.first().is_some_and(|p| p == "bin" || p == "main.rs") || is_test_file(&parts) {
                continue;
            }
            let mut path: Vec<String> = parts.iter().map(|p| p.trim_end_matches(".rs").to_string()).collect();
            if path.last().is_some_and(|l| l == "mod" || l == "lib") {
                path.pop();
            }
            let text = without_test_module(&fs::read_to_string(&file).unwrap());
            modules.insert(path, (file, text));
        }
        Crate { modules }
    }

    /// The module file an absolute path (`["registry", "store", "Store"]`) names: the longest prefix that
    /// is a module, followed through a `pub use` of the next name if that module re-exports it.
    fn resolve(&self, path: &[String], depth: usize) -> Option<Vec<String>> {
        let k = (0..=path.len()).rev().find(|k| self.modules.contains_key(&path[..*k]))?;
        let module = path[..k].to_vec();
        let Some(name) = path.get(k) else { return Some(module) };
        if depth < 8 {
            if let Some(source) = self.reexport_source(&module, name) {
                if source != module {
                    return self.resolve(&[source, vec![name.clone()]].concat(), depth + 1).or(Some(module));
                }
            }
        }
        Some(module)
    }

    /// Where `module` re-exports `name` from (`pub use store::{Store, ListRequest};` gives `store`).
    fn reexport_source(&self, module: &[String], name: &str) -> Option<Vec<String>> {
        let (_, text) = self.modules.get(module)?;
        for decl in use_declarations(text).into_iter().filter(|d| d.public) {
            for full in expand(&decl.tree) {
                if full.last().map(String::as_str) == Some(name) || full.last().is_some_and(|l| l == "*") {
                    let absolute = absolute(module, &full[..full.len() - 1], self)?;
                    if full.last().is_some_and(|l| l == "*") && !self.defines(&absolute, name) {
                        continue;
                    }
                    return Some(absolute);
                }
            }
        }
        None
    }

    /// Whether the module file at `module` defines an item called `name`.
    fn defines(&self, module: &[String], name: &str) -> bool {
        let Some((_, text)) = self.modules.get(module) else { return false };
        ["fn", "struct", "enum", "trait", "type", "const", "static", "mod", "union"].iter().any(|kw| {
            text.contains(&format!("{kw} {name}("))
                || text.contains(&format!("{kw} {name} "))
                || text.contains(&format!("{kw} {name}<"))
                || text.contains(&format!("{kw} {name};"))
                || text.contains(&format!("{kw} {name}:"))
        })
    }

    /// Every module's dependencies on other module files of the crate.
    pub fn graph(&self) -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
        let mut graph = BTreeMap::new();
        for (module, (_, text)) in &self.modules {
            let mut deps = BTreeSet::new();
            let mut paths: Vec<Vec<String>> = use_declarations(text).iter().flat_map(|d| expand(&d.tree)).collect();
            paths.extend(inline_paths(text));
            for path in paths {
                let Some(absolute) = absolute(module, &path, self) else { continue };
                let Some(target) = self.resolve(&absolute, 0) else { continue };
                // A module may name its own items, its ancestors' (the crate root included) through
                // re-exports it cannot avoid, and its children it declares.
                if target != *module && !target.is_empty() && !module.starts_with(&target) {
                    deps.insert(target);
                }
            }
            graph.insert(module.clone(), deps);
        }
        graph
    }
}

/// The cycles (strongly connected components of more than one module) of a dependency graph, each as
/// its modules' files, sorted.
pub fn cycles(krate: &Crate) -> Vec<Vec<String>> {
    let graph = krate.graph();
    let names: Vec<&Vec<String>> = graph.keys().collect();
    let index: BTreeMap<&Vec<String>, usize> = names.iter().enumerate().map(|(i, n)| (*n, i)).collect();
    let edges: Vec<Vec<usize>> =
        names.iter().map(|n| graph[*n].iter().filter_map(|d| index.get(d).copied()).collect()).collect();
    let mut found = Vec::new();
    for component in strongly_connected(&edges) {
        if component.len() > 1 {
            let mut files: Vec<String> =
                component.iter().map(|i| krate.modules[names[*i]].0.display().to_string()).collect();
            files.sort();
            found.push(files);
        }
    }
    found.sort();
    found
}

/// The folder cycles of a crate: at each folder (the crate root included), its children (sub-folders and
/// files) as nodes, with an edge from one child to another when a module inside the first depends on a
/// module inside the second; each cycle among siblings, as `parent: a -> b` with the children sorted.
pub fn folder_cycles(krate: &Crate) -> Vec<String> {
    let graph = krate.graph();
    // parent folder -> (child, child) edges between its children.
    let mut levels: BTreeMap<Vec<String>, BTreeSet<(String, String)>> = BTreeMap::new();
    for (module, deps) in &graph {
        for dep in deps {
            let common = module.iter().zip(dep).take_while(|(a, b)| a == b).count();
            // One inside the other: a module and its own ancestors or children are one layer.
            if common == module.len() || common == dep.len() {
                continue;
            }
            levels.entry(module[..common].to_vec()).or_default().insert((module[common].clone(), dep[common].clone()));
        }
    }
    let mut found = Vec::new();
    for (parent, edges) in &levels {
        let names: Vec<&String> = edges.iter().flat_map(|(a, b)| [a, b]).collect::<BTreeSet<_>>().into_iter().collect();
        let index: BTreeMap<&String, usize> = names.iter().enumerate().map(|(i, n)| (*n, i)).collect();
        let mut adjacency = vec![Vec::new(); names.len()];
        for (a, b) in edges {
            adjacency[index[a]].push(index[b]);
        }
        for component in strongly_connected(&adjacency) {
            if component.len() > 1 {
                let mut members: Vec<&str> = component.iter().map(|i| names[*i].as_str()).collect();
                members.sort();
                let at = if parent.is_empty() { "(crate root)".to_string() } else { parent.join("/") };
                let edges_shown: Vec<String> = edges
                    .iter()
                    .filter(|(a, b)| members.contains(&a.as_str()) && members.contains(&b.as_str()))
                    .map(|(a, b)| format!("{a} -> {b}"))
                    .collect();
                found.push(format!("{at}: {{{}}} ({})", members.join(", "), edges_shown.join(", ")));
            }
        }
    }
    found
}

/// Tarjan's algorithm, iteratively.
fn strongly_connected(edges: &[Vec<usize>]) -> Vec<Vec<usize>> {
    let n = edges.len();
    let (mut index, mut low, mut on_stack) = (vec![usize::MAX; n], vec![0; n], vec![false; n]);
    let (mut stack, mut out, mut next) = (Vec::new(), Vec::new(), 0);
    for root in 0..n {
        if index[root] != usize::MAX {
            continue;
        }
        let mut work = vec![(root, 0usize)];
        while let Some((v, i)) = work.pop() {
            if i == 0 {
                index[v] = next;
                low[v] = next;
                next += 1;
                stack.push(v);
                on_stack[v] = true;
            }
            if let Some(&w) = edges[v].get(i) {
                work.push((v, i + 1));
                if index[w] == usize::MAX {
                    work.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            if low[v] == index[v] {
                let mut component = Vec::new();
                while let Some(w) = stack.pop() {
                    on_stack[w] = false;
                    component.push(w);
                    if w == v {
                        break;
                    }
                }
                out.push(component);
            }
            if let Some(&(parent, _)) = work.last() {
                low[parent] = low[parent].min(low[v]);
            }
        }
    }
    out
}

/// `#[path = "..."]` attributes of `file` that lead out of the crate rooted at `crate_dir`.
pub fn paths_leaving_crate(file: &Path, text: &str, crate_dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let Some(rest) = line.trim_start().strip_prefix("#[path") else { continue };
        let Some(target) = rest.split('"').nth(1) else { continue };
        let resolved = normalize(&file.parent().unwrap().join(target));
        if !resolved.starts_with(normalize(crate_dir)) {
            out.push(format!("{}:{}: #[path = {target:?}] leaves {}", file.display(), n + 1, crate_dir.display()));
        }
    }
    out
}

/// The source files of `files` (paths relative to `root`) over [`MAX_LINES`], test code aside.
pub fn oversized(root: &Path, files: &[PathBuf]) -> Vec<String> {
    let mut found = Vec::new();
    for file in files {
        let rel = file.strip_prefix(root).unwrap();
        let lines = fs::read_to_string(file).unwrap().lines().count();
        if lines > MAX_LINES && !is_test_path(rel) {
            found.push(format!("{} has {lines} lines", rel.display()));
        }
    }
    found
}

/// Whether a file is test code (exempt from the size rule): under a `tests/` or `benches/` folder, or a
/// `tests.rs` module.
pub fn is_test_path(path: &Path) -> bool {
    path.iter().any(|p| p == "tests" || p == "benches") || path.file_name().is_some_and(|f| f == "tests.rs")
}

fn is_test_file(parts: &[String]) -> bool {
    parts.iter().any(|p| p == "tests" || p == "tests.rs")
}

fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    let mut paths: Vec<PathBuf> = entries.map(|e| e.unwrap().path()).collect();
    paths.sort();
    for path in paths {
        if path.is_dir() {
            collect(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The file without its test modules: each `#[cfg(test)]` that opens a `mod` is dropped with that module,
/// a declaration (`mod tests;`) or an inline body up to its closing brace; the rest of the file stays.
pub fn without_test_module(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let opens_test_mod = lines[i].trim() == "#[cfg(test)]"
            && lines.get(i + 1).is_some_and(|next| {
                let next = next.trim_start();
                next.starts_with("mod ") || next.starts_with("pub mod ") || next.starts_with("pub(crate) mod ")
            });
        if !opens_test_mod {
            out.push(lines[i]);
            i += 1;
            continue;
        }
        let decl = lines[i + 1];
        i += 2;
        if decl.trim_end().ends_with(';') {
            continue;
        }
        // An inline module: skip to the brace that closes the one it opens (braces in strings and
        // comments inside a test module are balanced in practice; an unbalanced one drops the rest).
        let mut depth: i64 = decl.matches('{').count() as i64 - decl.matches('}').count() as i64;
        while depth > 0 && i < lines.len() {
            depth += lines[i].matches('{').count() as i64 - lines[i].matches('}').count() as i64;
            i += 1;
        }
    }
    out.join("\n")
}

/// A `use` declaration: its tree (`crate::a::{b, c::D}`) and whether it is `pub`.
struct UseDecl {
    tree: String,
    public: bool,
}

fn use_declarations(text: &str) -> Vec<UseDecl> {
    let code: String = text.lines().filter(|l| !l.trim_start().starts_with("//")).collect::<Vec<_>>().join("\n");
    let mut out = Vec::new();
    let mut rest = code.as_str();
    while let Some(at) = find_use(rest) {
        let before = &rest[..at];
        let public = before.trim_end().ends_with("pub") || before.trim_end().ends_with(')');
        let start = at + "use ".len();
        let Some(end) = rest[start..].find(';') else { break };
        out.push(UseDecl { tree: rest[start..start + end].split_whitespace().collect(), public });
        rest = &rest[start + end..];
    }
    out
}

/// The offset of the next `use ` keyword at the start of a statement.
fn find_use(text: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(i) = text[from..].find("use ") {
        let at = from + i;
        let prev = text[..at].chars().next_back();
        if prev.is_none_or(|c| c.is_whitespace() || c == ';' || c == '{' || c == '}') {
            return Some(at);
        }
        from = at + 4;
    }
    None
}

/// The paths of a use tree: `a::{b, c::{D, E}}` gives `a::b`, `a::c::D`, `a::c::E`.
fn expand(tree: &str) -> Vec<Vec<String>> {
    let tree = tree.trim();
    let Some(open) = tree.find('{') else {
        let path = tree.split(" as ").next().unwrap_or(tree);
        return vec![path.split("::").filter(|s| !s.is_empty()).map(str::to_string).collect()];
    };
    let prefix: Vec<String> = tree[..open].split("::").filter(|s| !s.is_empty()).map(str::to_string).collect();
    // A "use " inside a string literal can make a tree with no closing brace after its opening one.
    let close = tree.rfind('}').filter(|&close| close > open).unwrap_or(tree.len());
    let inner = &tree[open + 1..close];
    let mut out = Vec::new();
    let (mut depth, mut start) = (0, 0);
    let bytes = inner.as_bytes();
    for i in 0..=bytes.len() {
        let c = bytes.get(i).copied().unwrap_or(b',');
        match c {
            b'{' => depth += 1,
            b'}' => depth -= 1,
            b',' if depth == 0 => {
                let part = inner[start..i].trim();
                if !part.is_empty() {
                    for tail in expand(part) {
                        let tail: Vec<String> = tail.into_iter().filter(|s| s != "self").collect();
                        out.push([prefix.clone(), tail].concat());
                    }
                }
                start = i + 1;
            }
            _ => {}
        }
    }
    out
}

/// `crate::a::b`, `super::c` and `self::d` paths written in code (outside `use` declarations).
fn inline_paths(text: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for line in text.lines().filter(|l| !l.trim_start().starts_with("//") && !l.trim_start().starts_with("use ")) {
        for start in ["crate::", "super::"] {
            let mut from = 0;
            while let Some(i) = line[from..].find(start) {
                let at = from + i;
                let path: String =
                    line[at..].chars().take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':').collect();
                out.push(path.split("::").filter(|s| !s.is_empty()).map(str::to_string).collect());
                from = at + start.len();
            }
        }
    }
    out
}

/// A path as written in `module` made absolute (`crate::` stripped, `super::` and `self::` resolved);
/// `None` for paths into other crates.
fn absolute(module: &[String], path: &[String], krate: &Crate) -> Option<Vec<String>> {
    let first = path.first()?;
    match first.as_str() {
        "crate" => Some(path[1..].to_vec()),
        "self" => Some([module.to_vec(), path[1..].to_vec()].concat()),
        "super" => {
            let mut base = module.to_vec();
            let mut rest = path;
            while rest.first().is_some_and(|s| s == "super") {
                base.pop()?;
                rest = &rest[1..];
            }
            Some([base, rest.to_vec()].concat())
        }
        // A path relative to this module (a child it declares).
        name if krate.modules.contains_key(&[module.to_vec(), vec![name.to_string()]].concat()) => {
            Some([module.to_vec(), path.to_vec()].concat())
        }
        _ => None,
    }
}

#[cfg(test)]
mod planted {
    use super::*;

    fn write(dir: &Path, files: &[(&str, &str)]) {
        for (path, text) in files {
            let path = dir.join(path);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, text).unwrap();
        }
    }

    #[test]
    fn a_planted_module_cycle_is_found_and_a_reexport_is_not_one() {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            &[
                ("src/lib.rs", "//! x\npub mod a;\npub mod b;\npub mod c;\n"),
                ("src/a.rs", "//! x\nuse crate::b::Bee;\npub struct Ay;\n"),
                ("src/b.rs", "//! x\npub struct Bee;\nfn f() -> crate::a::Ay { crate::a::Ay }\n"),
                ("src/c/mod.rs", "//! x\nmod inner;\npub use inner::Sea;\n"),
                ("src/c/inner.rs", "//! x\nuse super::super::a::Ay;\npub struct Sea;\n"),
            ],
        );
        let krate = Crate::read(&dir.path().join("src"));
        let found = cycles(&krate);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0][0].ends_with("src/a.rs") && found[0][1].ends_with("src/b.rs"), "{found:?}");
    }

    #[test]
    fn a_planted_folder_cycle_is_found_though_no_two_files_form_one() {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            &[
                ("src/lib.rs", "//! x\npub mod low;\npub mod high;\n"),
                ("src/low/mod.rs", "//! x\npub mod a;\npub mod b;\n"),
                ("src/low/a.rs", "//! x\npub struct Ay;\n"),
                ("src/low/b.rs", "//! x\nuse crate::high::c::Sea;\npub struct Bee(Sea);\n"),
                ("src/high/mod.rs", "//! x\npub mod c;\npub mod d;\n"),
                ("src/high/c.rs", "//! x\npub struct Sea;\n"),
                ("src/high/d.rs", "//! x\nuse crate::low::a::Ay;\npub struct Dee(Ay);\n"),
            ],
        );
        let krate = Crate::read(&dir.path().join("src"));
        assert!(cycles(&krate).is_empty(), "no module cycle: {:?}", cycles(&krate));
        let found = folder_cycles(&krate);
        assert_eq!(found, ["(crate root): {high, low} (high -> low, low -> high)"]);
    }

    #[test]
    fn a_test_module_declared_mid_file_hides_nothing_after_it() {
        let text = "//! x\nmod a;\n#[cfg(test)]\nmod tests;\nmod b;\n#[cfg(test)]\nmod inline {\n    fn f() { if true { } }\n}\nuse crate::c::D;\n";
        let kept = without_test_module(text);
        assert_eq!(kept, "//! x\nmod a;\nmod b;\nuse crate::c::D;");
    }

    #[test]
    fn a_planted_path_out_of_the_crate_is_found() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("one/tests/t.rs");
        let text =
            "//! x\n#[path = \"../../two/tests/support.rs\"]\nmod support;\n#[path = \"support/ok.rs\"]\nmod ok;\n";
        let found = paths_leaving_crate(&file, text, &dir.path().join("one"));
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].contains("two/tests/support.rs"));
    }

    #[test]
    fn a_planted_long_file_is_found_and_a_long_test_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let long = "//! x\n".to_string() + &"fn f() {}\n".repeat(MAX_LINES);
        write(dir.path(), &[("src/long.rs", &long), ("src/short.rs", "//! x\n"), ("tests/long.rs", &long)]);
        let files: Vec<PathBuf> =
            ["src/long.rs", "src/short.rs", "tests/long.rs"].iter().map(|f| dir.path().join(f)).collect();
        assert_eq!(oversized(dir.path(), &files), [format!("src/long.rs has {} lines", MAX_LINES + 1)]);
    }

    #[test]
    fn use_trees_expand_to_their_paths() {
        assert_eq!(
            expand("crate::a::{b,c::{D,E},self}"),
            [vec!["crate", "a", "b"], vec!["crate", "a", "c", "D"], vec!["crate", "a", "c", "E"], vec!["crate", "a"]]
        );
    }
}
