//! The pure core (`src/domain`, `src/sources`) must not touch the Workers runtime: no `worker`,
//! `js_sys`, `wasm_bindgen` or `web_sys`. That is what lets `cargo test` cover it on the host.

use std::fs;
use std::path::Path;

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn core_modules_do_not_import_the_runtime() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in ["src/domain", "src/sources"] {
        rust_files(&root.join(dir), &mut files);
    }
    assert!(
        files.len() >= 5,
        "expected the core modules, found {files:?}"
    );
    let forbidden = [
        "worker::",
        "use worker",
        "js_sys",
        "wasm_bindgen",
        "web_sys",
    ];
    let mut offenders = Vec::new();
    for file in &files {
        let text = fs::read_to_string(file).unwrap();
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            if forbidden.iter().any(|f| code.contains(f)) {
                offenders.push(format!("{}:{}: {}", file.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "the pure core imports the runtime:\n{}",
        offenders.join("\n")
    );
}
