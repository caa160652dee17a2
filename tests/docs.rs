//! What the compiler cannot check about the README and the guide (`docs/`): the README's
//! length, links that resolve on a repository page, every chapter compiled as doctests, and
//! Markdown that reads right outside rustdoc (no hidden lines, no intra-doc links, no block
//! hidden from the compiler); and about ARCHITECTURE.md and the module docs: the files they
//! name exist, and the places counted for a key hold every key.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

/// The README decides in two screens; the guide teaches the rest.
const README_MAX_LINES: usize = 250;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &Path) -> String {
    fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// The chapters of the guide, `docs/*.md`, sorted.
fn chapters() -> Vec<PathBuf> {
    let mut chapters: Vec<PathBuf> = fs::read_dir(root().join("docs"))
        .expect("a docs folder")
        .map(|entry| entry.expect("a readable entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
        .collect();
    chapters.sort();
    assert!(
        chapters.len() >= 10,
        "the guide has {} chapters",
        chapters.len()
    );
    chapters
}

/// The README and the guide: read as Markdown on a repository page and compiled as doctests.
fn user_docs() -> Vec<PathBuf> {
    let mut docs = vec![root().join("README.md")];
    docs.extend(chapters());
    docs
}

/// Every Markdown file whose relative links must resolve.
fn linked_docs() -> Vec<PathBuf> {
    let mut docs = user_docs();
    docs.push(root().join("ARCHITECTURE.md"));
    docs.push(root().join("CHANGELOG.md"));
    docs
}

/// A code block: its info string and the number of its first line.
struct Block {
    info: String,
    line: usize,
    body: Vec<String>,
}

/// The fenced code blocks of a Markdown text (fences of backticks, possibly indented).
fn blocks(text: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut open: Option<(String, Block)> = None;
    for (n, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        match &mut open {
            None => {
                if let Some(info) = trimmed.strip_prefix("```") {
                    let indent = line.len() - trimmed.len();
                    let block = Block {
                        info: info.trim().to_owned(),
                        line: n + 1,
                        body: Vec::new(),
                    };
                    open = Some((" ".repeat(indent), block));
                }
            }
            Some((indent, block)) => {
                if trimmed.starts_with("```") {
                    let (_, block) = open.take().expect("an open block");
                    blocks.push(block);
                } else {
                    let line = line.strip_prefix(indent.as_str()).unwrap_or(line);
                    block.body.push(line.to_owned());
                }
            }
        }
    }
    assert!(open.is_none(), "a code block is not closed");
    blocks
}

/// The text outside code blocks and inline code, line by line (code lines blanked).
fn prose(text: &str) -> Vec<String> {
    let mut in_block = false;
    text.lines()
        .map(|line| {
            if line.trim_start().starts_with("```") {
                in_block = !in_block;
                return String::new();
            }
            if in_block {
                return String::new();
            }
            line.to_owned()
        })
        .collect()
}

/// The anchor GitHub gives a heading: lower case, spaces to hyphens, punctuation dropped.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The anchors of a Markdown file's headings.
fn anchors(text: &str) -> BTreeSet<String> {
    prose(text)
        .iter()
        .filter_map(|line| {
            let hashes = line.chars().take_while(|&c| c == '#').count();
            (hashes > 0 && line[hashes..].starts_with(' ')).then(|| slug(&line[hashes..]))
        })
        .collect()
}

/// The targets of the inline links `[text](target)` of a line.
fn link_targets(line: &str) -> Vec<String> {
    let mut targets = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find("](") {
        let after = &rest[at + 2..];
        let Some(end) = after.find(')') else { break };
        targets.push(after[..end].to_owned());
        rest = &after[end..];
    }
    targets
}

#[test]
fn the_readme_fits_in_two_screens() {
    let readme = read(&root().join("README.md"));
    let lines = readme.lines().count();
    assert!(
        lines <= README_MAX_LINES,
        "README.md has {lines} lines, at most {README_MAX_LINES}: move the detail into docs/"
    );
}

#[test]
fn every_relative_link_points_to_a_file_and_heading_that_exist() {
    let mut broken = Vec::new();
    let mut checked = 0;
    for doc in linked_docs() {
        let text = read(&doc);
        let dir = doc.parent().expect("a folder");
        for (n, line) in prose(&text).iter().enumerate() {
            for target in link_targets(line) {
                if target.contains("://") || target.starts_with("mailto:") {
                    continue;
                }
                checked += 1;
                let (file, anchor) = match target.split_once('#') {
                    Some((file, anchor)) => (file, Some(anchor)),
                    None => (target.as_str(), None),
                };
                let path = if file.is_empty() {
                    doc.clone()
                } else {
                    dir.join(file)
                };
                let at = format!("{}:{}: `{target}`", doc.display(), n + 1);
                if !path.exists() {
                    broken.push(format!("{at}: no file {}", path.display()));
                    continue;
                }
                if let Some(anchor) = anchor {
                    if path.extension().is_some_and(|ext| ext == "md")
                        && !anchors(&read(&path)).contains(anchor)
                    {
                        broken.push(format!("{at}: no heading with the anchor `#{anchor}`"));
                    }
                }
            }
        }
    }
    assert!(checked > 50, "only {checked} relative links found");
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn every_chapter_is_compiled_as_doctests() {
    let lib = read(&root().join("src/lib.rs"));
    let mut missing = Vec::new();
    for doc in user_docs() {
        let relative = doc.strip_prefix(root()).expect("inside the package");
        let include = format!("include_str!(\"../{}\")", relative.display());
        if !lib.contains(&include) {
            missing.push(relative.display().to_string());
        }
    }
    assert!(
        missing.is_empty(),
        "not included as doctests in src/lib.rs: {missing:?}"
    );
}

#[test]
fn code_blocks_are_compiled_and_read_right_outside_rustdoc() {
    const LANGUAGES: [&str; 5] = ["rust", "sh", "toml", "json", "text"];
    let mut problems = Vec::new();
    let mut rust_blocks = 0;
    for doc in user_docs() {
        let text = read(&doc);
        for block in blocks(&text) {
            let at = format!("{}:{}", doc.display(), block.line);
            let mut words = block.info.split(',').map(str::trim);
            let language = words.next().unwrap_or_default();
            if !LANGUAGES.contains(&language) {
                // rustdoc compiles a block without a language as Rust.
                problems.push(format!(
                    "{at}: say the block's language, one of {LANGUAGES:?}"
                ));
                continue;
            }
            if language != "rust" {
                continue;
            }
            rust_blocks += 1;
            if let Some(word) = words.find(|w| ["ignore", "text"].contains(w)) {
                problems.push(format!("{at}: `{word}` hides the block from the compiler"));
            }
            for (k, line) in block.body.iter().enumerate() {
                let trimmed = line.trim_start();
                if trimmed == "#" || trimmed.starts_with("# ") {
                    problems.push(format!(
                        "{}:{}: a hidden doctest line shows as it is on a repository page",
                        doc.display(),
                        block.line + k + 1
                    ));
                }
            }
        }
    }
    assert!(rust_blocks >= 15, "only {rust_blocks} Rust blocks found");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn no_intra_doc_links_outside_rustdoc() {
    let mut problems = Vec::new();
    for doc in user_docs() {
        let text = read(&doc);
        for (n, line) in prose(&text).iter().enumerate() {
            let at = format!("{}:{}", doc.display(), n + 1);
            // ``[`Error::Exhausted`]`` with nothing after it: rustdoc resolves it, a repository
            // page shows the brackets.
            let mut rest = line.as_str();
            while let Some(start) = rest.find("[`") {
                let after = &rest[start + 1..];
                let Some(end) = after.find("`]") else { break };
                let next = after[end + 2..].chars().next();
                let label = &after[..end + 1];
                let defined = text.contains(&format!("[{label}]: "));
                if !matches!(next, Some('(') | Some('[') | Some(':')) && !defined {
                    problems.push(format!("{at}: intra-doc link [{label}]"));
                }
                rest = &after[end + 2..];
            }
            for target in link_targets(line) {
                if target.contains("::") && !target.contains('/') {
                    problems.push(format!("{at}: intra-doc link target `{target}`"));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_operations_chapter_lists_the_metrics_of_the_api_docs() {
    let module = read(&root().join("sequence-runtime/src/observability/mod.rs"));
    let chapter = read(&root().join("docs/operations.md"));
    let rows: Vec<&str> = module
        .lines()
        .filter_map(|line| line.strip_prefix("//! "))
        .filter(|line| line.starts_with("| `mongo_sequence_"))
        .collect();
    assert!(
        rows.len() >= 14,
        "only {} metrics in the module",
        rows.len()
    );
    let differ: Vec<&&str> = rows.iter().filter(|row| !chapter.contains(**row)).collect();
    assert!(
        differ.is_empty(),
        "rows of `observability`'s metrics table that docs/operations.md does not have as they are:\n{}",
        differ.iter().map(|r| r.to_string()).collect::<Vec<_>>().join("\n")
    );
}

#[test]
fn the_checks_find_what_they_look_for() {
    let text = "# Title: `a` b\n\n```rust,no_run\n# hidden\nlet x = 1;\n```\nsee [x](y.md#z) and [`Error`]\n";
    let found = blocks(text);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].info, "rust,no_run");
    assert_eq!(found[0].body, ["# hidden", "let x = 1;"]);
    assert!(anchors(text).contains("title-a-b"));
    assert_eq!(link_targets(&prose(text)[6]), ["y.md#z"]);
    assert_eq!(
        slug("`Error::TransactionTimeout`"),
        "errortransactiontimeout"
    );
}

/// Every file of the repository, as a path relative to its root with `/` separators (build
/// output, dependencies and version control left out).
fn repository_files() -> Vec<String> {
    fn walk(dir: &Path, root: &Path, out: &mut Vec<String>) {
        for entry in fs::read_dir(dir).unwrap().flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if ["target", ".git", "node_modules"].contains(&name.as_str()) {
                continue;
            }
            if path.is_dir() {
                walk(&path, root, out);
            } else if let Ok(relative) = path.strip_prefix(root) {
                out.push(relative.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    let mut files = Vec::new();
    walk(&root(), &root(), &mut files);
    files
}

/// The source files ARCHITECTURE.md names in backticks (`store/literal.rs`,
/// `model/first_values.rs`): each is a path, or the end of one, that exists.
#[test]
fn every_file_the_architecture_names_exists() {
    let files = repository_files();
    let text = read(&root().join("ARCHITECTURE.md"));
    let mut named = BTreeSet::new();
    for (i, part) in text.split('`').enumerate() {
        let is_path = part.ends_with(".rs")
            && !part.contains(' ')
            && part
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_./-".contains(c));
        if i % 2 == 1 && is_path {
            named.insert(part.to_owned());
        }
    }
    assert!(named.len() >= 60, "{} paths named: {named:?}", named.len());
    let missing: Vec<&String> = named
        .iter()
        .filter(|path| {
            !files
                .iter()
                .any(|f| f == *path || f.ends_with(&format!("/{path}")))
        })
        .collect();
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md names files that do not exist: {missing:?}"
    );
}

/// The words ARCHITECTURE.md writes small numbers as.
fn number(word: &str) -> Option<usize> {
    let words = [
        "zero", "one", "two", "three", "four", "five", "six", "seven", "eight",
    ];
    words
        .iter()
        .position(|w| *w == word)
        .or_else(|| word.parse().ok())
}

/// The places ARCHITECTURE.md counts for a key (its table of the places that hold every key,
/// and the tools' copies) each hold every key, and the counts it writes match the table: each
/// file of a row names every `Key` variant (as `Key::Variant`, the variant, or the key's name),
/// so that a place that lost a key, or a row that no longer is one, shows.
#[test]
fn every_place_counted_for_a_key_holds_every_key() {
    use mongo_sequence::__private::Key;
    let text = read(&root().join("ARCHITECTURE.md"));
    let section = text
        .split("### Each key written out")
        .nth(1)
        .expect("a section `Each key written out`")
        .split("\n## ")
        .next()
        .unwrap();
    let rows: Vec<&str> = section
        .lines()
        .filter(|l| l.starts_with("| `") && l.contains(".rs`"))
        .map(|l| l.split('`').nth(1).unwrap())
        .collect();
    // "(the 8 above, the 3 impls of its type, its rules)" and "now 12 places in 10 files".
    let words: Vec<&str> = section.split_whitespace().collect();
    let after = |phrase: &[&str]| {
        words
            .windows(phrase.len() + 1)
            .find(|w| w[1..] == *phrase)
            .and_then(|w| number(w[0].trim_start_matches('(')))
    };
    let above = words
        .windows(3)
        .find(|w| w[0] == "(the" && w[2] == "above,")
        .and_then(|w| number(w[1]))
        .expect("the places above, counted");
    assert_eq!(above, rows.len(), "the table has {} rows", rows.len());
    let places = after(&["places", "in"]).expect("the places of a key, counted");
    assert_eq!(
        places,
        rows.len() + 3 + 1,
        "the rows, 3 impls and its rules"
    );
    let impls = [
        "sequence-derive/src/attr/value.rs",
        "sequence-derive/src/expand.rs",
    ];
    let files: BTreeSet<&str> = (rows.iter().copied())
        .chain(impls)
        .chain(["sequence-ui/tests/ui.rs", "sequence-rules/src/check/mod.rs"])
        .collect();
    let counted_files = words
        .windows(4)
        .find(|w| w[0] == "places" && w[1] == "in" && w[3] == "files")
        .and_then(|w| number(w[2]))
        .expect("the files of a key, counted");
    assert_eq!(counted_files, files.len(), "{files:?}");
    let more = after(&["more", "files:"]).expect("the tools' files, counted");
    let tools = [
        "sequence-runtime/src/store/sequence_record.rs",
        "sequence-cli/src/args/mod.rs",
    ];
    assert_eq!(more, tools.len());
    for file in rows.iter().copied().chain(tools) {
        let source = read(&root().join(file));
        for key in Key::ALL {
            let variant = format!("{key:?}");
            assert!(
                source.contains(&format!("Key::{variant}"))
                    || source.contains(&variant)
                    || source.contains(key.name()),
                "{file} does not hold the key `{}`",
                key.name()
            );
        }
    }
}

/// The source files a module's documentation (`//!`) names in backticks exist: a path, or the
/// end of one (`issue.rs`, `cache/refill.rs`). Names given as examples of what a platform
/// refuses are left out.
#[test]
fn every_file_a_module_doc_names_exists() {
    let files = repository_files();
    let exists = |path: &str| {
        files
            .iter()
            .any(|f| f == path || f.ends_with(&format!("/{path}")))
    };
    let mut named = 0;
    let mut missing = Vec::new();
    for file in files.iter().filter(|f| f.ends_with(".rs")) {
        let source = read(&root().join(file));
        for line in source.lines().filter(|l| l.trim_start().starts_with("//!")) {
            for (i, part) in line.split('`').enumerate() {
                let is_path = i % 2 == 1
                    && part.ends_with(".rs")
                    && part
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || "_./-".contains(c));
                if !is_path || line.contains("refuses") {
                    continue;
                }
                named += 1;
                if !exists(part) {
                    missing.push(format!("{file}: {part}"));
                }
            }
        }
    }
    assert!(named >= 30, "{named} files named by module docs");
    assert!(
        missing.is_empty(),
        "module docs name files that do not exist: {missing:?}"
    );
}
